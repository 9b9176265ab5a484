package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/store/storetest"
)

// mutant wraps a correct backend and breaks one rule of the contract.
type mutant struct {
	kv.Backend
	get   func(b kv.Backend, ctx context.Context, key string) (kv.KeyValue, error)
	txn   func(b kv.Backend, ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error)
	list  func(b kv.Backend, ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error)
	watch func(b kv.Backend, ctx context.Context, prefix string, from int64) (<-chan kv.Event, error)
	// mapEvents rewrites or drops (ok false) the i-th event of a watch.
	mapEvents func(i int, ev kv.Event) (kv.Event, bool)
	// closes makes the backend an io.Closer whose Close ends its watches
	// without an error event and whose calls after it fail with an error
	// that is not kv.ErrClosed.
	closes bool
}

// closingMutant is a mutant with closes set.
type closingMutant struct {
	*mutant
	closed context.Context
	close  context.CancelFunc
}

var errClosedPlain = errors.New("closed")

func (c *closingMutant) Close() error { c.close(); return nil }

func (c *closingMutant) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if c.closed.Err() != nil {
		return kv.KeyValue{}, errClosedPlain
	}
	return c.mutant.Get(ctx, key)
}

func (c *closingMutant) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	if c.closed.Err() != nil {
		return kv.List{}, errClosedPlain
	}
	return c.mutant.List(ctx, prefix, opts)
}

func (c *closingMutant) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if c.closed.Err() != nil {
		return 0, errClosedPlain
	}
	return c.mutant.Txn(ctx, conds, w)
}

func (c *closingMutant) Watch(ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
	if c.closed.Err() != nil {
		return nil, errClosedPlain
	}
	wctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(c.closed, cancel)
	return c.mutant.Watch(wctx, prefix, from)
}

func (m *mutant) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if m.get != nil {
		return m.get(m.Backend, ctx, key)
	}
	return m.Backend.Get(ctx, key)
}

func (m *mutant) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if m.txn != nil {
		return m.txn(m.Backend, ctx, conds, w)
	}
	return m.Backend.Txn(ctx, conds, w)
}

func (m *mutant) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	if m.list != nil {
		return m.list(m.Backend, ctx, prefix, opts)
	}
	return m.Backend.List(ctx, prefix, opts)
}

func (m *mutant) Watch(ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
	if m.watch != nil {
		return m.watch(m.Backend, ctx, prefix, from)
	}
	in, err := m.Backend.Watch(ctx, prefix, from)
	if err != nil || m.mapEvents == nil {
		return in, err
	}
	out := make(chan kv.Event)
	go func() {
		defer close(out)
		i := 0
		for ev := range in {
			ev, ok := m.mapEvents(i, ev)
			if !ev.Progress {
				i++
			}
			if !ok {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
			}
		}
	}()
	return out, nil
}

