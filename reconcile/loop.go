package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/internal/objmarks"
	"github.com/steady-go/steady/internal/syncwait"
	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// ErrAlreadyRunning is returned by a second call of Loop.Run, and of the Run
// of a cache source (FromStore, FromOwned, FromCacheMapped: each serves one
// Loop).
var ErrAlreadyRunning = errors.New("reconcile: already running")

// ErrDrainTimeout is wrapped by Run's error when reconciles were still
// running DrainTimeout after Run's ctx ended; the error names their keys.
var ErrDrainTimeout = errors.New("reconcile: reconciles still running after the drain timeout")

// Loop drives a Reconciler: it takes keys from a deduplicating queue fed by
// its sources and by resync, runs Reconcile on them with a bounded number of
// workers, and applies the result table of the package documentation.
//
// A key is never reconciled by two workers at once, and any number of hints
// that arrive while a key is being reconciled give exactly one more run.
// Every reconcile runs with the per-reconcile timeout (if set) and panic
// recovery; a panic becomes a *PanicError carrying the stack.
//
// With an elector, the Loop works only while it leads: each term gets a
// fresh queue holding every listed key at low priority, and reconciles run
// under the term's context, so their store writes carry the term's fence.
//
// Create a Loop with New and start it with Run, once. Inspect and the Sink
// methods (Add, AddLow, AddAfter) are safe for concurrent use at any time.
type Loop[K comparable] struct {
	name    string
	r       Reconciler[K]
	cfg     config
	sources []Source[K]
	sw      ConditionWriter[K]
	marks   markReader[K] // sw's, when it reads objects' marks (pause.go)
	// quiet is marks' counters (objmarks.Counts), nil for none: while no
	// object is loud, the check before a reconcile reads them alone.
	quiet   *objmarks.Counts
	retry   *backoff.Retry[K] // failure counts are the keys' own (keyState)
	clk     clock.Clock
	log     *slog.Logger
	metrics metrics.Loop
	waiters []guardedWaiter[K]
	// writeWait is the write limit's wait (WithWriteLimit), nil for none.
	writeWait func(context.Context) error
	added     addedSources[K] // see AddSource

	started atomic.Bool
	cur     atomic.Pointer[term[K]] // the term being worked, nil when not leading
	// pmu guards pending, and a term begins (cur is set and pending
	// taken) under it: an add that finds cur nil parks its key under pmu
	// after looking again, so a key added as a term begins goes either to
	// pending, which the term takes, or to its queue; never lost.
	pmu     sync.Mutex
	pending pendingKeys[K] // keys added while no term runs; under pmu
	// pendingCap bounds pending (maxPending; tests lower it).
	pendingCap int
	active     atomic.Int64
	reconciles atomic.Uint64 // reconcile IDs handed out: the count of ReconcileID (recorder.idNumber)
	idPrefix   string        // ReconcileID's prefix, random per Loop
	held       atomic.Int64  // keys with a hold (oscillation backoff)
	awaiting   atomic.Int64  // keys waiting for a stored revision (keyState.awaited)
	// metricsOn is false for metrics.NopLoop: then no timestamps are taken
	// for metrics.
	metricsOn bool
	// countActive: metrics is on and not an activeWorkersReader, so the
	// Loop keeps active and calls ActiveWorkers around every reconcile.
	countActive bool
	// stalledTracked is set once a cache source reports conditions; from
	// then on stalledObjs holds the keys whose object has a Stalled
	// condition that is not False, and nstalled its size.
	stalledTracked atomic.Bool
	nstalled       atomic.Int64
	nkeys          atomic.Int64 // len(keys), read without the lock
	// requeueWarned: the deprecation of Result.Requeue has been logged.
	requeueWarned atomic.Bool

	own    ownWrites      // revisions and managers of the reconciles' writes
	judges deferredJudges // the sources' flushes of their deferred judgements
	noise  noiseLog       // the failure log's budgets (lognoise.go)
	recent failureRing    // the last failures, for pages (recent.go)

	mu   sync.Mutex
	keys map[K]*keyState
	// detectors holds the oscillation detectors of the keys whose
	// writes count, apart from keys: most are of keys that converged,
	// whose only state is a detector counting writes for a window, and
	// a keyState apiece (30 MB at 100,000 keys) would cost memory and
	// make every reconcile take the lock (nkeys). detectorsPeak is its
	// largest length since it was last made anew (see resync).
	detectors     detTable[K]
	detectorsPeak int
	// lastDetector is the key and detector keepsState or observeWrite
	// last found in detectors, or made: the next look for the same key
	// takes it without a lookup, each a cache miss in a map of every key
	// the Loop wrote. Another writer's change of a key is looked up three
	// times in a row (keepsState as it is judged, observeWrite as its
	// deferred judgement is made, at the next event, and again for the
	// Loop's own write that the change woke, often that next event).
	// Every removal from detectors clears it (forgetDetectorLocked), so
	// that while det is set, detectors holds det under key.
	lastDetector keyDetector[K]
	// reruns counts, per key, its passes in a row that ended with a rerun
	// due (see paceReruns); rerunning is its size, so that a pass with none
	// costs one atomic load while no key has a count.
	reruns      map[K]int
	rerunning   atomic.Int64
	stalledObjs map[K]struct{}
	conv        convergence[K]
	paths       pathTable // the paths the keys' detectors keep (pathtable.go)
}

