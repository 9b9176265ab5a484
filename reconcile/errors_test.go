package reconcile

import (
	"github.com/steady-go/steady/reconcile/conditions"

	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWrappersAreNilSafe(t *testing.T) {
	require.NoError(t, Terminal(nil))
	require.NoError(t, RetryAfter(nil, time.Second))
	// Being blocked is itself the failure, so Blocked never returns nil.
	err := Blocked("SecretMissing", nil)
	require.EqualError(t, err, "blocked: SecretMissing")
	require.EqualError(t, Blocked("", nil), "blocked: Blocked")
	// Methods on nil-wrapped values do not panic.
	require.Equal(t, "terminal error", ErrTerminal.Error())
	require.Equal(t, "retry after 0s", ErrRetryAfter.Error())
	require.Equal(t, "blocked: Blocked", ErrBlocked.Error())
}

func TestWrappersWorkWithErrorsIsAndAs(t *testing.T) {
	base := io.ErrUnexpectedEOF
	tests := []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"Terminal", Terminal(base), func(e error) bool { _, ok := errors.AsType[*terminalError](e); return ok }},
		{"Blocked", Blocked("X", base), func(e error) bool { b, ok := errors.AsType[*blockedError](e); return ok && b.Reason == "X" }},
		{"RetryAfter", RetryAfter(base, time.Minute), func(e error) bool {
			r, ok := errors.AsType[*retryAfterError](e)
			return ok && r.after == time.Minute
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.err, base)
			require.True(t, tt.is(tt.err))
			// Still found when wrapped again.
			require.True(t, tt.is(errors.Join(errors.New("outer"), tt.err)))
			require.Contains(t, tt.err.Error(), base.Error())
		})
	}
}

func TestRetryAfterNegativeIsZero(t *testing.T) {
	r, ok := errors.AsType[*retryAfterError](RetryAfter(io.EOF, -time.Second))
	require.True(t, ok)
	require.Zero(t, r.after)
}

// The error types stay unexported (as controller-runtime's terminal error
// does): a caller tells them apart with errors.Is and the sentinels, and
// reads a Blocked error's reason with BlockedReason.
func TestSentinelsMatchTheirWrappersOnly(t *testing.T) {
	base := io.ErrUnexpectedEOF
	made := map[error]error{
		ErrTerminal:   Terminal(base),
		ErrBlocked:    Blocked("SecretMissing", base),
		ErrRetryAfter: RetryAfter(base, time.Minute),
	}
	for sentinel, err := range made {
		for other, err2 := range made {
			require.Equal(t, sentinel == other, errors.Is(err2, sentinel), "%v is %v", err2, sentinel)
		}
		require.ErrorIs(t, fmt.Errorf("outer: %w", err), sentinel, "found when wrapped again")
		require.False(t, errors.Is(base, sentinel))
	}
	require.Equal(t, "SecretMissing", BlockedReason(fmt.Errorf("outer: %w", Blocked("SecretMissing", nil))))
	require.Equal(t, conditions.ReasonBlocked, BlockedReason(Blocked("", base)))
	require.Empty(t, BlockedReason(Terminal(base)))
	require.Empty(t, BlockedReason(nil))
}

// A reconciler that wraps a sentinel itself, a habit from errors.Is code,
// gets what the sentinel's constructor would give: a wrapped ErrTerminal
// is not retried, a wrapped ErrBlocked stalls at once with ReasonBlocked.
// The condition's message is the whole error's text.
func TestDecideTreatsAWrappedSentinelAsItsWrapper(t *testing.T) {
	d := decided(Result{}, fmt.Errorf("replicas -1: %w", ErrTerminal), 3, 5, testBackoff)
	require.True(t, d.terminal)
	require.Equal(t, conditions.ReasonTerminal, d.reason)
	require.Equal(t, "replicas -1: terminal error", d.message)

	d = decided(Result{}, fmt.Errorf("secret db: %w", ErrBlocked), 0, 5, testBackoff)
	require.Equal(t, stalledSet, d.stalled)
	require.Equal(t, conditions.ReasonBlocked, d.reason)
	require.Equal(t, "secret db: blocked: Blocked", d.message)
}
