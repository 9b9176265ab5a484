package reconcile

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/syncwait"
	"github.com/steady-go/steady/internal/workqueue"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// term is one period of work: one queue, one set of workers, one fence.
type term[K comparable] struct {
	q *workqueue.Queue[K]
	// qm is the queue's metric hooks, nil without: the Loop fires Retry
	// for each retry it schedules.
	qm queue.Metrics
	// ctx is the term: workers take keys while it lasts.
	ctx context.Context
	// work is the parent of every reconcile's ctx. It keeps ctx's values
	// (the fence) and is cancelled when the term ends, with cause
	// ErrShutdown when the Loop stops, else the term's own cause.
	work context.Context
	// running holds the key each worker is reconciling, for drain reports.
	running []runningSlot[K]
	workers sync.WaitGroup
	bg      sync.WaitGroup // read-your-writes waiters, and the sharder
	served  chan struct{}  // closed when the sharder left; nil unless sharded
}

type runningSlot[K comparable] struct {
	mu   sync.Mutex
	key  K
	busy bool
	// The slots are one slice and each worker locks its own twice per
	// reconcile: the padding keeps two slots off a cache line, so that
	// the workers do not take turns owning it (false sharing).
	_ [64]byte
}

func (s *runningSlot[K]) set(k K) {
	s.mu.Lock()
	s.key, s.busy = k, true
	s.mu.Unlock()
}

func (s *runningSlot[K]) clear() {
	s.mu.Lock()
	var zero K
	s.key, s.busy = zero, false
	s.mu.Unlock()
}

// runTerm campaigns (if there is an elector), works one term, and drains it.
// It returns a non-nil error only when the Loop must stop: the drain after
// shutdown timed out.
func (l *Loop[K]) runTerm(parent, runCtx context.Context) error {
	termCtx, ok := l.termContext(runCtx)
	if !ok {
		return nil
	}
	work, cancelWork := context.WithCancelCause(context.WithoutCancel(termCtx))
	defer cancelWork(nil)
	qm := l.metrics.QueueMetrics(l.name)
	q := workqueue.New[K](workqueue.WithClock(l.clk), workqueue.WithName(l.name), workqueue.WithMetrics(qm))
	t := &term[K]{q: q, qm: qm, ctx: termCtx, work: work, running: make([]runningSlot[K], l.cfg.workers)}
	l.pmu.Lock()
	l.cur.Store(t)
	pend := l.pending
	l.pending = pendingKeys[K]{}
	l.pmu.Unlock()
	l.log.LogAttrs(termCtx, slog.LevelDebug, "term started", slog.String("controller", l.name),
		slog.Int("pending", len(pend.keys)), slog.Int("pendingDropped", pend.dropped))
	// Before the workers start, with the listing: a key both pending and
	// listed runs once.
	for _, k := range pend.order {
		if pend.keys[k] {
			l.addNow(t, k)
		} else {
			l.addLow(t, k)
		}
	}
	if l.cfg.sharder != nil {
		// Keys are listed shard by shard, as the sharder takes them.
		t.served = make(chan struct{})
		t.bg.Go(func() { defer close(t.served); l.serveShards(t) })
	} else {
		l.enqueueAll(t, true)
	}
	for i := range t.running {
		t.workers.Go(func() { l.worker(t, &t.running[i]) })
	}
	<-termCtx.Done()
	l.cur.CompareAndSwap(t, nil)
	cause := context.Cause(termCtx)
	if runCtx.Err() != nil {
		cause = ErrShutdown
	}
	cancelWork(cause)
	q.ShutDown()

	drained := make(chan struct{})
	go func() { t.workers.Wait(); t.bg.Wait(); close(drained) }()
	timer := l.clk.NewTimer(l.cfg.drainTimeout)
	defer timer.Stop()
	select {
	case <-drained:
		return nil
	case <-timer.C():
	}
	if t.served != nil {
		// Run waits for the sharder to release its shards rather than
		// abandon the release: its wait for the stuck reconciles (at most
		// the TTL) is what keeps another replica off their keys, and its
		// deletes (bounded by the TTL) hand the shards over at once instead
		// of after the lease expires. So Run returns within the drain
		// timeout or twice the TTL, whichever is longer, and no goroutine
		// of the sharder outlives it.
		<-t.served
	}
	stuck := t.stuckKeys()
	err := fmt.Errorf("%w: loop %s: %d keys still running after %v: %v", ErrDrainTimeout, l.name, len(stuck), l.cfg.drainTimeout, stuck)
	l.log.LogAttrs(parent, slog.LevelError, "drain timed out", slog.String("controller", l.name), slog.Any("keys", stuck))
	if runCtx.Err() != nil {
		return err
	}
	return nil // lost leadership: the stuck reconciles' writes are fenced; campaign again
}