// keyState is what the Loop remembers about a key between reconciles. Keys
// that are healthy and unremarkable have none.
type keyState struct {
	failures   int
	requeues   int // consecutive Requeues that wrote nothing and revision conflicts
	lastErr    error
	lastResult string
	lastDur    time.Duration // when the Loop times reconciles
	nextRetry  time.Time
	warned     bool
	freshRead  bool
	// awaited, when not nil, is where and at what revision the object
	// is stored that the key's last pass conflicted with, while the
	// caches have yet to show it (see awaitStored): the key's hints do
	// not run it. awaitFloor is the caches' revision at the start of the
	// current window, which ends at awaitUntil. A pass that begins ends
	// the wait (clearAwaitLocked).
	awaited    *wrote.Stale
	awaitFloor int64
	awaitUntil time.Time
	oscillated *oscillation.Report
	oscUntil   time.Time // one window after the hold of the last detection ends
	oscWritten bool      // Stalled has been set for oscillated
	oscCount   int       // detections in a row; the hold doubles with each
	holdUntil  time.Time // hints do not advance the key before this
	stalled    *stalledNote
	// counted is the reason metrics.Loop.Stalled last counted for the key, ""
	// since it was last cleared; stalledAt is when the Loop last wrote
	// Stalled=True on its object. Both are zero while stalled is nil.
	counted   string
	stalledAt time.Time
	// lastFailed is when the key last failed (recent.go).
	lastFailed time.Time
	// throttled is the status budget's report while its hold lasts: the
	// key is paced, not Stalled (oscillation.Throttled).
	throttled *oscillation.Report
}

type stalledNote struct{ reason, message string }

// keyDetector is a key and its oscillation detector (see lastDetector).
type keyDetector[K comparable] struct {
	key K
	det *oscillation.Detector
}

func (s *keyState) empty() bool {
	return s.failures == 0 && s.requeues == 0 && s.lastErr == nil && !s.warned && !s.freshRead && s.awaited == nil &&
		s.oscillated == nil && s.holdUntil.IsZero() && s.stalled == nil && s.throttled == nil
}

