package cache

import (
	"context"

	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
)

// RelistNow runs one periodic relist at once, as the relist timer does
// after the watch has caught up: for BenchmarkRelist. It lists on the
// caller's goroutine, not Run's (see Cache.reused): call it only while
// Run applies nothing.
func (c *Cache[S, T]) RelistNow(ctx context.Context) error {
	l, err := c.listAll(ctx)
	if err != nil {
		return err
	}
	c.repair(l)
	return nil
}

// SetLean makes c call src's ListReusing and WatchWithoutPrev (src must have
// both) in place of its ListWatcher's List and Watch, as it does for a
// *store.Store; nil makes it call List and Watch. A test routes a Store's
// lean calls through a wrapper with it.
func (c *Cache[S, T]) SetLean(src any) {
	c.lean, _ = src.(leanSource[S, T])
}

// Waiters returns how many WaitFor calls are waiting.
func (c *Cache[S, T]) Waiters() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.waiters)
}

// Lean returns st's ListReusing and WatchWithoutPrev, which a Cache over st
// calls (through internal/storeaccess), for a test's wrapper to call.
func Lean[S, T any](st *store.Store[S, T]) leanSource[S, T] {
	l, _ := storeaccess.Of(st).(leanSource[S, T])
	return l
}

// ApplyListing applies l as Run applies a listing, and returns the number
// of changes it reported to the handlers.
func (c *Cache[S, T]) ApplyListing(l *store.List[S, T]) int { return c.replace(l) }

// TurnsKept is how many turns of freshness the Cache's record keeps (see
// internalView.WasFresh).
const TurnsKept = turnsKept

// Snapshots returns how many objects the mutation detector holds a copy
// of (0 when it is off).
func (c *Cache[S, T]) Snapshots() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.detect == nil {
		return 0
	}
	return len(c.detect.snaps)
}
