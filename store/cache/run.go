package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/watchopt"
	"github.com/steady-go/steady/store"
)

// Run fills the Cache and keeps it current until ctx ends, then returns nil.
// See Cache for what it does; errors from listing and watching are retried
// with the relist backoff and never end Run (WithErrorHandler sees them).
// It returns an error wrapping ErrInvalid at once if New was given bad
// arguments, and ErrRunning if Run was called before. Every goroutine
// Run starts has ended when it returns.
func (c *Cache[S, T]) Run(ctx context.Context) error {
	if c.initErr != nil {
		return c.initErr
	}
	if !c.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	var timer clock.Timer
	failures := 0
	for {
		progressed, err := c.listAndWatch(ctx)
		if ctx.Err() != nil {
			return nil
		}
		c.lastErr.Store(&err)
		if c.cfg.onError != nil {
			c.onError(err)
		}
		if progressed {
			failures = 0
		}
		delay := c.cfg.policy.Delay(failures)
		failures++
		if timer == nil {
			timer = c.cfg.clock.NewTimer(delay)
			defer timer.Stop()
		} else {
			timer.Reset(delay)
		}
		select {
		case <-timer.C():
		case <-ctx.Done():
			return nil
		}
	}
}

// LastError returns the error of the last failed list or watch (the one
// WithErrorHandler saw last), or nil if none has failed. It is for health
// checks and logs: a Cache that never syncs says why.
func (c *Cache[S, T]) LastError() error {
	if p := c.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// errWatchClosed is what the error handler sees when a watch channel closed
// without an error event.
var errWatchClosed = errors.New("cache: watch ended without an error event")

// listAndWatch lists, applies the listing, then applies watch events until
// the watch ends, and returns why it ended. It reports whether the watch
// delivered anything, which resets the relist backoff.
func (c *Cache[S, T]) listAndWatch(ctx context.Context) (progressed bool, err error) {
	l, err := c.listAll(ctx)
	if err != nil {
		return false, fmt.Errorf("cache: list: %w", err)
	}
	rev := l.Revision
	c.replace(l)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c.withoutPrev {
		wctx = watchopt.WithoutPrev(wctx) // apply reads c.items, not Prev
	}
	events, err := c.watch(wctx, rev)
	if err != nil {
		return false, fmt.Errorf("cache: watch from revision %d: %w", rev, err)
	}
	if events == nil {
		return false, fmt.Errorf("%w: Watch returned a nil channel", store.ErrInvalid)
	}
	defer func() {
		cancel()
		for range events { // let the source's goroutines finish
		}
	}()
	if rev == 0 {
		// A Watch from 0 starts from "now", so a write that landed between
		// the listing of a never-written store and the Watch call would be
		// missed. List again now that the watch runs: the events it
		// delivers up to the new listing's revision are skipped as stale.
		if l, err = c.listAll(ctx); err != nil {
			return false, fmt.Errorf("cache: list: %w", err)
		}
		c.replace(l)
	}
	return c.follow(ctx, events)
}

// follow applies watch events until the watch ends, and returns why it
// ended. Every relist period (when WithRelistPeriod is on) it lists the
// kind again and, once the watch has caught up with the listing's revision
// (before applying any later event), repairs what the cache holds to match
// the listing: every difference is an event the watch lost, reported to the
// handlers and counted as drift. A listing the watch has not caught up with
// within a quarter of the period (a stuck watch delivers nothing, not even
// progress) is applied then, so every write reaches the cache within one
// period plus a quarter; the next listing stays due one jittered period
// after this one.
func (c *Cache[S, T]) follow(ctx context.Context, events <-chan store.Event[S, T]) (progressed bool, err error) {
	var tick <-chan time.Time
	var timer clock.Timer
	if c.cfg.relistPeriod > 0 {
		timer = c.cfg.clock.NewTimer(c.relistDelay())
		defer timer.Stop()
		tick = timer.C()
	}
	var (
		pending *store.List[S, T] // a periodic listing the watch has yet to reach
		// due, when set, is when the next listing is due, and the timer
		// runs the watch's grace to reach the last one instead.
		due time.Time
	)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return progressed, errWatchClosed
			}
			if ev.Err != nil {
				return progressed, fmt.Errorf("cache: watch: %w", ev.Err)
			}
			if !ev.Progress && ev.Object == nil && ev.Undecodable == nil {
				return progressed, fmt.Errorf("%w: watch event at revision %d without an object", store.ErrInvalid, ev.Revision)
			}
			progressed = true
			if pending != nil && !ev.Progress && ev.Revision > pending.Revision {
				c.repair(pending)
				pending = nil
			}
			c.apply(ev)
			if pending != nil && c.Revision() >= pending.Revision {
				c.repair(pending)
				pending = nil
			}
		case <-tick:
			if !due.IsZero() { // the grace ended
				if pending != nil {
					c.repair(pending) // the watch never caught up with it
					pending = nil
				}
				timer.Reset(max(due.Sub(c.cfg.clock.Now()), 0))
				due = time.Time{}
				continue
			}
			delay := c.relistDelay()
			next := c.cfg.clock.Now().Add(delay)
			timer.Reset(delay)
			l, err := c.listAll(ctx)
			if err != nil {
				if ctx.Err() == nil && c.cfg.onError != nil {
					c.onError(fmt.Errorf("cache: periodic relist: %w", err))
				}
				continue
			}
			if c.Revision() >= l.Revision {
				c.repair(l)
				continue
			}
			// A live watch reaches the listing's revision soon, with an
			// event or a progress notification; give it a quarter of a
			// period, less than the shortest delay to the next listing.
			pending, due = l, next
			timer.Reset(c.cfg.relistPeriod / 4)
		}
	}
}

