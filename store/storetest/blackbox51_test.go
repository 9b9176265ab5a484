package storetest_test

// Does the conformance suite catch a broken backend? Each mutant below wraps
// memstore and breaks one documented promise of kv.Backend; the suite, run
// on it in a child process, must fail in the named subtest.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/store/storetest"
)

var mutants51 = map[string]struct {
	catchers []string
	m        func() *mutant
}{
	// "When every cond holds but w deletes an absent key, nothing is
	// written and the error wraps ErrNotFound."
	"deletes an absent key silently": {[]string{"Txn/DeleteAbsent"}, func() *mutant {
		return &mutant{txn: func(b kv.Backend, ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
			rev, err := b.Txn(ctx, conds, w)
			if errors.Is(err, kv.ErrNotFound) {
				l, lerr := b.List(ctx, "\x00", kv.ListOptions{Limit: 1})
				return l.Revision, lerr
			}
			return rev, err
		}}
	}},
	// "A value over MaxValueSize gives an error wrapping ErrTooLarge."
	"truncates a value over the limit": {[]string{"Txn/ValueSize"}, func() *mutant {
		return &mutant{txn: func(b kv.Backend, ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
			if len(w.Value) > kv.MaxValueSize {
				w.Value = w.Value[:kv.MaxValueSize]
			}
			return b.Txn(ctx, conds, w)
		}}
	}},
	// "a Txn that fails writes nothing and leaves the revision where it
	// was": a backend that bumps its revision on a failed cond.
	"advances the revision on a failed Txn": {[]string{"Txn/CreateIfAbsent", "Txn/FirstFailingCond"}, func() *mutant {
		return &mutant{txn: func(b kv.Backend, ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
			rev, err := b.Txn(ctx, conds, w)
			if errors.Is(err, kv.ErrCondFailed) {
				_, _ = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "\x00failed", Value: []byte("x")})
			}
			return rev, err
		}}
	}},
	// List: "at most opts.Limit of them (0 means no limit)".
	"ignores Limit": {[]string{"List/Pagination"}, func() *mutant {
		return &mutant{list: func(b kv.Backend, ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
			if opts.Limit < 0 {
				return b.List(ctx, prefix, opts)
			}
			opts.Limit = 0
			return b.List(ctx, prefix, opts)
		}}
	}},
	// "On ctx's end the channel is closed without an error event."
	"ends a cancelled watch with an error event": {[]string{"Watch/CancelClosesChannel"}, func() *mutant {
		return &mutant{watch: func(b kv.Backend, ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
			in, err := b.Watch(ctx, prefix, from)
			if err != nil {
				return nil, err
			}
			out := make(chan kv.Event, 1)
			go func() {
				defer close(out)
				for ev := range in {
					out <- ev
				}
				out <- kv.Event{Err: ctx.Err()}
			}()
			return out, nil
		}}
	}},
	// "When writes outside prefix advance the store revision, the watch
	// sends a Progress event carrying that revision."
	"sends no progress": {[]string{"Watch/ProgressForWritesOutsidePrefix"}, func() *mutant {
		return &mutant{mapEvents: func(_ int, ev kv.Event) (kv.Event, bool) {
			return ev, !ev.Progress
		}}
	}},
	// "A cancelled ctx ends any call with ctx's error."
	"reads with a cancelled ctx": {[]string{"Input/CancelledContext"}, func() *mutant {
		return &mutant{get: func(b kv.Backend, ctx context.Context, key string) (kv.KeyValue, error) {
			return b.Get(context.WithoutCancel(ctx), key)
		}}
	}},
	// Txn "applies w if and only if every cond holds, atomically": a
	// backend that checks the conds, then writes unconditionally, loses
	// updates under concurrent compare-and-swaps.
	"checks conds apart from the write": {[]string{"Concurrency/CASIncrementsLoseNothing"}, func() *mutant {
		return &mutant{txn: func(b kv.Backend, ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
			for i, c := range conds {
				var actual int64
				cur, err := b.Get(ctx, c.Key)
				switch {
				case err == nil && c.Target == kv.ModRevision:
					actual = cur.ModRevision
				case err == nil:
					actual = cur.CreateRevision
				case !errors.Is(err, kv.ErrNotFound):
					return 0, err
				}
				if actual != c.Revision {
					return 0, &kv.CondFailedError{Index: i, Cond: c, Actual: actual}
				}
			}
			runtime.Gosched() // the round trip between a check and a write
			return b.Txn(ctx, nil, w)
		}}
	}},
}

// storetest.Run: "checks that the backends newBackend returns keep the
// kv.Backend contract": each mutant breaks one promise and must fail the
// subtest that checks it.
func TestBlackbox51SuiteCatchesMoreBrokenBackends(t *testing.T) {
	if os.Getenv("STORETEST_MUTANT51") != "" {
		t.Skip("in a mutant child process")
	}
	if testing.Short() {
		t.Skip("starts a child test process per mutant")
	}
	for name, tc := range mutants51 {
		t.Run(name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0],
				"-test.run=^TestBlackbox51Mutant$/^(Get|List|Txn|Watch|Input|Concurrency)$")
			cmd.Env = append(os.Environ(), "STORETEST_MUTANT51="+name)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the suite passed a backend that %s:\n%s", name, out)
			for _, sub := range tc.catchers {
				require.Contains(t, string(out), "--- FAIL: TestBlackbox51Mutant/"+sub+" ", "a backend that %s", name)
			}
		})
	}
}

// TestBlackbox51Mutant is the child process of
// TestBlackbox51SuiteCatchesMoreBrokenBackends.
func TestBlackbox51Mutant(t *testing.T) {
	name := os.Getenv("STORETEST_MUTANT51")
	if name == "" {
		t.Skip("runs only as a child of TestBlackbox51SuiteCatchesMoreBrokenBackends")
	}
	tc, ok := mutants51[name]
	require.True(t, ok, "unknown mutant %q", name)
	storetest.Run(t, func(t *testing.T) kv.Backend {
		m := tc.m()
		m.Backend = memstore.New()
		return m
	})
}
