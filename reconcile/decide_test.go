package reconcile

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

var errBoom = errors.New("boom")

// testBackoff is 10ms·2^(n-1), a deterministic stand-in for backoff.Policy.
func testBackoff(n int) time.Duration { return 10 * time.Millisecond << min(n-1, 20) }

// One test per row of the result table (DESIGN.md, "reconcile").

func TestDecideNilResetsAndClearsStalled(t *testing.T) {
	d := decided(Result{}, nil, 4, 5, testBackoff)
	require.Equal(t, decision{failures: 0, next: nextOnHint, stalled: stalledClear, result: resultSuccess}, d)
}

func TestDecideRequeueKeepsFailuresAndWaitsForWrite(t *testing.T) {
	d := decided(Result{RequeueAfterWrite: true}, nil, 3, 5, testBackoff)
	require.Equal(t, decision{failures: 3, next: nextAfterWrite, stalled: stalledKeep, result: resultRequeue}, d)
	require.False(t, d.failed, "Requeue is not a failure")
}

func TestDecideRequeueAfterResetsAndWaits(t *testing.T) {
	d := decided(Result{RequeueAfter: time.Minute}, nil, 3, 5, testBackoff)
	require.Equal(t, decision{failures: 0, next: nextAfter, delay: time.Minute, stalled: stalledClear, result: resultRequeueAfter}, d)
	// RequeueAfter wins over Requeue.
	require.Equal(t, d, decided(Result{RequeueAfterWrite: true, RequeueAfter: time.Minute}, nil, 3, 5, testBackoff))
}

func TestDecideErrorCountsAndBacksOff(t *testing.T) {
	// Failures below the threshold: backoff, Stalled kept.
	d := decided(Result{}, errBoom, 0, 5, testBackoff)
	require.Equal(t, 1, d.failures)
	require.True(t, d.failed)
	require.Equal(t, nextAfter, d.next)
	require.Equal(t, 10*time.Millisecond, d.delay)
	require.Equal(t, stalledKeep, d.stalled)
	require.False(t, d.warn)
	require.Equal(t, resultError, d.result)

	// The 5th consecutive failure sets Stalled.
	d = decided(Result{}, errBoom, 4, 5, testBackoff)
	require.Equal(t, 5, d.failures)
	require.Equal(t, 160*time.Millisecond, d.delay)
	require.Equal(t, stalledSet, d.stalled)
	require.Equal(t, conditions.ReasonFailing, d.reason)
	require.Equal(t, "boom", d.message)

	// With RequeueAfter: max(backoff, RequeueAfter), and a warning.
	d = decided(Result{RequeueAfter: time.Second}, errBoom, 0, 5, testBackoff)
	require.Equal(t, time.Second, d.delay)
	require.Equal(t, 10*time.Millisecond, d.backoff)
	require.True(t, d.warn)
	d = decided(Result{RequeueAfter: time.Millisecond}, errBoom, 3, 5, testBackoff)
	require.Equal(t, 80*time.Millisecond, d.delay, "backoff wins when longer")

	// Requeue with an error is also warned about, and follows the err row.
	d = decided(Result{RequeueAfterWrite: true}, errBoom, 0, 5, testBackoff)
	require.True(t, d.warn)
	require.Equal(t, nextAfter, d.next)
}

func TestDecideBlockedStallsAtOnce(t *testing.T) {
	d := decided(Result{}, Blocked("SecretMissing", errBoom), 0, 5, testBackoff)
	require.Equal(t, 1, d.failures)
	require.True(t, d.failed)
	require.Equal(t, nextAfter, d.next)
	require.Equal(t, 10*time.Millisecond, d.delay)
	require.Equal(t, stalledSet, d.stalled)
	require.Equal(t, "SecretMissing", d.reason)
	require.Equal(t, "boom", d.message, "the message is the wrapped error; the reason is not repeated")

	d = decided(Result{}, RetryAfter(Blocked("NoCapacity", nil), time.Minute), 0, 5, testBackoff)
	require.Equal(t, "NoCapacity", d.reason)
	require.Equal(t, "blocked", d.message, "without a wrapped error")
	require.Equal(t, time.Minute, d.delay)
}