// repair applies a periodic listing and counts its differences as drift.
func (c *Cache[S, T]) repair(l *store.List[S, T]) {
	if n := c.replace(l); n > 0 {
		c.mu.Lock()
		c.driftRepairs += int64(n)
		c.mu.Unlock()
	}
}

// relistDelay is the relist period less up to a quarter of it at random,
// so that caches started together do not list together.
func (c *Cache[S, T]) relistDelay() time.Duration {
	p := c.cfg.relistPeriod
	return p - rand.N(p/4+1)
}

// list calls the ListWatcher's List under recovery: a List that panics
// (a user's wrapper) is reported (see Panics) and fails like an error.
func (c *Cache[S, T]) list(ctx context.Context, opts store.ListOptions) (l *store.List[S, T], err error) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			c.reportPanic("ListWatcher.List", p, false)
			l, err = nil, p
		}
	}()
	defer guard.Catch(&p)
	return c.src.List(ctx, opts)
}

// watch is list for Watch.
func (c *Cache[S, T]) watch(ctx context.Context, rev int64) (ch <-chan store.Event[S, T], err error) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			c.reportPanic("ListWatcher.Watch", p, false)
			ch, err = nil, p
		}
	}()
	defer guard.Catch(&p)
	return c.src.Watch(ctx, rev)
}

// listAll reads every page of one listing into one List.
func (c *Cache[S, T]) listAll(ctx context.Context) (*store.List[S, T], error) {
	all := new(store.List[S, T])
	opts := c.listOptions()
	for {
		page, err := c.list(ctx, opts)
		if err != nil {
			return nil, err
		}
		if page == nil {
			return nil, fmt.Errorf("%w: List returned no page", store.ErrInvalid)
		}
		all.Items = append(all.Items, page.Items...)
		all.Undecodable = append(all.Undecodable, page.Undecodable...)
		if page.Continue == "" {
			all.Revision = page.Revision
			return all, nil
		}
		opts.Continue = page.Continue
	}
}

// change is one (old, new) pair for the handlers.
type change[S, T any] struct{ old, new *store.Object[S, T] }