// termContext is the context of the next term: runCtx itself without an
// elector or sharder, else the term campaign (or join) wins. It reports
// false when there is no term to work: runCtx ended, or the campaign
// failed (logged, and retried by the caller after a second's pause).
func (l *Loop[K]) termContext(runCtx context.Context) (context.Context, bool) {
	if l.cfg.elector == nil && l.cfg.sharder == nil {
		return runCtx, true
	}
	campaign := l.campaign
	if l.cfg.sharder != nil {
		campaign = l.join
	}
	tc, err := campaign(runCtx)
	if err != nil {
		if runCtx.Err() != nil {
			return nil, false
		}
		l.log.LogAttrs(runCtx, slog.LevelError, "campaign failed", slog.String("controller", l.name), slog.Any("error", err))
		l.sleep(runCtx, time.Second)
		return nil, false
	}
	return tc, true
}

// stuckKeys lists, sorted, the keys t's workers are still reconciling.
func (t *term[K]) stuckKeys() []string {
	var stuck []string
	for i := range t.running {
		s := &t.running[i]
		s.mu.Lock()
		if s.busy {
			stuck = append(stuck, fmt.Sprint(s.key))
		}
		s.mu.Unlock()
	}
	slices.Sort(stuck)
	return stuck
}

// enqueueAll adds every key the sources list, at low priority, and at the
// start of a term (before its workers start, so that a key listed twice
// runs once) also the keys the sources list for a new term only. A lister
// that panics is reported (userPanic); the keys it listed before are
// queued, and the other sources are listed.
func (l *Loop[K]) enqueueAll(t *term[K], termStart bool) {
	var keep func(K) bool
	if l.cfg.sharder != nil {
		keep = l.owns
	}
	l.enqueueFiltered(t, termStart, keep)
}

// enqueueFiltered is enqueueAll for the keys keep keeps (every key for a
// nil keep). With more than one listing it gathers every listing's keys
// before it queues any: a key queued as the first source lists it could be
// reconciled, done and queued again by a later source's listing, and so
// run twice in one pass. Only when two listings have keys does it keep a
// set of them to queue each once: most resyncs of such a Loop have one
// listing of every object and others of none (the fleet demo's orphaned
// groups), and a set of 100,000 keys made such a resync cost 2.5 times
// one of a single listing (BenchmarkLoopBareResync100k/sources=2). A single listing is queued as
// it is read, so the common one-cache Loop holds no copy of its keys.
func (l *Loop[K]) enqueueFiltered(t *term[K], termStart bool, keep func(K) bool) {
	type listing struct {
		i    int
		keys iter.Seq[K]
		kl   keyLister[K] // nil for a termKeyLister's listing
	}
	var ls []listing
	for i, s := range l.sources {
		if kl, ok := s.(keyLister[K]); ok {
			ls = append(ls, listing{i: i, kl: kl})
		}
		if tl, ok := s.(termKeyLister[K]); ok && termStart {
			ls = append(ls, listing{i: i, keys: tl.termKeys()})
		}
	}
	var got keyChunks[K] // the current listing's keys, with more than one listing
	// No func value per key to call AddLow through in a resync's common
	// case (one listing, no filter): a nil add has listKeys call it
	// directly.
	var add func(K)
	if keep != nil {
		add = func(k K) {
			if keep(k) {
				t.q.AddLow(k)
			}
		}
	}
	if len(ls) > 1 {
		add = func(k K) {
			if keep == nil || keep(k) {
				got.add(k)
			}
		}
	}
	termAdd := add // for a term's listing, read once a term: no matter
	if termAdd == nil {
		termAdd = t.q.AddLow
	}
	var lists []keyChunks[K] // the listings that had keys
	for _, li := range ls {
		got = nil
		if li.kl == nil {
			for k := range li.keys {
				termAdd(k)
			}
		} else if p := listKeys(li.kl, add, t.q); p != nil {
			l.userPanic("keyLister", p, slog.Int("source", li.i), slog.String("what", syncwait.Describe(l.sources[li.i])))
		}
		if len(got) > 0 {
			lists = append(lists, got)
		}
	}
	if len(lists) == 1 {
		lists[0].each(t.q.AddLow)
		return
	}
	seen := map[K]struct{}{}
	for _, keys := range lists {
		keys.each(func(k K) {
			if _, ok := seen[k]; !ok {
				seen[k] = struct{}{}
				t.q.AddLow(k)
			}
		})
	}
}

