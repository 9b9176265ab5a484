package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/drain"
	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Run fills the Cache and keeps it current until ctx ends, then returns nil.
// See Cache for what it does; errors from listing and watching are retried
// with the relist backoff and never end Run (WithErrorHandler sees them).
// It returns an error wrapping ErrInvalid at once if New was given bad
// arguments, and ErrRunning if Run was called before. Every goroutine
// Run starts has ended when it returns. A function of the user's that
// calls runtime.Goexit on Run's goroutine (a handler, so a Loop's
// predicate or mapper, a transform, keep, an index function) ends that
// goroutine, and Run with it without returning: it is logged at Error,
// LastError says so, and the Cache's waiters get ErrNotRunning.
func (c *Cache[S, T]) Run(ctx context.Context) error {
	if c.initErr != nil {
		return c.initErr
	}
	if !c.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer close(c.stopped)
	defer c.refilter.stop()
	defer c.prune.stop()
	returned := false
	defer c.endedAbruptly(&returned)
	err := c.run(ctx)
	returned = true
	return err
}

// run is Run's loop.
func (c *Cache[S, T]) run(ctx context.Context) error {
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

// errGoexit is LastError after Run's goroutine ended by runtime.Goexit.
var errGoexit = errors.New("cache: Run's goroutine ended by runtime.Goexit, called by a handler, transform, keep or index function (t.FailNow outside the test's goroutine?): Run did not return")

// endedAbruptly, deferred by Run, reports a Run that did not return: a
// function of the user's that Run's goroutine called (a handler, and so a
// Loop's predicate or mapper, a transform, keep, an index function) called
// runtime.Goexit, which no recover stops and which ends the goroutine that
// called Run. It is logged at Error and kept for LastError; the Cache's
// waiters (WaitForSync, Refilter, Prune) get ErrNotRunning, as after Run
// returned. (A panic past the Cache's recovery, a bug of its own, is
// logged so too before it crashes the process.)
func (c *Cache[S, T]) endedAbruptly(returned *bool) {
	if *returned {
		return
	}
	err := errGoexit
	c.lastErr.Store(&err)
	c.cfg.panicLog.LogAttrs(context.Background(), slog.LevelError, err.Error(), slog.String("kind", c.Kind()),
		slog.String("stack", string(debug.Stack())))
}

// LastError returns the error of the last failed list or watch (the one
// WithErrorHandler saw last), or nil if none has failed. It is for health
// checks and logs: a Cache that never syncs says why. A Cache whose Run has
// not been called yet returns an error wrapping ErrNotRunning that says so
// (client-go's forgotten informer Start), which a Loop waiting for the
// Cache logs every 30 seconds.
func (c *Cache[S, T]) LastError() error {
	if p := c.lastErr.Load(); p != nil {
		return *p
	}
	if !c.running.Load() && c.initErr == nil {
		return fmt.Errorf("cache %q: %w: Run has not been called", c.Kind(), ErrNotRunning)
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
	asked, _ := c.refilter.asked()
	pruneAsked, _ := c.prune.asked() // a listing prunes too
	var rev int64
	if c.lists > 0 { // Run's goroutine alone changes lists
		if rev, err = c.relistPaged(ctx); err != nil {
			return false, fmt.Errorf("cache: list: %w", err)
		}
	} else {
		l, err := c.listAll(ctx)
		if err != nil {
			return false, fmt.Errorf("cache: list: %w", err)
		}
		rev = l.Revision
		c.replace(l)
	}
	c.refilter.served(asked)
	c.prune.served(pruneAsked)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := c.watch(wctx, rev)
	if err != nil {
		return false, fmt.Errorf("cache: watch from revision %d: %w", rev, err)
	}
	if events.typed == nil && events.raw == nil && events.cursor == nil {
		return false, fmt.Errorf("%w: Watch returned a nil channel", store.ErrInvalid)
	}
	defer func() {
		cancel()
		if events.end != nil {
			events.end()
		}
		if events.typed != nil {
			drainWatch(c, events.typed)
		}
		if events.raw != nil {
			drainWatch(c, events.raw)
		}
	}()
	// A watch from the listing's revision misses nothing written since,
	// even from 0, an empty store's (kv.Backend's Watch).
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
func (c *Cache[S, T]) follow(ctx context.Context, events stream[S, T]) (progressed bool, err error) {
	var tick <-chan time.Time
	var r relistState[S, T]
	if c.cfg.relistPeriod > 0 {
		r.timer = c.cfg.clock.NewTimer(c.relistDelay())
		defer r.timer.Stop()
		tick = r.timer.C()
	}
	if events.cursor != nil {
		return c.followInPlace(ctx, events, &r, tick)
	}
	defer context.AfterFunc(ctx, c.nudgeRun)() // a source may not close its channel (drainWatch)
	for {
		select {
		case ev, ok := <-events.typed:
			if ctx.Err() != nil { // the channel may hold a backlog: leave it
				return progressed, ctx.Err()
			}
			if err := c.followEvent(ev, ok, &r); err != nil {
				return progressed, err
			}
			progressed = true
		case kev, ok := <-events.raw:
			if ctx.Err() != nil {
				return progressed, ctx.Err()
			}
			var ev store.Event[S, T]
			if ok {
				ev = events.decode(kev)
			}
			if err := c.followEvent(ev, ok, &r); err != nil {
				return progressed, err
			}
			progressed = true
		case <-tick:
			c.relistTick(ctx, &r)
		case <-c.nudge:
			if c.nudged(ctx, &r) {
				return progressed, ctx.Err()
			}
		}
	}
}

// drainWatch reads what is left in a watch channel the Cache stopped
// following, until its source closes it, so that a source blocked sending
// an event can see its ctx end and finish. A source that has not closed it
// within drain.Grace (its Watch ignores its ctx) is left behind, with an
// error in the log: its goroutines are its own, and Run must not hang with
// them.
func drainWatch[S, T, E any](c *Cache[S, T], ch <-chan E) {
	if !drain.Within(ch, c.cfg.clock, drain.Grace) {
		c.cfg.panicLog.LogAttrs(context.Background(), slog.LevelError,
			"cache: the source's watch channel is still open after its ctx ended; the Cache leaves it (Watch must close its channel when its ctx ends)",
			slog.String("kind", c.Kind()), slog.Duration("waited", drain.Grace))
	}
}

// followInPlace is follow for a watch read in place (events.cursor): Run's
// goroutine reads each batch itself and serves the relist timer and the
// nudges, as follow's select does between events, while it waits for the
// next change, and before a batch it read without waiting (a busy watch
// never waits). It returns when ctx ends, with ctx's error.
//
// The end of ctx and the relist timer come as nudges (Cache.nudge), ctx's
// by an AfterFunc and the timer's by a goroutine that relays its ticks
// (relayTicks), with Refilter's and Prune's: the wait for the next event,
// which a quiet watch makes once per event, then selects on two channels
// rather than five, about 2,200 instructions less per event (callgrind,
// BenchmarkFollowSpecAndStatus: 107.4k per op of two events before,
// 102.9k after).
//
// When the watch can be poked (kvwatch.Poker, memstore's), every nudge
// pokes it too (c.poke), and the wait is a receive on the watch's channel
// alone: about 1,400 instructions less per wait than the select on two
// (callgrind, BenchmarkEventToReconcile: its two waits per op).
func (c *Cache[S, T]) followInPlace(ctx context.Context, events stream[S, T], r *relistState[S, T], tick <-chan time.Time) (progressed bool, err error) {
	poked := false
	if poke := events.cursor.Poker(); poke != nil {
		// Before the first wait: a nudge from now on pokes too; one
		// made before is pending in c.nudge, which serve looks at
		// before it waits.
		c.poke.Store(&poke)
		defer c.poke.Store(nil)
		poked = true
	}
	defer context.AfterFunc(ctx, c.nudgeRun)()
	if tick != nil {
		defer c.relayTicks(tick, r)()
	}
	waited := false
	for {
		fresh := events.cursor.Drained()
		kev, wake, ok := events.cursor.Next()
		if !ok || fresh && !waited {
			if c.serve(ctx, r, wake, !ok && wake != nil, poked) {
				return progressed, ctx.Err()
			}
			waited = !ok && wake != nil
			if !ok {
				continue
			}
		}
		if fresh {
			waited = false
		}
		if err := c.followEvent(events.decode(*kev), true, r); err != nil {
			return progressed, err
		}
		progressed = true
	}
}

// serve is followInPlace's turn for the nudges (Cache.nudge): it serves
// one that is pending or, when wait is set, waits for one or for wake. It
// reports whether ctx ended. poked says every nudge also fills wake
// (c.poke): then it waits on wake alone, unless a nudge is pending (whose
// poke the Cursor may have taken: see kvwatch.Poker), and serves a nudge
// if one is pending once wake received.
func (c *Cache[S, T]) serve(ctx context.Context, r *relistState[S, T], wake <-chan struct{}, wait, poked bool) (ended bool) {
	switch {
	case wait && poked:
		if len(c.nudge) == 0 {
			<-wake
		}
		if !c.takeNudge() {
			return false
		}
	case wait:
		select {
		case <-wake:
			return false
		case <-c.nudge:
		}
	default:
		if !c.takeNudge() {
			return false
		}
	}
	return c.nudged(ctx, r)
}

// takeNudge takes a pending nudge, if any, without waiting. It looks at
// the channel's length first: a receive that finds nothing costs more.
func (c *Cache[S, T]) takeNudge() bool {
	if len(c.nudge) == 0 {
		return false
	}
	select {
	case <-c.nudge:
		return true
	default:
		return false
	}
}

// relayTicks relays the relist timer's ticks to Run's goroutine as
// nudges (r.ticked) until the returned stop is called, which waits for
// the relay to end.
func (c *Cache[S, T]) relayTicks(tick <-chan time.Time, r *relistState[S, T]) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-tick:
				r.ticked.Store(true)
				c.nudgeRun()
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-ended }
}

// nudged serves a nudge (see Cache.nudge): it reports whether ctx ended,
// and otherwise serves a relayed tick of the relist timer and the Prune
// and Refilter calls that wait, if any. A nudge whose calls a listing
// already served serves nothing.
func (c *Cache[S, T]) nudged(ctx context.Context, r *relistState[S, T]) (ended bool) {
	if ctx.Err() != nil {
		return true
	}
	if r.ticked.Swap(false) {
		c.relistTick(ctx, r)
	}
	if want, waiting := c.prune.asked(); waiting {
		c.pruneNow()
		c.prune.served(want)
	}
	c.relistNow(ctx, r) // nothing unless a Refilter call waits
	return false
}

// nudgeRun nudges Run's goroutine (see Cache.nudge); a nudge already
// pending will do. It then pokes the watch Run's goroutine may be waiting
// on alone (see serve), if any: after the nudge, so that the wait it ends
// finds the nudge.
func (c *Cache[S, T]) nudgeRun() {
	select {
	case c.nudge <- struct{}{}:
	default:
	}
	if poke := c.poke.Load(); poke != nil {
		(*poke)()
	}
}

// relistState is follow's periodic relisting: its timer, and a listing the
// watch has yet to reach, if any.
type relistState[S, T any] struct {
	timer clock.Timer
	// ticked is set by relayTicks when a tick came (followInPlace).
	ticked  atomic.Bool
	pending *store.List[S, T]
	// due, when set, is when the next listing is due, and the timer runs
	// the watch's grace to reach pending instead.
	due time.Time
}

// followEvent applies one watch event (ok false: the channel closed), and
// a pending listing as soon as the watch has reached its revision, before
// any later event. It returns why the watch ended, or nil.
func (c *Cache[S, T]) followEvent(ev store.Event[S, T], ok bool, r *relistState[S, T]) error {
	switch {
	case !ok:
		return errWatchClosed
	case ev.Err != nil:
		return fmt.Errorf("cache: watch: %w", ev.Err)
	case !ev.Progress && ev.Object == nil && ev.Undecodable == nil:
		return fmt.Errorf("%w: watch event at revision %d without an object", store.ErrInvalid, ev.Revision)
	}
	if r.pending != nil && !ev.Progress && ev.Revision > r.pending.Revision {
		c.repair(r.pending)
		r.pending = nil
	}
	c.apply(ev)
	if r.pending != nil && c.Revision() >= r.pending.Revision {
		c.repair(r.pending)
		r.pending = nil
	}
	return nil
}

// relistTick handles the relist timer: either the watch's grace to reach
// a pending listing ended (apply it anyway), or a listing is due (list, and
// apply it at once if the watch is past its revision, else give the watch
// a quarter of a period, less than the shortest delay to the next listing).
//
// It resets the timer once, after the listing: the timer, which has just
// fired, is not running while it lists, so no tick of an earlier reset can
// follow a later one, however long the listing takes, even as relayed
// (relayTicks). The next listing is due one jittered period after this
// one began.
func (c *Cache[S, T]) relistTick(ctx context.Context, r *relistState[S, T]) {
	if !r.due.IsZero() { // the grace ended
		if r.pending != nil {
			c.repair(r.pending) // the watch never caught up with it
			r.pending = nil
		}
		r.timer.Reset(max(r.due.Sub(c.cfg.clock.Now()), 0))
		r.due = time.Time{}
		return
	}
	next := c.cfg.clock.Now().Add(c.relistDelay())
	l, err := c.listAll(ctx)
	switch {
	case err != nil:
		if ctx.Err() == nil && c.cfg.onError != nil {
			c.onError(fmt.Errorf("cache: periodic relist: %w", err))
		}
	case c.Revision() >= l.Revision:
		c.repair(l)
	default:
		r.pending, r.due = l, next
		r.timer.Reset(c.cfg.relistPeriod / 4)
		return
	}
	r.timer.Reset(max(next.Sub(c.cfg.clock.Now()), 0))
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
	if c.lean != nil {
		// Without a transform, which changes the objects listed, they are
		// shared and read-only from the start (see WatchUndecoded's held).
		return c.lean.ListReusing(ctx, opts, c.reuse, c.transform == nil)
	}
	return c.src.List(ctx, opts)
}

// stream is the watch follow reads: a channel of typed events, or a
// Store's backend channel (raw) with the decoder that types its events on
// Run's goroutine (see undecodedSource). Exactly one channel is set; the
// other, nil, is never ready.
type stream[S, T any] struct {
	typed  <-chan store.Event[S, T]
	raw    <-chan kv.Event
	decode func(kv.Event) store.Event[S, T]
	// cursor, when set instead of a channel, reads the backend's watch in
	// place (followSource); end ends it.
	cursor *kvwatch.Cursor
	end    func()
}

// watch is list for Watch. Over a Store itself it decodes the events on
// Run's goroutine (undecodedSource): each event then reaches the Cache in
// one goroutine hand-off, not two, which is most of what separates a write
// from the handlers on a busy machine.
func (c *Cache[S, T]) watch(ctx context.Context, rev int64) (st stream[S, T], err error) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			c.reportPanic("ListWatcher.Watch", p, false)
			st, err = stream[S, T]{}, p
		}
	}()
	defer guard.Catch(&p)
	var held func(string, int64) *store.Object[S, T]
	if c.transform == nil {
		held = c.reuse
	}
	if f, ok := c.lean.(followSource[S, T]); ok {
		var in bool
		if st.cursor, st.end, st.decode, in, err = f.FollowUndecoded(rev, c.keepFunc(), held); in {
			return st, err
		}
	}
	if u, ok := c.lean.(undecodedSource[S, T]); ok {
		// The objects it holds are read-only, and decode runs on Run's
		// goroutine, which reused may read c.items on: an event's object
		// may share the side its change left as it was with the object
		// held. A transform changes objects in place, after decoding: they
		// are no longer what their bytes decode to, and what it changes
		// must be the object's own.
		st.raw, st.decode, err = u.WatchUndecoded(ctx, rev, c.keepFunc(), held)
		return st, err
	}
	if c.lean != nil {
		st.typed, err = c.lean.WatchWithoutPrev(ctx, rev, c.keepFunc()) // apply reads c.items, not Prev
		return st, err
	}
	st.typed, err = c.src.Watch(ctx, rev)
	return st, err
}

