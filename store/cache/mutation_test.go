package cache_test

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/cache"
)

func TestCacheMutationDetector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reported []error
		report := func(err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		}
		src := newScripted(10, mkObj("a", "ua", 3, map[string]string{"app": "web"}), mkObj("b", "ub", 4, nil), mkObj("c", "uc", 5, nil))
		c := cache.New(src, cache.WithMutationDetector(report))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		require.NoError(t, c.Check(), "nothing modified yet")

		a, _ := c.Get("a")
		a.Meta.Labels["app"] = "db" // a caller modifies a shared object
		b, _ := c.Get("b")
		b.Spec.Replicas = 3

		err := c.Check()
		var me *cache.MutationError
		require.ErrorAs(t, err, &me)
		require.ErrorContains(t, err, `"a" (revision 3) was modified`)
		require.ErrorContains(t, err, `"b" (revision 4) was modified`)

		// The next event for a modified object reports it too.
		w := <-src.streams
		w.send(evModified(a, mkObj("a", "ua", 11, nil)))
		synctest.Wait()
		mu.Lock()
		require.Len(t, reported, 1)
		require.True(t, errors.As(reported[0], &me))
		require.Equal(t, "a", me.Name)
		mu.Unlock()

		// A relist checks every object it keeps: b is reported.
		src.set(20, mkObj("a", "ua", 11, nil), mkObj("b", "ub", 4, nil), mkObj("c", "uc", 5, nil))
		w.send(evExpired(11))
		<-src.streams
		mu.Lock()
		require.Len(t, reported, 2)
		require.True(t, errors.As(reported[1], &me))
		require.Equal(t, "b", me.Name)
		mu.Unlock()
	})
}

// The detector's copy of an object is the one the Cache serves: events that
// modify, delete and re-create an object nobody changed report nothing, at
// the event or at Check, and a deleted object's copy goes with it.
func TestCacheMutationDetectorCopiesFollowTheServedObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reported []error
		report := func(err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		}
		a3 := mkObj("a", "ua", 3, map[string]string{"app": "web"})
		src := newScripted(10, a3, mkObj("b", "ub", 4, nil))
		c := cache.New(src, cache.WithMutationDetector(report))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		require.Equal(t, 2, c.Snapshots())

		w := <-src.streams
		a11 := mkObj("a", "ua", 11, map[string]string{"app": "db"})
		a12 := mkObj("a", "ua", 12, nil)
		w.send(evModified(a3, a11))
		w.send(evModified(a11, a12))
		synctest.Wait()
		require.NoError(t, c.Check(), "each modification's copy replaced the last")

		b, _ := c.Get("b")
		w.send(evDeleted(b, 13))
		synctest.Wait()
		require.Equal(t, 1, c.Snapshots(), "the deleted object's copy is dropped")
		b14 := mkObj("b", "ub2", 14, nil)
		w.send(evAdded(b14))
		synctest.Wait()
		require.Equal(t, 2, c.Snapshots())
		require.NoError(t, c.Check())
		mu.Lock()
		require.Empty(t, reported)
		mu.Unlock()
	})
}

// TestMain sets MutationDetectorEnv, so this package's caches run the
// detector as a user's tests can make theirs do.
func TestCacheMutationDetectorIsOnWithTheEnvironmentVariable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cache.New(newScripted(10, mkObj("a", "ua", 3, nil)))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		a, _ := c.Get("a")
		a.Spec.Image = "changed"
		require.ErrorContains(t, c.Check(), `"a"`, "with %s set the detector is on", cache.MutationDetectorEnv)
		a.Spec.Image = "" // put it back, or the next event would panic
	})
}

// A test binary is not enough to turn the detector on: a user's tests with
// a Cache do not pay for it, or panic, unless they opt in.
func TestCacheMutationDetectorIsOffByDefault(t *testing.T) {
	for _, v := range []string{"", "0", "false", "no"} {
		t.Run("env="+v, func(t *testing.T) {
			t.Setenv(cache.MutationDetectorEnv, v)
			synctest.Test(t, func(t *testing.T) {
				c := cache.New(newScripted(10, mkObj("a", "ua", 3, nil)))
				stop := startCache(t, c)
				defer stop()
				require.NoError(t, c.WaitForSync(t.Context()))
				a, _ := c.Get("a")
				a.Spec.Image = "changed"
				require.NoError(t, c.Check(), "the detector is opt-in")
			})
		})
	}
}

func TestCacheMutationDetectorOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := cache.New(newScripted(10, mkObj("a", "ua", 3, nil)), cache.WithMutationDetector(nil))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		a, _ := c.Get("a")
		a.Spec.Image = "changed"
		require.NoError(t, c.Check(), "Check is a no-op without the detector")
	})
}
