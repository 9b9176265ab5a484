package reconcile

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// twoBackends is a Loop over the primary kind App in one memstore and a
// second kind, Child, in another, each with its cache as a source. The
// child source maps no child to a key, so a pass runs again only because
// of its own RequeueAfterWrite. Before the Loop starts, the store named
// ahead is written n times, so that its revisions run far ahead of the
// other's.
type twoBackends struct {
	prim, kids *env
	mu         sync.Mutex
	runs       []time.Time
	fresh      []bool
}

func newTwoBackends(t *testing.T, ahead string, n int) *twoBackends {
	t.Helper()
	tb := &twoBackends{prim: newEnv(t, "App", memstore.New()), kids: newEnv(t, "Child", memstore.New())}
	e := tb.prim
	if ahead == "kids" {
		e = tb.kids
	}
	for i := range n {
		e.create(t, "user", &app{Meta: store.Meta{Name: "filler-" + strconv.Itoa(i)}})
	}
	tb.prim.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
	return tb
}

// record notes one pass of a.
func (tb *twoBackends) record(ctx context.Context, key string) (n int) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if key != "a" {
		return 0
	}
	tb.runs = append(tb.runs, time.Now())
	tb.fresh = append(tb.fresh, FreshReadNeeded(ctx))
	return len(tb.runs)
}

// passes returns when each pass of a ran, and whether it was told to read
// fresh.
func (tb *twoBackends) passes() ([]time.Time, []bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return slices.Clone(tb.runs), slices.Clone(tb.fresh)
}

func (tb *twoBackends) loop(t *testing.T, r Func[string]) *Loop[string] {
	none := func(*app) []string { return nil }
	return mustNew(t, r, Sources(FromStore(tb.prim.cache, tb.prim.st), FromCacheMapped(tb.kids.cache, none)),
		append(fixedBackoff(), WithFieldManager("app"))...)
}

// A Loop whose reconcile writes to a second store waits, after
// RequeueAfterWrite, for the cache of the store it wrote, and compares a
// revision only with the revisions of the backend it came from: the two
// stores' revisions are unrelated counters.
func TestReadYourWritesWaitsOnTheBackendWritten(t *testing.T) {
	t.Run("a write to the second store", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// The child store is 100 revisions ahead: its write's revision
			// is one the primary cache will never reach.
			tb := newTwoBackends(t, "kids", 100)
			defer tb.prim.stop()
			defer tb.kids.stop()
			var sawChild bool
			l := tb.loop(t, func(ctx context.Context, key string) (Result, error) {
				switch tb.record(ctx, key) {
				case 1:
					if _, err := tb.kids.st.As("app").Create(ctx, &app{Meta: store.Meta{Name: "a-0"}}); err != nil {
						return Result{}, err
					}
					return Result{RequeueAfterWrite: true}, nil
				case 2:
					_, sawChild = tb.kids.cache.Get("a-0")
				}
				return Result{}, nil
			})
			stop := start(t, l)
			synctest.Wait()
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			runs, fresh := tb.passes()
			require.NoError(t, stop())
			require.Len(t, runs, 2, "the second pass runs as soon as the child cache holds the write, "+
				"not after the read-your-writes timeout")
			require.Equal(t, []bool{false, false}, fresh, "no wait timed out")
			require.True(t, sawChild, "the second pass reads its write from the child cache")
		})
	})
	t.Run("a write to the primary store", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// The primary store is 100 revisions ahead: neither the
			// Loop's Reconciling write nor the reconcile's status write
			// is a revision the child cache will reach.
			tb := newTwoBackends(t, "prim", 100)
			defer tb.prim.stop()
			defer tb.kids.stop()
			start0 := time.Now()
			l := tb.loop(t, func(ctx context.Context, key string) (Result, error) {
				if tb.record(ctx, key) != 1 {
					return Result{}, nil
				}
				cached, _ := tb.prim.cache.Get(key)
				o := copyOf(cached)
				o.Status.Replicas = 1
				if _, err := tb.prim.st.As("app").UpdateStatus(ctx, o); err != nil {
					return Result{}, err
				}
				return Result{RequeueAfterWrite: true}, nil
			})
			stop := start(t, l)
			synctest.Wait()
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			runs, fresh := tb.passes()
			require.NoError(t, stop())
			require.Len(t, runs, 2, "both passes ran within 100ms: no wait for the child cache")
			require.Less(t, runs[0].Sub(start0), 100*time.Millisecond,
				"the first pass did not wait for the child cache to reach the Reconciling write")
			require.Equal(t, []bool{false, false}, fresh, "no wait timed out")
		})
	})
}
