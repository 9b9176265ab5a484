package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/steady-go/steady/internal/guard"
)

// WithKeep limits the Cache to the objects whose name keep accepts, for a
// filter no backend can apply and whose answer changes while the Cache
// runs: a sharded Loop's replica caches the objects of the shards it holds
// (keep = shard.Sharder.Caches). Every listing and watch still reads the
// whole kind's keys from the Backend; a *store.Store ListWatcher skips the
// values keep rejects before decoding them (store.ListOptions.Keep,
// the Store's watch without previous values), and remembers none of them (store.WithLastValues),
// and any other ListWatcher's objects are dropped on arrival, before they
// are stored, transformed or indexed. So the Cache's memory is that of the
// kept objects.
//
// Like WithSelector, an object keep stops accepting leaves the Cache as a
// deletion for the handlers, and one it starts accepting arrives as an
// addition, but only once the Cache lists again: after keep's answer
// changes, call Refilter, which lists at once; when it only narrowed (no
// object it rejected before is accepted now), Prune drops the objects it
// rejects from memory, with no listing. keep is called from the
// Cache's goroutines on every listed key and watched write: it must be
// fast, safe for concurrent use, and must not call the Cache. A keep that panics keeps the object (a
// Cache holding too much is safe; one missing an object is not) and is
// reported like a handler's panic. Nil keeps everything.
func WithKeep(keep func(name string) bool) Option { return func(c *config) { c.keep = keep } }

// ErrNotRunning says that the Cache's Run is not running: Refilter and
// Prune return it once Run has returned (nothing will list again), and
// WaitForSync once Run returned without syncing. Before Run is called they
// wait for it (Refilter and Prune for its first listing, which serves
// them); when their ctx ends first, their error wraps both ctx's error and
// ErrNotRunning, and says Run has not been called. LastError wraps it
// until Run is called.
var ErrNotRunning = errors.New("cache: not running")

// Refilter makes the Cache hold what WithKeep's function accepts now: it
// asks Run to list the kind at once and returns after a listing that began
// after the call was applied, and the handlers were told of every object
// that left (deletions) or arrived (additions). A Cache without WithKeep
// returns nil at once, and one given bad arguments New's error. It
// returns ctx's error if ctx ends first, and ErrNotRunning once Run has
// returned. Called before Run, it does not fail: it waits for Run's first
// listing, which serves it, and if ctx ends before Run is called its error
// wraps both ctx's error and ErrNotRunning. Calls made together share one
// listing.
func (c *Cache[S, T]) Refilter(ctx context.Context) error {
	if c.cfg.keep == nil {
		return nil
	}
	if c.initErr != nil {
		return c.initErr
	}
	return c.notRunYet(ctx, "Refilter", c.refilter.ask(ctx))
}

// notRunYet is err, the error of Refilter or Prune (named what), saying
// also that Run has not been called when that is why ctx ended first.
func (c *Cache[S, T]) notRunYet(ctx context.Context, what string, err error) error {
	if err == nil || ctx.Err() == nil || c.running.Load() {
		return err
	}
	return fmt.Errorf("cache %q: %s: %w: %w: Run has not been called", c.Kind(), what, err, ErrNotRunning)
}

// Prune drops, from memory and without listing, the objects WithKeep's
// function rejects now, and returns once the handlers were told of each as
// a deletion. It is Refilter for a keep whose answer only narrowed since the
// last listing (a sharded replica let shards go): nothing the Cache lacks
// can have become acceptable, so nothing need be read. Run's goroutine
// does it (only it changes what the Cache holds), between watch events. A
// Cache without WithKeep returns nil at once, and one given bad arguments
// New's error. It returns ctx's error if ctx ends first, and ErrNotRunning
// once Run has returned. Called before Run, it does not fail: it waits for
// Run's first listing, which serves it (that listing holds only what keep
// accepts), and if ctx ends before Run is called its error wraps both
// ctx's error and ErrNotRunning.
func (c *Cache[S, T]) Prune(ctx context.Context) error {
	if c.cfg.keep == nil {
		return nil
	}
	if c.initErr != nil {
		return c.initErr
	}
	return c.notRunYet(ctx, "Prune", c.prune.ask(ctx))
}