// apply applies one watch event and calls the handlers on it.
func (c *Cache[S, T]) apply(ev store.Event[S, T]) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	c.arrive(&ev)
	c.mu.Lock()
	if ev.Progress || ev.Revision <= c.listRev {
		// A progress mark, or a change the last listing already holds.
		c.setRevisionLocked(ev.Revision)
		c.mu.Unlock()
		return
	}
	if e := ev.Undecodable; e != nil {
		// Skip the value, keep the last valid object (if any).
		news := c.quarantineLocked(e)
		c.setRevisionLocked(ev.Revision)
		c.mu.Unlock()
		if news {
			c.reportQuarantine([]*store.DecodeError{e})
		}
		return
	}
	name := ev.Object.Meta.Name
	delete(c.quarantine, name)
	// The handlers' old object is the one the Cache held, never ev.Prev
	// (which a Store's watch leaves out for the Cache): the key's value at
	// the Cache's revision, or the last valid one if that value did not
	// decode.
	old := c.items[name]
	var new *store.Object[S, T]
	if ev.Type == store.Deleted {
		delete(c.items, name)
	} else {
		new = ev.Object
		c.items[name] = new
	}
	var mutated []error
	var panics []indexPanic
	if old != nil || new != nil {
		panics = c.reindexLocked(name, old, new, nil)
		mutated = c.detect.replace(name, old, new, nil)
	}
	c.setRevisionLocked(ev.Revision)
	c.mu.Unlock()

	c.reportIndexPanics(panics)
	c.reportMutations(mutated)
	if old != nil || new != nil {
		c.notify(change[S, T]{old, new})
	}
}

// replace makes the Cache hold exactly the listing's items, as of its
// revision, and tells the handlers what changed: deletions first, then
// additions and modifications, each in name order. An object whose revision
// is unchanged keeps its cached value and is not reported. The listing's
// undecodable values become the quarantine; a key among them keeps the
// object the Cache held, if any.
func (c *Cache[S, T]) replace(l *store.List[S, T]) (changes int) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	l = c.arriveListing(l)
	items, rev := l.Items, l.Revision
	c.mu.Lock()
	fresh := make(map[string]*store.Object[S, T], len(items))
	for _, obj := range items {
		fresh[obj.Meta.Name] = obj
	}
	quarantine := make(map[string]*store.DecodeError, len(l.Undecodable))
	var news []*store.DecodeError
	for _, e := range l.Undecodable {
		quarantine[e.Name] = e
		if old, ok := c.quarantine[e.Name]; !ok || old.Revision != e.Revision {
			news = append(news, e)
		}
	}
	c.quarantine = quarantine
	var deleted, changed []change[S, T]
	var mutated []error
	var panics []indexPanic
	for name, old := range c.items {
		if _, ok := fresh[name]; !ok && quarantine[name] == nil {
			deleted = append(deleted, change[S, T]{old, nil})
		}
	}
	sortChanges(deleted)
	for _, ch := range deleted {
		name := ch.old.Meta.Name
		delete(c.items, name)
		panics = c.reindexLocked(name, ch.old, nil, panics)
		mutated = c.detect.replace(name, ch.old, nil, mutated)
	}
	for _, obj := range items {
		name := obj.Meta.Name
		old := c.items[name]
		switch {
		case old != nil && old.Meta.UID == obj.Meta.UID && old.Meta.Revision == obj.Meta.Revision:
			mutated = c.detect.verify(name, old, mutated)
			continue
		case old != nil && old.Meta.UID != obj.Meta.UID:
			// Deleted and recreated while the cache was blind.
			deleted = append(deleted, change[S, T]{old, nil})
			panics = c.reindexLocked(name, old, nil, panics)
			mutated = c.detect.replace(name, old, nil, mutated)
			old = nil
		}
		c.items[name] = obj
		panics = c.reindexLocked(name, old, obj, panics)
		mutated = c.detect.replace(name, old, obj, mutated)
		changed = append(changed, change[S, T]{old, obj})
	}
	c.listRev = rev
	c.setRevisionLocked(rev)
	c.lists++
	c.mu.Unlock()

	c.reportIndexPanics(panics)
	c.reportMutations(mutated)
	c.reportQuarantine(news)
	c.listing.Store(true)
	for _, ch := range deleted {
		c.notify(ch)
	}
	for _, ch := range changed {
		c.notify(ch)
	}
	c.listing.Store(false)
	// Synced once the handlers have been told of the first listing, so that
	// what they do with it (a Loop enqueues every key) is done by the time
	// WaitForSync returns.
	select {
	case <-c.synced:
	default:
		close(c.synced)
	}
	return len(deleted) + len(changed)
}

func sortChanges[S, T any](chs []change[S, T]) {
	slices.SortFunc(chs, func(a, b change[S, T]) int { return strings.Compare(a.old.Meta.Name, b.old.Meta.Name) })
}

func (c *Cache[S, T]) reportMutations(errs []error) {
	for _, err := range errs {
		c.cfg.report(err)
	}
}
