package reconcile

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// A hint from a channel source that comes before the first term (here,
// while a cache is still syncing) waits for the term and is reconciled
// then: a channel source lists nothing, so a dropped hint would be lost for
// good.
func TestHintBeforeTheFirstTermRunsInIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan string)
		gate := &gatedSource{synced: make(chan struct{})}
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, Sources[string](gate, FromChannel(ch)))
		stop := start(t, l)
		synctest.Wait()
		ch <- "a" // the cache is not warm yet: no term runs
		synctest.Wait()
		require.Zero(t, s.count("a"))
		close(gate.synced)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "the hint before the first term is reconciled in it")
		require.NoError(t, stop())
	})
}

// A hint that comes between terms (leadership lost, not yet regained) is
// reconciled once in the next term, with the keys the term lists.
func TestHintBetweenTermsRunsInTheNextTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		takeOver(t, e.b)
		el := &handElector{b: e.b, grants: make(chan struct{})}
		ch := make(chan string)
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, Sources(keySet("listed"), FromChannel(ch)), WithElector(el))
		stop := start(t, l)
		synctest.Wait()
		ch <- "early" // before leadership
		synctest.Wait()
		el.grants <- struct{}{}
		synctest.Wait()
		require.Equal(t, 1, s.count("early"))
		require.Equal(t, 1, s.count("listed"))
		el.endTerm()
		synctest.Wait()
		require.False(t, l.Leading())
		ch <- "a"
		ch <- "listed" // also listed by the next term: runs once
		l.Add("a")
		l.AddLow("b")
		synctest.Wait()
		require.Zero(t, s.count("a"))
		el.grants <- struct{}{}
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "a hint between terms runs in the next term, once")
		require.Equal(t, 1, s.count("b"))
		require.Equal(t, 2, s.count("listed"), "a key both pending and listed runs once")
		require.Equal(t, 1, s.count("early"), "pending keys are taken once")
		require.NoError(t, stop())
	})
}

// Keys added while no term runs are kept up to the cap; past it they are
// dropped, without blocking the source, and the first drop is logged at
// Warn once per gap between terms.
func TestPendingKeysAreCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		gate := &gatedSource{synced: make(chan struct{})}
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, gate, WithLogger(newLogger(&logs)))
		l.pendingCap = 3
		stop := start(t, l)
		synctest.Wait()
		for _, k := range []string{"a", "b", "a", "c", "d", "e"} {
			l.Add(k) // must not block
		}
		require.Equal(t, 1, strings.Count(logs.String(), `level=WARN msg="pending keys full`), logs.String())
		close(gate.synced)
		synctest.Wait()
		for _, k := range []string{"a", "b", "c"} {
			require.Equal(t, 1, s.count(k), k)
		}
		require.Zero(t, s.count("d"))
		require.Zero(t, s.count("e"))
		require.NoError(t, stop())
	})
}

// Pending keys obey holds: a held key added while no term runs waits out
// its hold in the next term.
func TestPendingKeyObeysItsHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &gatedSource{synced: make(chan struct{})}
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, gate)
		l.mu.Lock()
		l.setKeyLocked("a", &keyState{holdUntil: time.Now().Add(time.Minute)})
		l.mu.Unlock()
		l.held.Add(1)
		stop := start(t, l)
		synctest.Wait()
		l.Add("a")
		close(gate.synced)
		synctest.Wait()
		require.Zero(t, s.count("a"), "held")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		require.NoError(t, stop())
	})
}

// Keys added while a term begins are each reconciled exactly once: each is
// either pending (taken by the term as it begins) or in the term's queue.
func TestKeysAddedAsATermBeginsRunOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := &gatedSource{synced: make(chan struct{})}
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, gate)
		stop := start(t, l)
		synctest.Wait()
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 200 {
					if i%2 == 0 {
						l.Add(fmt.Sprint(g, "-", i))
					} else {
						l.AddLow(fmt.Sprint(g, "-", i))
					}
				}
			})
		}
		close(gate.synced)
		wg.Wait()
		synctest.Wait()
		for g := range 4 {
			for i := range 200 {
				require.Equal(t, 1, s.count(fmt.Sprint(g, "-", i)), "%d-%d", g, i)
			}
		}
		require.NoError(t, stop())
	})
}

// A first listing larger than the pending cap is reconciled whole, and
// parks nothing: the primary cache source's hints for the names it holds
// are what the term's listing yields anyway, so while no term runs they
// are not kept (a 1M-object cache would otherwise fill the set, log it
// full, and hold the keys twice).
func TestFirstListingLargerThanThePendingCapParksNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		const n = 30
		for i := range n {
			e.create(t, "user", &app{Meta: store.Meta{Name: fmt.Sprint("o", i)}})
		}
		var logs logBuffer
		gate := &gatedSource{synced: make(chan struct{})}
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, Sources(FromStore(e.cache, e.st), gate), WithLogger(newLogger(&logs)))
		l.pendingCap = n / 3
		stop := start(t, l)
		synctest.Wait() // the cache source has replayed all n objects: no term yet
		// A deletion is still kept: no listing names the deleted object.
		_, err := e.st.As("user").Delete(context.Background(), "o0")
		require.NoError(t, err)
		synctest.Wait()
		close(gate.synced)
		synctest.Wait()
		for i := range n {
			require.Equal(t, 1, s.count(fmt.Sprint("o", i)), "o%d", i)
		}
		require.NotContains(t, logs.String(), "pending keys full")
		require.Contains(t, logs.String(), `msg="term started" controller=test pending=1 pendingDropped=0`)
		require.NoError(t, stop())
	})
}