// pruneNow is Prune, on Run's goroutine.
func (c *Cache[S, T]) pruneNow() {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	// keep is called without c.mu (a panicking keep is reported to the
	// error handler, which may read the Cache); c.items and c.quarantine
	// change only under dispatch, held throughout.
	c.mu.RLock()
	names := make([]string, 0, len(c.items)+len(c.quarantine))
	for name := range c.items {
		names = append(names, name)
	}
	for name := range c.quarantine {
		if c.items[name] == nil {
			names = append(names, name)
		}
	}
	c.mu.RUnlock()
	var gone []string
	for _, name := range names {
		if !c.keeps(name) {
			gone = append(gone, name)
		}
	}
	c.mu.Lock()
	var d diffs[S, T]
	for _, name := range gone {
		delete(c.quarantine, name)
		if old := c.items[name]; old != nil {
			d.deleted = append(d.deleted, change[S, T]{old, nil})
		}
	}
	c.removeDeletedLocked(&d)
	if len(d.deleted) > len(c.items) {
		c.items = maps.Collect(maps.All(c.items)) // see replace
	}
	c.mu.Unlock()
	c.reportIndexPanics(d.panics)
	c.reportMutations(d.mutated)
	c.listing.Store(true) // as a listing's deletions are
	for _, ch := range d.deleted {
		c.notify(ch)
	}
	c.listing.Store(false)
}

// ask asks Run to serve one more call and waits until it did (nil), ctx
// ended (ctx's error) or Run returned (ErrNotRunning).
func (r *refilterState) ask(ctx context.Context) error {
	r.mu.Lock()
	r.want++
	want := r.want
	r.mu.Unlock()
	r.nudge()
	for {
		r.mu.Lock()
		done, wake, stopped := r.done, r.wake, r.stopped
		r.mu.Unlock()
		switch {
		case done >= want:
			return nil
		case stopped:
			return ErrNotRunning
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// refilterState is Refilter's handshake with Run (and Prune's): want counts the calls,
// done the last call a listing has served, wake is closed (and replaced)
// whenever done moves or Run stops.
type refilterState struct {
	nudge func() // the Cache's nudgeRun (see Cache.nudge): a call waits

	mu      sync.Mutex
	want    uint64
	done    uint64
	stopped bool
	wake    chan struct{}
}

func (r *refilterState) init(nudge func()) {
	r.nudge = nudge
	r.wake = make(chan struct{})
}

// asked returns the Refilter calls made so far, which a listing that
// begins now serves once applied (served), and whether some are not served
// yet.
func (r *refilterState) asked() (want uint64, waiting bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.want, r.want > r.done
}

// served records that the calls up to want were served by an applied
// listing, and wakes them.
func (r *refilterState) served(want uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if want > r.done {
		r.done = want
		close(r.wake)
		r.wake = make(chan struct{})
	}
}

// stop wakes every Refilter call for good: Run returned.
func (r *refilterState) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	close(r.wake)
	r.wake = make(chan struct{})
}

// relistNow serves the Refilter calls made so far, from follow: it lists
// and applies the listing at once, whatever the watch's revision (the
// listing is the newer: no event is applied while it is read, and later
// events at or below its revision are skipped). A pending periodic listing
// is older: it is dropped. A failed listing leaves the calls waiting for
// the next one.
func (c *Cache[S, T]) relistNow(ctx context.Context, r *relistState[S, T]) {
	want, waiting := c.refilter.asked()
	if !waiting { // served by a listing since the nudge
		return
	}
	l, err := c.listAll(ctx)
	if err != nil {
		if ctx.Err() == nil && c.cfg.onError != nil {
			c.onError(fmt.Errorf("cache: relist to refilter: %w", err))
		}
		return
	}
	c.replace(l)
	if r.pending != nil && r.pending.Revision <= l.Revision {
		r.pending = nil
	}
	c.refilter.served(want)
}

// keepFunc is WithKeep's function under recovery, for the ListWatcher to
// filter with before decoding (store.ListOptions.Keep), or nil.
func (c *Cache[S, T]) keepFunc() func(string) bool {
	if c.cfg.keep == nil {
		return nil
	}
	return c.keeps
}

// keeps reports whether WithKeep's function accepts name, under recovery.
func (c *Cache[S, T]) keeps(name string) (ok bool) {
	if c.cfg.keep == nil {
		return true
	}
	var p *guard.Panic
	defer func() {
		if p != nil {
			c.reportPanic("keep function", p, true, slog.String("object", name))
			ok = true
		}
	}()
	defer guard.Catch(&p)
	return c.cfg.keep(name)
}