// listAll reads every page of one listing into one List. A page after the
// first that fails with ErrExpired (see wholeIfExpired) starts it again, in
// one page.
func (c *Cache[S, T]) listAll(ctx context.Context) (*store.List[S, T], error) {
	all := new(store.List[S, T])
	opts := c.listOptions()
	for {
		page, err := c.list(ctx, opts)
		if wholeIfExpired(err, &opts) {
			all = new(store.List[S, T])
			continue
		}
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

// relistPaged is listAll and replace for the listing after a watch ended:
// it applies each page as it reads it, so that an object the listing
// replaces is garbage once its page is applied, not once the whole kind is
// listed. Read whole, the listing held a second copy of every object
// changed while the Cache was blind until its end: the peak of a
// controller's heap at 10,000 objects (~10 MB of ~45), and of one at
// 1,000,000 (~1.5 GB). The handlers hear of each page's changes as it is
// applied, its deletions (held objects in its range of names that it
// leaves out) first, each in name order; the Cache moves to the listing's
// revision at its end. A listing that fails midway leaves the pages
// applied so far, each object at the listing's revision, for the next
// listing to complete. A page after the first that fails with ErrExpired
// (see wholeIfExpired) leaves the pages applied so far and lists the kind
// again, in one page.
func (c *Cache[S, T]) relistPaged(ctx context.Context) (int64, error) {
	p := pagedListing{held: c.Keys()}
	opts := c.listOptions()
	for {
		page, err := c.list(ctx, opts)
		if wholeIfExpired(err, &opts) {
			// The pages applied so far stay, each object at its page's
			// revision; the whole listing starts from the names held now.
			p = pagedListing{held: p.heldNow(c)}
			continue
		}
		if err != nil {
			return 0, err
		}
		if page == nil {
			return 0, fmt.Errorf("%w: List returned no page", store.ErrInvalid)
		}
		last := page.Continue == ""
		c.applyPage(page, &p, last)
		if last {
			c.endPaged(page.Revision, &p)
			return page.Revision, nil
		}
		opts.Continue = page.Continue
	}
}

// wholeIfExpired reports whether err, from the List of a page after the
// first of a paged listing, says that the listing's revision has left the
// backend's history, and if so makes opts those of a listing of the whole
// kind in one page. Every page of a listing is pinned to the revision of
// its first, so a writer that writes more than the history (memstore's
// WithHistorySize, etcd's compaction) while a big kind is read expires
// every paged listing of it: at 100,000 objects and one write per 20µs,
// the Cache retried its relist, from the first page, after a backoff, for
// as long as the writer kept ahead (4s of 5, the Cache blind all along).
// A listing in one page is read at the current revision and cannot
// expire; client-go's pager falls back the same way.
func wholeIfExpired(err error, opts *store.ListOptions) bool {
	if err == nil || opts.Continue == "" || opts.Limit == 0 || !errors.Is(err, store.ErrExpired) {
		return false
	}
	opts.Continue, opts.Limit = "", 0
	return true
}

// pagedListing is relistPaged's state: the names the Cache held when it
// began, in order, and how far the pages have come through them; the
// names listed, in order; the undecodable values listed.
type pagedListing struct {
	held        []string
	next        int
	names       []string
	undecodable []*store.DecodeError
	unordered   bool // a page out of name order: deletions wait for the end
}

// heldNow returns, in name order, the names the Cache may hold during
// the listing: those it held when it began and those its pages listed
// since, merged, or, after pages out of order, Keys. (Some may be gone,
// deleted by a page; they are skipped as held no more.) A merge, not Keys:
// sorting the names of 1M objects again costs half a second.
func (p *pagedListing) heldNow(c interface{ Keys() []string }) []string {
	if p.unordered {
		return c.Keys()
	}
	out := make([]string, 0, len(p.held)+len(p.names))
	i, j := 0, 0
	for i < len(p.held) || j < len(p.names) {
		switch {
		case j == len(p.names) || i < len(p.held) && p.held[i] < p.names[j]:
			out = append(out, p.held[i])
			i++
		case i == len(p.held) || p.names[j] < p.held[i]:
			out = append(out, p.names[j])
			j++
		default:
			out = append(out, p.held[i])
			i++
			j++
		}
	}
	return out
}

// applyPage applies one page of relistPaged's listing: the held objects
// in its range of names that it does not list are deleted (all those left
// when last), its objects put, and the handlers told.
func (c *Cache[S, T]) applyPage(page *store.List[S, T], p *pagedListing, last bool) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	l := c.arriveListing(page)
	p.undecodable = append(p.undecodable, l.Undecodable...)
	listed := make([]string, 0, len(l.Items)+len(l.Undecodable))
	for _, obj := range l.Items {
		listed = append(listed, obj.Meta.Name)
	}
	for _, e := range l.Undecodable {
		listed = append(listed, e.Name)
	}
	ordered := slices.IsSortedFunc(l.Items, func(a, b *store.Object[S, T]) int { return strings.Compare(a.Meta.Name, b.Meta.Name) })
	slices.Sort(listed) // items and undecodable values, each in order: a merge
	if !ordered || len(p.names) > 0 && len(listed) > 0 && listed[0] <= p.names[len(p.names)-1] {
		p.unordered = true
	}
	var d diffs[S, T]
	c.mu.Lock()
	if !p.unordered {
		for ; p.next < len(p.held); p.next++ {
			name := p.held[p.next]
			if !last && (len(listed) == 0 || name > listed[len(listed)-1]) {
				break
			}
			if _, ok := slices.BinarySearch(listed, name); !ok && c.items[name] != nil {
				d.deleted = append(d.deleted, change[S, T]{c.items[name], nil})
			}
		}
		c.removeDeletedLocked(&d)
	}
	for _, obj := range l.Items {
		c.putListedLocked(obj, &d)
	}
	c.mu.Unlock()
	p.names = append(p.names, listed...)
	c.tell(&d)
}

// endPaged ends relistPaged's listing at revision rev: it sets the
// quarantine to the listing's undecodable values, deletes what the pages
// could not (a listing out of order), and moves the Cache to rev.
func (c *Cache[S, T]) endPaged(rev int64, p *pagedListing) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	defer c.tellWaiters() // after the handlers: see WaitFor
	c.mu.Lock()
	news := c.setQuarantineLocked(p.undecodable)
	var d diffs[S, T]
	if p.unordered {
		slices.Sort(p.names)
		for name, old := range c.items {
			if _, listed := slices.BinarySearch(p.names, name); !listed {
				d.deleted = append(d.deleted, change[S, T]{old, nil})
			}
		}
		c.removeDeletedLocked(&d)
	}
	if len(c.items) < len(p.held)/2 {
		c.items = maps.Collect(maps.All(c.items)) // see replace
	}
	c.listRev = rev
	c.setRevisionLocked(rev)
	c.lists++
	c.mu.Unlock()
	c.reportQuarantine(news)
	c.tell(&d)
}

