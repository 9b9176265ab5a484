package reconcile

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
)

var errDeposed = errors.New("deposed")

// handElector grants terms when the test says so. Each grant takes the
// leader key as it is in the backend; end cancels the current term.
type handElector struct {
	b      kv.Backend
	grants chan struct{}
	mu     sync.Mutex
	end    context.CancelCauseFunc
}

const leaseKey = "/lease/app"

func (e *handElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	select {
	case <-ctx.Done():
		return nil, store.Fence{}, ctx.Err()
	case <-e.grants:
	}
	kv, err := e.b.Get(ctx, leaseKey)
	if err != nil {
		return nil, store.Fence{}, err
	}
	f := store.Fence{Key: leaseKey, Revision: kv.CreateRevision}
	term, cancel := context.WithCancelCause(ctx)
	e.mu.Lock()
	e.end = cancel
	e.mu.Unlock()
	return lease.WithFence(term, f), f, nil
}

func (e *handElector) endTerm() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.end(errDeposed)
}

// takeOver deletes and recreates the leader key, as a new leader would.
func takeOver(t *testing.T, b kv.Backend) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.Get(ctx, leaseKey); err == nil {
		_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: leaseKey})
		require.NoError(t, err)
	}
	_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: leaseKey, Value: []byte("other")})
	require.NoError(t, err)
}

// No write from a stale term is ever accepted: a reconcile that outlives
// its term writes with the old fence and the store rejects it.
func TestLeadershipFencesStaleTerms(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		takeOver(t, e.b)
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		el := &handElector{b: e.b, grants: make(chan struct{})}

		type attempt struct {
			phase string
			err   error
			cause error
		}
		var mu sync.Mutex
		var attempts []attempt
		var terms int
		proceed := make(chan struct{})
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			mu.Lock()
			terms++
			n := terms
			mu.Unlock()
			if n == 1 {
				<-proceed // the term goes stale meanwhile
			}
			_, fenced := store.FenceFrom(ctx)
			require.True(t, fenced, "reconciles run under the term's fence")
			cached, _ := e.cache.Get(key)
			o := copyOf(cached)
			o.Status.Phase = "term" + string(rune('0'+n))
			_, err := e.st.As("app").UpdateStatus(ctx, o)
			mu.Lock()
			attempts = append(attempts, attempt{o.Status.Phase, err, context.Cause(ctx)})
			mu.Unlock()
			return Result{}, err
		})
		m := NewMemMetrics()
		l := mustNew(t, r, FromStore(e.cache, e.st), append(fixedBackoff(), WithFieldManager("app"), WithElector(el), WithDrainTimeout(time.Minute), WithMetrics(m))...)
		stop := start(t, l)
		time.Sleep(time.Hour)
		synctest.Wait()
		require.False(t, l.Leading())
		mu.Lock()
		require.Zero(t, terms, "only the leader runs workers")
		mu.Unlock()

		el.grants <- struct{}{}
		synctest.Wait()
		require.True(t, l.Leading())
		takeOver(t, e.b) // another candidate leads now
		close(proceed)   // the first term's reconcile writes late
		synctest.Wait()
		mu.Lock()
		require.Len(t, attempts, 1)
		require.ErrorIs(t, attempts[0].err, store.ErrFenced, "the stale term's write is rejected")
		mu.Unlock()
		require.Equal(t, 1, m.FenceRejections("test"), "the rejection is counted")
		require.Equal(t, "", e.get(t, "a").Status.Phase)

		el.endTerm()
		synctest.Wait()
		require.False(t, l.Leading())
		el.grants <- struct{}{} // a fresh term: fresh queue, every key again
		synctest.Wait()
		mu.Lock()
		require.Len(t, attempts, 2)
		require.NoError(t, attempts[1].err)
		mu.Unlock()
		require.Equal(t, "term2", e.get(t, "a").Status.Phase)
		require.NoError(t, stop())
	})
}

// When a term ends, in-flight reconciles are cancelled with the term's
// cause, and workers stop taking keys until the next term.
func TestTermEndCancelsInFlightWithTheTermsCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		takeOver(t, e.b)
		el := &handElector{b: e.b, grants: make(chan struct{})}
		causes := make(chan error, 10)
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return Result{}, ctx.Err()
		})
		m := NewMemMetrics()
		l := mustNew(t, r, keySet("a"), WithElector(el), WithMetrics(m))
		stop := start(t, l)
		synctest.Wait()
		el.grants <- struct{}{}
		synctest.Wait()
		require.Equal(t, PhaseRunning, l.Inspect("a").Phase)
		el.endTerm()
		synctest.Wait()
		require.ErrorIs(t, <-causes, errDeposed)
		require.False(t, l.Leading())
		require.Zero(t, m.Errors("test"), "a reconcile cut short by the end of a term is not a failure")
		require.NoError(t, stop())
	})
}

// A parent deleted while no Loop leads is cleaned up by the next term,
// though its deletion's hint was dropped (the pending set is off here, as
// when it overflowed or the hint came to another process) and the parent
// is gone from the primary cache: FromOwned lists, at term start, the
// owners of the children it sees. No key lister of the user's is needed.
func TestNewTermCleansUpAfterAParentDeletedWithoutALeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		kids := newEnv(t, "Child", e.b) // the children, in the same backend
		defer kids.stop()
		takeOver(t, e.b)
		el := &handElector{b: e.b, grants: make(chan struct{})}
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			parent, ok := e.cache.Get(key)
			if !ok { // deleted: remove its children
				for _, c := range kids.cache.List(nil) {
					if slices.ContainsFunc(c.Meta.Owners, func(o store.OwnerRef) bool { return o.Controller && o.Name == key }) {
						if _, err := kids.st.As("app").Delete(ctx, c.Meta.Name); store.IgnoreNotFound(err) != nil {
							return Result{}, err
						}
					}
				}
				return Result{}, nil
			}
			if _, ok := kids.cache.Get(key + "-child"); ok {
				return Result{}, nil
			}
			child := &app{Meta: store.Meta{Name: key + "-child", Owners: []store.OwnerRef{
				{Kind: "App", Name: key, UID: parent.Meta.UID, Controller: true},
			}}}
			_, err := kids.st.As("app").Create(ctx, child)
			return Result{}, err
		})
		l := mustNew(t, r, Sources(FromStore(e.cache, e.st), FromOwned(kids.cache, "App")),
			append(fixedBackoff(), WithFieldManager("app"), WithElector(el))...)
		l.pendingCap = 0 // every hint while no term runs is dropped
		stop := start(t, l)
		synctest.Wait()

		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		el.grants <- struct{}{}
		synctest.Wait()
		_, ok := kids.cache.Get("a-child")
		require.True(t, ok, "the first term creates the child")

		el.endTerm()
		synctest.Wait()
		require.False(t, l.Leading())
		_, err := e.st.As("user").Delete(context.Background(), "a")
		require.NoError(t, err)
		synctest.Wait()
		_, ok = kids.cache.Get("a-child")
		require.True(t, ok, "nobody leads: nobody cleans up")

		el.grants <- struct{}{}
		synctest.Wait()
		require.True(t, l.Leading())
		_, ok = kids.cache.Get("a-child")
		require.False(t, ok, "the new term reconciles the deleted parent and removes its child")
		require.NoError(t, stop())
	})
}