// keyChunks holds a listing's keys in chunks that double in size up to
// 8,192 keys, rather than in one slice that is copied as it grows: 100,000
// keys allocate 1.7 MB this way, 8.9 MB that way.
type keyChunks[K any] [][]K

func (c *keyChunks[K]) add(k K) {
	if n := len(*c); n == 0 || len((*c)[n-1]) == cap((*c)[n-1]) {
		*c = append(*c, make([]K, 0, 64<<min(n, 7)))
	}
	last := &(*c)[len(*c)-1]
	*last = append(*last, k)
}

func (c keyChunks[K]) each(f func(K)) {
	for _, chunk := range c {
		for _, k := range chunk {
			f(k)
		}
	}
}

// listKeys passes each key kl lists to add, or, for a nil add, queues it
// in q at low priority with no func value to call through, and returns the
// panic of a Keys (or its iteration) that panics.
func listKeys[K comparable](kl keyLister[K], add func(K), q *workqueue.Queue[K]) (p *guard.Panic) {
	defer guard.Catch(&p)
	if add == nil {
		// In batches: the queue's lock once per batch, not per key, so
		// the workers' Gets and Dones do not contend with every add.
		var b lowBatch[K]
		defer b.flush(q) // what was listed before a panic still goes in
		for k := range kl.Keys() {
			b.add(q, k)
		}
		return nil
	}
	for k := range kl.Keys() {
		add(k)
	}
	return nil
}

// lowBatch gathers keys for Queue.AddLowBatch.
type lowBatch[K comparable] struct {
	keys [32]K
	n    int
}

func (b *lowBatch[K]) add(q *workqueue.Queue[K], k K) {
	b.keys[b.n] = k
	if b.n++; b.n == len(b.keys) {
		b.flush(q)
	}
}

func (b *lowBatch[K]) flush(q *workqueue.Queue[K]) {
	q.AddLowBatch(b.keys[:b.n])
	b.n = 0
}

// termKeyLister is implemented by sources that list keys at the start of
// each term only: keys that a new term must re-derive because the hints and
// retries that carried them were dropped with the last term, and that no
// keyLister lists (FromOwned's: the owners of the children it sees, which
// include owners deleted while no Loop led).
type termKeyLister[K comparable] interface {
	termKeys() iter.Seq[K]
}

// resyncLoop adds every listed key at low priority every jittered period.
// Each pass runs on a goroutine of its own (guard.CallIsolated): a key
// lister that calls runtime.Goexit ends that pass, reported, and not the
// resyncs to come (it used to end them all without a word). Its panics
// are reported where they are caught (listKeys).
func (l *Loop[K]) resyncLoop(ctx context.Context) {
	for {
		if !l.sleep(ctx, jittered(l.cfg.resync, l.cfg.jitter)) {
			return
		}
		if p := guard.CallIsolated(l.resync); p != nil {
			l.userPanic("resync (a key lister?)", p)
		}
	}
}

// resync runs one resync pass and drops oscillation state that can no
// longer count.
func (l *Loop[K]) resync() {
	if t := l.cur.Load(); t != nil {
		l.enqueueAll(t, false)
	}
	now := l.clk.Now()
	l.mu.Lock()
	l.detectors.all(func(k K, d *oscillation.Detector) {
		if d.Idle(now) {
			l.forgetDetectorLocked(k)
		}
	})
	if l.detectors.len() < l.detectorsPeak/4 {
		// A table keeps the room of its peak: after a burst of writes to
		// many keys has converged, make it anew.
		l.detectors = l.detectors.remade()
		l.detectorsPeak = l.detectors.len()
	}
	for k, s := range l.keys {
		if !s.holdUntil.IsZero() && now.After(s.holdUntil) {
			s.holdUntil, s.throttled = time.Time{}, nil
			l.held.Add(-1)
		}
		if s.empty() {
			l.deleteKeyLocked(k)
		}
	}
	l.mu.Unlock()
}

// sleep waits d on the Loop's clock; it reports false if ctx ended first.
func (l *Loop[K]) sleep(ctx context.Context, d time.Duration) bool {
	t := l.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