// mutants maps a broken rule to the subtest that must catch it.
var mutants = map[string]struct {
	catchers []string
	m        func() *mutant
}{
	"ignores conds": {[]string{"Txn/CreateIfAbsent", "Txn/FenceOnOtherKey"}, func() *mutant {
		return &mutant{txn: func(b kv.Backend, ctx context.Context, _ []kv.Cond, w kv.Write) (int64, error) {
			return b.Txn(ctx, nil, w)
		}}
	}},
	"reports the last failing cond": {[]string{"Txn/FirstFailingCond"}, func() *mutant {
		return &mutant{txn: func(b kv.Backend, ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
			rev, err := b.Txn(ctx, conds, w)
			var cf *kv.CondFailedError
			if errors.As(err, &cf) {
				for i := len(conds) - 1; i > cf.Index; i-- {
					if _, err2 := b.Txn(ctx, conds[i:i+1], kv.Write{Kind: kv.WriteDelete, Key: "\x00never"}); errors.Is(err2, kv.ErrCondFailed) {
						return 0, &kv.CondFailedError{Index: i, Cond: conds[i], Actual: err2.(*kv.CondFailedError).Actual}
					}
				}
			}
			return rev, err
		}}
	}},
	"does not pin list pages": {[]string{"List/RevisionPinned", "List/PinnedToOlderRevision"}, func() *mutant {
		return &mutant{list: func(b kv.Backend, ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
			pinned := opts.Revision
			opts.Revision = 0
			res, err := b.List(ctx, prefix, opts)
			if pinned != 0 {
				res.Revision = pinned // and lies about it
			}
			return res, err
		}}
	}},
	"watches from fromRevision inclusive": {[]string{"Watch/StrictlyAfterFromRevision"}, func() *mutant {
		return &mutant{watch: func(b kv.Backend, ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
			return b.Watch(ctx, prefix, max(from-1, 0))
		}}
	}},
	"loses Prev": {[]string{"Watch/Prev"}, func() *mutant {
		return &mutant{mapEvents: func(_ int, ev kv.Event) (kv.Event, bool) {
			ev.Prev = kv.KeyValue{}
			return ev, true
		}}
	}},
	"reuses the buffer of a value it returned": {[]string{"Get/ValuesReturnedStay"}, func() *mutant {
		var scratch []byte // one buffer for every value read and written
		return &mutant{
			get: func(b kv.Backend, ctx context.Context, key string) (kv.KeyValue, error) {
				kv, err := b.Get(ctx, key)
				scratch = append(scratch[:0], kv.Value...)
				kv.Value = scratch[:len(kv.Value):len(kv.Value)]
				return kv, err
			},
			txn: func(b kv.Backend, ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
				copy(scratch, w.Value)
				return b.Txn(ctx, conds, w)
			},
		}
	}},
	"closes without kv.ErrClosed": {[]string{"Close/EndsWatchesWithErrClosed", "Close/CallsAfterCloseFail", "Close/ConcurrentClose"}, func() *mutant {
		return &mutant{closes: true}
	}},
	"skips an event": {[]string{"Watch/OrderAndContent", "Concurrency/WritersAndWatchers"}, func() *mutant {
		return &mutant{mapEvents: func(i int, ev kv.Event) (kv.Event, bool) {
			return ev, ev.Progress || i != 3
		}}
	}},
	// Watch: "0 is no special case: a watch from 0 replays every change
	// from revision 1 on"; "a List followed by a Watch from the List's
	// Revision misses no write made in between, even on an empty store".
	"starts a watch from 0 from now": {[]string{"Watch/FromZero", "Watch/ListThenWatchOnAFreshStore"}, func() *mutant {
		return &mutant{watch: func(b kv.Backend, ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
			if from == 0 {
				l, err := b.List(ctx, "\x00none", kv.ListOptions{})
				if err != nil {
					return nil, err
				}
				from = l.Revision
			}
			return b.Watch(ctx, prefix, from)
		}}
	}},
	"starts a watch from 0 after revision 1": {[]string{"Watch/FromZero", "Watch/ListThenWatchOnAFreshStore"}, func() *mutant {
		return &mutant{watch: func(b kv.Backend, ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
			return b.Watch(ctx, prefix, max(from, 1))
		}}
	}},
	"fails a watch from 0 as expired": {[]string{"Watch/FromZero"}, func() *mutant {
		return &mutant{watch: func(b kv.Backend, ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
			if from != 0 {
				return b.Watch(ctx, prefix, from)
			}
			ch := make(chan kv.Event, 1)
			ch <- kv.Event{Err: fmt.Errorf("mutant: history gone: %w", kv.ErrExpired)}
			close(ch)
			return ch, nil
		}}
	}},
	// etcd's watch without WithRev: it starts when the server gets it, so
	// a write after the listing and before the watch is lost.
	"starts a watch from the current revision from now": {[]string{"Watch/FromCurrentRevision", "Watch/ListThenWatchOnAFreshStore"}, func() *mutant {
		return &mutant{watch: func(b kv.Backend, ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
			l, err := b.List(ctx, "\x00none", kv.ListOptions{})
			if err != nil {
				return nil, err
			}
			return b.Watch(ctx, prefix, max(from, l.Revision))
		}}
	}},
	"skips the first event of a watch": {[]string{"Watch/FromZero", "Watch/FromCurrentRevision", "Watch/ListThenWatchOnAFreshStore"}, func() *mutant {
		return &mutant{mapEvents: func(i int, ev kv.Event) (kv.Event, bool) {
			return ev, ev.Progress || i != 0
		}}
	}},
	// List: "a Continue that is not under prefix" gives ErrInvalid
	// (memstore and boltstore listed from the prefix's start, or nothing).
	"ignores a Continue outside the prefix": {[]string{"List/ContinueOutsidePrefix"}, func() *mutant {
		return &mutant{list: func(b kv.Backend, ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
			if !strings.HasPrefix(opts.Continue, prefix) {
				if opts.Continue > prefix {
					return kv.List{Revision: opts.Revision}, nil
				}
				opts.Continue = ""
			}
			return b.List(ctx, prefix, opts)
		}}
	}},
}

// TestSuiteCatchesBrokenBackends runs the suite, in a child process, against
// backends that each break one rule, and requires it to fail where it
// should: a suite that passes everything proves nothing.
func TestSuiteCatchesBrokenBackends(t *testing.T) {
	if os.Getenv("STORETEST_MUTANT") != "" {
		t.Skip("in a mutant child process")
	}
	if testing.Short() {
		t.Skip("starts a child test process per mutant")
	}
	for name, tc := range mutants {
		t.Run(name, func(t *testing.T) {
			// Only the subtests that must catch the mutant: another may wait
			// WaitTimeout for an event the mutant lost.
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+catchersPattern("TestMutant", tc.catchers))
			cmd.Env = append(os.Environ(), "STORETEST_MUTANT="+name)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the suite passed a backend that %s:\n%s", name, out)
			for _, sub := range tc.catchers {
				require.Contains(t, string(out), "--- FAIL: TestMutant/"+sub+" ", "a backend that %s", name)
			}
		})
	}
}

// catchersPattern is the -test.run pattern of the subtests catchers
// ("Group/Name") of the suite run by the test top.
func catchersPattern(top string, catchers []string) string {
	var groups, names []string
	for _, c := range catchers {
		g, n, _ := strings.Cut(c, "/")
		groups, names = append(groups, regexp.QuoteMeta(g)), append(names, regexp.QuoteMeta(n))
	}
	return "^" + top + "$/^(" + strings.Join(groups, "|") + ")$/^(" + strings.Join(names, "|") + ")$"
}

// TestMutant is the child process of TestSuiteCatchesBrokenBackends.
func TestMutant(t *testing.T) {
	name := os.Getenv("STORETEST_MUTANT")
	if name == "" {
		t.Skip("runs only as a child of TestSuiteCatchesBrokenBackends")
	}
	tc, ok := mutants[name]
	require.True(t, ok, "unknown mutant %q", name)
	storetest.Run(t, func(t *testing.T) kv.Backend {
		m := tc.m()
		m.Backend = memstore.New()
		if m.closes {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			return &closingMutant{mutant: m, closed: ctx, close: cancel}
		}
		return m
	})
}