// New returns a Loop named name (used in logs, metrics and as the default
// field manager) that drives r with the hints of src.
//
// src is where keys come from: FromStore for the Loop's own kind, any other
// Source, or several joined with Sources; nil for a Loop fed only through
// its Add methods. It also carries the ConditionWriter the Loop writes Stalled
// through, if any: FromStore's, or one given with WithConditionWriter. Both
// are typed by K, so a source or status writer of another key type does
// not compile.
//
// New returns an error wrapping ErrInvalidOption for an empty name, a nil
// r, a bad option, a src that carries two ConditionWriters, a cache source
// over a nil cache (or FromStore's over a nil store, or given a nil
// predicate), or a FromOwned source whose owner kind the Loop does not
// reconcile (see FromOwned). A
// typed nil (a nil pointer or func behind the interface) counts as nil
// wherever New or an option takes an interface, and is refused: the
// reconciler, a source or status writer, an elector, metrics or a clock.
func New[K comparable](name string, r Reconciler[K], src Source[K], opts ...Option) (*Loop[K], error) {
	if name == "" {
		return nil, invalid("empty loop name")
	}
	if nilness.IsNil(r) {
		return nil, invalid("nil reconciler (%T)", r)
	}
	cfg, err := newConfig(name, opts)
	if err != nil {
		return nil, err
	}
	l := &Loop[K]{name: name, r: r, cfg: cfg, clk: cfg.clock, log: cfg.logger, metrics: cfg.metrics,
		keys: map[K]*keyState{}, reruns: map[K]int{}, stalledObjs: map[K]struct{}{}, pendingCap: maxPending, idPrefix: newIDPrefix()}
	l.initMetrics()
	if err := l.initSources(src); err != nil {
		return nil, fmt.Errorf("loop %s: %w", name, err)
	}
	bcfg := cfg.bucket
	if bcfg.Clock == nil {
		bcfg.Clock = cfg.clock
	}
	if l.retry, err = backoff.NewRetry[K](cfg.policy, bcfg); err != nil {
		return nil, invalid("loop %s: retry limit: %v", name, err)
	}
	if l.writeWait, err = l.newWriteWait(); err != nil {
		return nil, err
	}
	return l, nil
}

// newConfig applies opts (nil ones skipped) over the defaults and refuses
// combinations no single option can see: WithSharding with WithElector.
func newConfig(name string, opts []Option) (config, error) {
	cfg := defaultConfig(name)
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(&cfg); err != nil {
			return config{}, fmt.Errorf("loop %s: %w", name, err)
		}
	}
	if cfg.elector != nil && cfg.sharder != nil {
		return config{}, invalid("loop %s: WithSharding and WithElector exclude each other: a sharded Loop's replicas all work, each on its shards", name)
	}
	return cfg, nil
}

// initMetrics decides whether metric hooks are called at all (not for
// metrics.NopLoop) and, when they are, guards them against panics.
func (l *Loop[K]) initMetrics() {
	_, nop := l.cfg.metrics.(metrics.NopLoop)
	l.metricsOn = !nop
	_, busyRead := l.cfg.metrics.(activeWorkersReader)
	l.countActive = l.metricsOn && !busyRead
	if l.metricsOn {
		// The first hook that panics is logged and turns every hook off,
		// on every path that calls one (workers, sources, the queue under
		// its lock, the write limit): see guardedMetrics.
		l.metrics = &guardedMetrics{m: l.cfg.metrics, log: l.cfg.logger}
	}
}

// initSources flattens src into the Loop's sources and status writer,
// checks FromOwned owner kinds, and collects the sources that can wait
// for a revision (read-your-writes).
func (l *Loop[K]) initSources(src Source[K]) error {
	var err error
	if l.sources, l.sw, err = flatten(src, nil, nil); err != nil {
		return err
	}
	if m, ok := l.sw.(objectMarker[K]); ok {
		if l.marks = m.objectMarker(); l.marks != nil {
			l.quiet = l.marks.counts()
		}
	}
	if m, ok := l.sw.(interface{ writerLacks() string }); ok {
		if why := m.writerLacks(); why != "" {
			return invalid("StoreConditions over %s", why)
		}
	}
	if err := checkSources(l.sources); err != nil {
		return err
	}
	for _, s := range l.sources {
		if w, ok := s.(revisionWaiter); ok {
			g := guardedWaiter[K]{w: w, l: l}
			if f, ok := s.(backendFollower); ok {
				g.b = backendID(f.followedBackend())
			}
			l.waiters = append(l.waiters, g)
		}
	}
	return nil
}

// Name returns the Loop's name.
func (l *Loop[K]) Name() string { return l.name }

// Leading reports whether the Loop is working a leadership term now (always
// true while Run runs without an elector, once sources are synced).
func (l *Loop[K]) Leading() bool { return l.cur.Load() != nil }