// tell reports what applying a listing (or a page of one) found, and
// tells the handlers of its changes: deletions first.
func (c *Cache[S, T]) tell(d *diffs[S, T]) {
	c.reportIndexPanics(d.panics)
	c.reportMutations(d.mutated)
	c.listing.Store(true)
	for _, ch := range d.deleted {
		c.notify(ch)
	}
	for _, ch := range d.changed {
		c.notify(ch)
	}
	c.listing.Store(false)
}

// change is one (old, new) pair for the handlers.
type change[S, T any] struct{ old, new *store.Object[S, T] }

// apply applies one watch event and calls the handlers on it.
func (c *Cache[S, T]) apply(ev store.Event[S, T]) {
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	defer c.tellWaiters() // after the handlers: see WaitFor
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
	if len(c.quarantine) > 0 { // nearly always empty: no call, no hash
		delete(c.quarantine, name)
	}
	// The handlers' old object is the one the Cache held, never ev.Prev
	// (which a Store's watch leaves out for the Cache: see leanSource): the key's value at
	// the Cache's revision, or the last valid one if that value did not
	// decode.
	old := c.item(name)
	var new *store.Object[S, T]
	if ev.Type == store.Deleted {
		delete(c.items, name)
	} else {
		new = ev.Object
		c.items[name] = new
	}
	c.last = heldItem[S, T]{name: name, obj: new, set: true}
	c.markLocked(name, old, new)
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
	defer c.tellWaiters() // after the handlers: see WaitFor
	l = c.arriveListing(l)
	c.mu.Lock()
	news := c.setQuarantineLocked(l.Undecodable)
	var d diffs[S, T]
	if !c.holdsAllLocked(l.Items) {
		c.dropMissingLocked(l.Items, &d)
		if len(d.deleted) > len(c.items) {
			// Most of the Cache left (a replica let shards go, see WithKeep):
			// a Go map keeps its buckets after deletes, so copy what is left
			// into one sized for it.
			c.items = maps.Collect(maps.All(c.items))
		}
	}
	for _, obj := range l.Items {
		c.putListedLocked(obj, &d)
	}
	c.listRev = l.Revision
	c.setRevisionLocked(l.Revision)
	c.lists++
	c.mu.Unlock()

	c.reportIndexPanics(d.panics)
	c.reportMutations(d.mutated)
	c.reportQuarantine(news)
	c.listing.Store(true)
	for _, ch := range d.deleted {
		c.notify(ch)
	}
	for _, ch := range d.changed {
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
	return len(d.deleted) + len(d.changed)
}

// diffs is what replace found: the changes for the handlers, and what the
// index functions and the mutation detector reported on the way.
type diffs[S, T any] struct {
	deleted, changed []change[S, T]
	mutated          []error
	panics           []indexPanic
}

// setQuarantineLocked makes a listing's undecodable values the quarantine,
// and returns those the Cache had not quarantined at that revision.
func (c *Cache[S, T]) setQuarantineLocked(undecodable []*store.DecodeError) (news []*store.DecodeError) {
	if len(undecodable) == 0 && len(c.quarantine) == 0 {
		return nil
	}
	quarantine := make(map[string]*store.DecodeError, len(undecodable))
	for _, e := range undecodable {
		quarantine[e.Name] = e
		if old, ok := c.quarantine[e.Name]; !ok || old.Revision != e.Revision {
			news = append(news, e)
		}
	}
	c.quarantine = quarantine
	return news
}

// holdsAllLocked reports whether items, a listing in name order, and the
// quarantine it set hold every cached object, so that none is missing:
// counted, it saves dropMissingLocked's set of every listed name (a relist
// after the watch fell behind deletes nothing). Items out of order (a
// ListWatcher that breaks List's contract) count as not holding all.
func (c *Cache[S, T]) holdsAllLocked(items []*store.Object[S, T]) bool {
	held := 0
	for i, obj := range items {
		if i > 0 && obj.Meta.Name <= items[i-1].Meta.Name {
			return false
		}
		if c.items[obj.Meta.Name] != nil {
			held++
		}
	}
	for name := range c.quarantine {
		_, listed := slices.BinarySearchFunc(items, name, func(o *store.Object[S, T], name string) int { return strings.Compare(o.Meta.Name, name) })
		if !listed && c.items[name] != nil {
			held++
		}
	}
	return held == len(c.items)
}

// dropMissingLocked deletes, in name order, the cached objects the listing
// (items, and the quarantine it set) does not hold.
func (c *Cache[S, T]) dropMissingLocked(items []*store.Object[S, T], d *diffs[S, T]) {
	listed := make(map[string]struct{}, len(items))
	for _, obj := range items {
		listed[obj.Meta.Name] = struct{}{}
	}
	for name, old := range c.items {
		if _, ok := listed[name]; !ok && c.quarantine[name] == nil {
			d.deleted = append(d.deleted, change[S, T]{old, nil})
		}
	}
	c.removeDeletedLocked(d)
}

// removeDeletedLocked removes d's deleted objects from the items, their
// indexes and the change detector, in name order, noting panicking indexers
// and mutated objects in d.
func (c *Cache[S, T]) removeDeletedLocked(d *diffs[S, T]) {
	sortChanges(d.deleted)
	c.last = heldItem[S, T]{} // see Cache.last
	for _, ch := range d.deleted {
		name := ch.old.Meta.Name
		delete(c.items, name)
		c.markLocked(name, ch.old, nil)
		d.panics = c.reindexLocked(name, ch.old, nil, d.panics)
		d.mutated = c.detect.replace(name, ch.old, nil, d.mutated)
	}
}

// putListedLocked makes obj, a listed object, the cached one. An object at
// the revision the Cache holds (the same pointer, when the listing reused
// it) keeps the cached value and is no change; one with a new UID
// replaces a deleted and recreated object, a deletion and an addition.
func (c *Cache[S, T]) putListedLocked(obj *store.Object[S, T], d *diffs[S, T]) {
	name := obj.Meta.Name
	c.last = heldItem[S, T]{} // see Cache.last
	old := c.items[name]
	held := old
	switch {
	case old != nil && old.Meta.UID == obj.Meta.UID && old.Meta.Revision == obj.Meta.Revision:
		d.mutated = c.detect.verify(name, old, d.mutated)
		return
	case old != nil && old.Meta.UID != obj.Meta.UID:
		// Deleted and recreated while the cache was blind.
		d.deleted = append(d.deleted, change[S, T]{old, nil})
		d.panics = c.reindexLocked(name, old, nil, d.panics)
		d.mutated = c.detect.replace(name, old, nil, d.mutated)
		old = nil
	}
	c.items[name] = obj
	c.markLocked(name, held, obj)
	d.panics = c.reindexLocked(name, old, obj, d.panics)
	d.mutated = c.detect.replace(name, old, obj, d.mutated)
	d.changed = append(d.changed, change[S, T]{old, obj})
}

func sortChanges[S, T any](chs []change[S, T]) {
	slices.SortFunc(chs, func(a, b change[S, T]) int { return strings.Compare(a.old.Meta.Name, b.old.Meta.Name) })
}

func (c *Cache[S, T]) reportMutations(errs []error) {
	for _, err := range errs {
		c.cfg.report(err)
	}
}