func TestDecideRetryAfterTakesTheLonger(t *testing.T) {
	d := decided(Result{}, RetryAfter(errBoom, time.Minute), 0, 5, testBackoff)
	require.Equal(t, 1, d.failures)
	require.Equal(t, time.Minute, d.delay)
	require.Equal(t, stalledKeep, d.stalled)

	d = decided(Result{}, RetryAfter(errBoom, time.Millisecond), 2, 5, testBackoff)
	require.Equal(t, 40*time.Millisecond, d.delay, "backoff wins when longer")

	// As for err: the 5th failure stalls.
	d = decided(Result{}, RetryAfter(errBoom, time.Millisecond), 4, 5, testBackoff)
	require.Equal(t, stalledSet, d.stalled)
	require.Equal(t, conditions.ReasonFailing, d.reason)
}

func TestDecideTerminalStallsWithoutRetry(t *testing.T) {
	called := false
	bo := func(int) time.Duration { called = true; return time.Hour }
	d := decided(Result{}, Terminal(errBoom), 3, 5, bo)
	require.False(t, called, "Terminal consults no backoff")
	require.Equal(t, decision{failures: 0, terminal: true, next: nextOnHint, stalled: stalledSet,
		reason: conditions.ReasonTerminal, message: "boom", result: resultError}, d)

	// With RequeueAfter: runs after it, without a warning (the table allows it).
	d = decided(Result{RequeueAfter: time.Hour}, Terminal(errBoom), 3, 5, bo)
	require.Equal(t, nextAfter, d.next)
	require.Equal(t, time.Hour, d.delay)
	require.False(t, d.warn)
	// Requeue has no meaning with Terminal: warned.
	require.True(t, decided(Result{RequeueAfterWrite: true}, Terminal(errBoom), 0, 5, bo).warn)
}

func TestDecideNestedWrappers(t *testing.T) {
	// Terminal wins over everything inside it.
	d := decided(Result{}, Terminal(Blocked("X", errBoom)), 0, 5, testBackoff)
	require.True(t, d.terminal)
	require.Equal(t, nextOnHint, d.next)
	// Blocked and RetryAfter combine.
	d = decided(Result{}, Blocked("X", RetryAfter(errBoom, time.Minute)), 0, 5, testBackoff)
	require.Equal(t, stalledSet, d.stalled)
	require.Equal(t, "X", d.reason)
	require.Equal(t, time.Minute, d.delay)
}

func TestDecideEdgeInputs(t *testing.T) {
	// stallAfter ≤ 0 is treated as 1.
	require.Equal(t, stalledSet, decided(Result{}, errBoom, 0, 0, testBackoff).stalled)
	// Failure count overflow is safe.
	d := decided(Result{}, errBoom, math.MaxInt, 5, testBackoff)
	require.Equal(t, 1, d.failures)
	// Negative delays are clamped.
	d = decided(Result{RequeueAfter: -time.Second}, nil, 0, 5, testBackoff)
	require.Equal(t, nextOnHint, d.next)
	d = decided(Result{}, errBoom, 0, 5, func(int) time.Duration { return -time.Second })
	require.Zero(t, d.delay)
}