// Run starts the sources, waits until those that are syncers are warm,
// then works (while leading, with an elector) until ctx ends. It may be
// called only once; a second call returns ErrAlreadyRunning.
//
// When ctx ends, Run stops taking keys, cancels in-flight reconciles with
// cause ErrShutdown, and waits up to the drain timeout for them (a sharded
// Loop also waits for its sharder to release its shards, at most twice the
// sharder's TTL; with an elector that has a Wait method, as lease.Elector
// describes, Run waits for its release too, at most 30 seconds, logging at
// Error if it gives up). It returns nil after a clean stop; an error wrapping ErrDrainTimeout that names the
// keys still running if the drain timed out; an error wrapping ErrNotSynced
// if ctx ended while it waited for a source to sync (while it waits, it
// logs at Warn every 30 seconds which source, how long, and the
// source's last list or watch error); or the error of a Source that failed.
func (l *Loop[K]) Run(ctx context.Context) error {
	if !l.started.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	ctx = l.limitWrites(ctx)
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var bg sync.WaitGroup
	var srcErr error
	var srcOnce sync.Once
	for i, s := range l.sources {
		bg.Go(func() {
			if err := l.runSource(runCtx, i, s); err != nil && runCtx.Err() == nil {
				srcOnce.Do(func() { srcErr = fmt.Errorf("reconcile: loop %s: source %d: %w", l.name, i, err) })
				stop(srcErr)
			}
		})
	}
	bg.Go(func() { l.resyncLoop(runCtx) })
	bg.Go(func() { l.summaryLoop(runCtx) })
	l.added.start(runCtx, l)
	l.metrics.MaxConcurrency(l.name, l.cfg.workers)
	if r, ok := l.cfg.metrics.(activeWorkersReader); ok {
		l.metrics.(*guardedMetrics).activeWorkersFunc(r, l.name, l.busyWorkers)
	}

	err := l.waitSynced(runCtx)
	for err == nil && runCtx.Err() == nil {
		err = l.runTerm(ctx, runCtx)
	}
	stop(nil)
	bg.Wait()
	if l.cfg.elector != nil {
		l.waitReleased(ctx)
	}
	l.added.stop()
	l.pmu.Lock()
	l.pending = pendingKeys[K]{} // no term will take them
	l.pmu.Unlock()
	if srcErr != nil {
		return errors.Join(srcErr, err)
	}
	return err
}

// runSource runs s. A Run that panics, or calls runtime.Goexit (which
// used to end the source's goroutine without a word, and leave the Loop
// without its hints, or a Loop.AddSource stop waiting for it for ever), is
// reported (userPanic) and fails like a Run that returned an error. Run
// runs on a goroutine of its own (guard.CallIsolated).
func (l *Loop[K]) runSource(ctx context.Context, i int, s Source[K]) (err error) {
	if p := guard.CallIsolated(func() { err = s.Run(ctx, l) }); p != nil {
		l.userPanic("Source", p, slog.Int("source", i), slog.String("what", syncwait.Describe(s)))
		return p
	}
	return err
}

// waitSynced waits for every source that is a syncer, logging at Warn
// every 30 seconds which one it waits for, how long, and its last list
// or watch error. It returns an error wrapping ErrNotSynced if ctx ends
// first.
func (l *Loop[K]) waitSynced(ctx context.Context) error {
	for i, s := range l.sources {
		sy, ok := s.(syncer)
		if !ok {
			continue
		}
		start := l.clk.Now()
		what := fmt.Sprintf("loop %s: source %d (%s)", l.name, i, syncwait.Describe(s))
		err := syncwait.Wait(ctx, l.clk, sy.WaitForSync, func(waited time.Duration) {
			l.log.LogAttrs(ctx, slog.LevelWarn, "waiting for a source to sync", slog.String("controller", l.name),
				slog.Int("source", i), slog.String("what", syncwait.Describe(s)), slog.Duration("waited", waited),
				slog.Any("lastError", syncwait.LastError(s)))
		})
		if p, ok := err.(*guard.Panic); ok {
			l.userPanic("syncer.WaitForSync", p, slog.Int("source", i), slog.String("what", syncwait.Describe(s)))
			return fmt.Errorf("reconcile: %s: WaitForSync %w", what, p)
		}
		if err != nil && ctx.Err() == nil {
			// The source will never sync (a Cache whose Run returned):
			// waiting for ctx would only hide why.
			return fmt.Errorf("reconcile: %s: WaitForSync: %w", what, err)
		}
		if err != nil {
			return notSynced(what, l.clk.Now().Sub(start), syncwait.Why(ctx, err, syncwait.LastError(s)))
		}
	}
	return nil
}