func FuzzDecide(f *testing.F) {
	f.Add(false, int64(0), uint8(0), 0, 5, int64(0))
	f.Add(true, int64(time.Second), uint8(1), 3, 5, int64(time.Minute))
	f.Add(false, int64(-1), uint8(4), math.MaxInt, 0, int64(-5))
	f.Fuzz(func(t *testing.T, requeue bool, after int64, kind uint8, failures, stallAfter int, ra int64) {
		if failures < 0 {
			failures = -failures
			if failures < 0 {
				failures = 0
			}
		}
		var err error
		switch kind % 5 {
		case 1:
			err = errBoom
		case 2:
			err = Blocked("R", errBoom)
		case 3:
			err = RetryAfter(errBoom, time.Duration(ra))
		case 4:
			err = Terminal(errBoom)
		}
		res := Result{RequeueAfterWrite: requeue, RequeueAfter: time.Duration(after)}
		d := decided(res, err, failures, stallAfter, testBackoff)
		require.GreaterOrEqual(t, d.delay, time.Duration(0))
		require.GreaterOrEqual(t, d.failures, 0)
		if d.failed {
			require.Equal(t, nextAfter, d.next, "a failure is always retried")
			require.GreaterOrEqual(t, d.delay, d.backoff)
			require.GreaterOrEqual(t, d.delay, max(res.RequeueAfter, 0))
		}
		if err == nil {
			require.NotEqual(t, stalledSet, d.stalled, "success never stalls")
		}
		if d.stalled == stalledSet {
			require.NotEmpty(t, d.reason)
		}
	})
}

func TestRequeueUnwrittenBacksOffWithoutFailing(t *testing.T) {
	d := decided(Result{RequeueAfterWrite: true}, nil, 3, 5, testBackoff)
	u := unwritten(d, false, 2, testBackoff)
	require.Equal(t, decision{failures: 3, requeues: 3, next: nextAfter, delay: 40 * time.Millisecond,
		backoff: 40 * time.Millisecond, stalled: stalledKeep, result: resultRequeue}, u)
	require.False(t, u.failed, "not a failure")
	wrote := d
	wrote.failures = 0
	require.Equal(t, wrote, unwritten(d, true, 2, testBackoff), "a pass that wrote waits for its write, and resets the failures")
	ok := decided(Result{}, nil, 0, 5, testBackoff)
	require.Equal(t, ok, unwritten(ok, false, 2, testBackoff), "other rows reset the count")
	require.Equal(t, 1, unwritten(d, false, math.MaxInt, testBackoff).requeues, "overflow-safe")
}

// A revision conflict is a retry, not a failure: the count of failures and
// Stalled stay as they are, and it is paced like a Requeue that wrote
// nothing (the n-th retry in a row waits backoff(n)), whatever the pass
// wrote, and no earlier than a RequeueAfter returned with it. A field
// ownership conflict, a panic, and the wrappers that say what the
// reconciler wants are failures as before.
func TestDecideRevisionConflictIsARetry(t *testing.T) {
	conflict := fmt.Errorf("status of a: %w", store.ErrConflict)
	for _, wrote := range []bool{false, true} {
		d := unwritten(decided(Result{}, conflict, 4, 5, testBackoff), wrote, 2, testBackoff)
		require.Equal(t, decision{failures: 4, requeues: 3, next: nextAfter, delay: 40 * time.Millisecond, backoff: 40 * time.Millisecond,
			stalled: stalledKeep, conflict: true, result: resultError, message: conflict.Error()}, d)
		require.False(t, d.failed)
	}
	d := unwritten(decided(Result{RequeueAfter: time.Second}, conflict, 0, 5, testBackoff), false, 0, testBackoff)
	require.Equal(t, time.Second, d.delay)
	require.True(t, d.warn)

	for _, err := range []error{
		&ownership.ConflictError{Conflicts: []ownership.Conflict{{Manager: "other", Path: diff.MustParsePath(".spec.replicas")}}},
		errors.Join(conflict, &ownership.ConflictError{}),
		&PanicError{Value: conflict},
		Blocked("Busy", conflict),
		RetryAfter(conflict, time.Second),
	} {
		d := decided(Result{}, err, 4, 5, testBackoff)
		require.True(t, d.failed, "%v", err)
		require.Equal(t, stalledSet, d.stalled, "%v", err)
	}
}

// unwritten is requeueUnwritten on a copy of d.
func unwritten(d decision, wrote bool, requeues int, backoff func(n int) time.Duration) decision {
	requeueUnwritten(&d, wrote, requeues, backoff)
	return d
}

// decided is decide's decision.
func decided(res Result, err error, failures, stallAfter int, backoff func(n int) time.Duration) decision {
	var d decision
	decide(&d, res, err, failures, stallAfter, backoff)
	return d
}
