// Package manager runs several reconcile Loops over shared caches with one
// leader election or sharded among replicas: caches first, Loops once they
// synced, an ordered stop, and Ready and Live for health endpoints.
package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/electwait"
	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/internal/syncwait"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
)

// ErrNotReady is wrapped by Manager.Ready's error while the Manager is not
// ready; ErrNotLive by Manager.Live's error once a part has failed.
var (
	ErrNotReady = errors.New("manager: not ready")
	ErrNotLive  = errors.New("manager: not live")
)

// Cache is what a Manager needs of a shared informer cache; *cache.Cache
// implements it.
type Cache interface {
	Run(ctx context.Context) error
	WaitForSync(ctx context.Context) error
	HasSynced() bool
}

// Runner is what a Manager needs of a Loop; *reconcile.Loop implements it.
type Runner interface {
	Name() string
	Run(ctx context.Context) error
}

// Manager runs several Loops over shared caches with one elector.
//
// Run starts in order: every cache, then (once all are synced) the
// leadership campaign if there is an elector, then every Loop. It stops in
// the reverse order when its ctx ends: the Loops first (each drains its
// reconciles), then the campaign (releasing leadership: an elector with a
// Wait method, as lease.Elector describes, is waited for, up to 30 seconds,
// until its release is done), then the caches.
//
// With an elector, pass Manager.Elector to each Loop (reconcile.WithElector): the
// Manager campaigns once and every Loop works during the Manager's terms,
// under the same fence.
//
// With WithSharding instead, every Loop added runs sharded: each replica
// works on its shards of each Loop's keys, and no Loop takes an elector.
//
// Ready reports whether every cache has synced and every Loop is running;
// Live whether nothing has failed. Both are cheap, for health endpoints.
// Add caches and loops before Run; a Manager runs once.
type Manager struct {
	elector  lease.Elector
	log      *slog.Logger
	shared   *sharedElector
	sharding *sharding // nil unless WithSharding
	optErr   error     // a bad option, returned by AddLoop and Run
	// writeWait is WithWriteLimit's wait, nil for none.
	writeWait func(context.Context) error

	mu      sync.Mutex
	caches  []Cache
	loops   []Runner
	names   map[string]bool // of loops
	running bool
	started bool
	failed  error
	// returned names the first Loop whose Run returned nil while the
	// Manager ran: no failure, but that Loop runs no more.
	returned string
}

// Option configures a Manager.
type Option func(*Manager)

// WithElector makes the Manager campaign with e; its Loops get the terms
// through Manager.Elector. A typed nil e (such as a nil
// *lease.StoreElector) makes Run return an error wrapping
// reconcile.ErrInvalidOption before it starts anything.
func WithElector(e lease.Elector) Option {
	return func(m *Manager) { m.elector = e }
}

// WithWriteLimit paces the writes of every Loop of the Manager with wait,
// a token bucket's wait such as backoff.Bucket's Wait, so that a bug cannot
// hammer a shared store: each Txn that a write through a typed Store sends
// from a Loop's reconcile waits first. An error from wait fails the write
// with it, and a wait that panics fails the write with an error naming the
// panic; either way nothing is written. A Loop's own limit
// (reconcile.WithWriteLimit) applies on top of it. A nil wait paces
// nothing.
func WithWriteLimit(wait func(context.Context) error) Option {
	return func(m *Manager) { m.writeWait = wait }
}

// WithLogger sets the Manager's logger (default slog.Default(), as it is
// when New runs). While it waits for a cache to sync, the Manager logs at
// Warn every 30 seconds which cache, how long, and the cache's last list or
// watch error.
func WithLogger(l *slog.Logger) Option {
	return func(m *Manager) {
		if l != nil {
			m.log = l
		}
	}
}

// WithSharding makes every Loop added to the Manager one replica of a
// sharded Loop, as reconcile.WithSharding does for one Loop: AddLoop gives
// the Loop a shard.Sharder named after it (its Name), on backend b, for the
// replica identity (a pod name: distinct per replica, stable across its
// restarts), with opts (shard.WithShards, WithTTL, WithRetryPeriod...;
// logging to the Manager's logger unless opts set one). Every replica of the
// controller runs a Manager with the same Loops, the same b and opts, and
// its own identity. It is controller-runtime's manager.Options for
// leader election, turned into a share of the work for every replica.
//
// A bad argument (a nil b, an identity that is empty or holds "/", an
// invalid shard option) makes AddLoop and Run return an error wrapping
// reconcile.ErrInvalidOption. So do WithSharding and WithElector together.
// AddLoop refuses, with an error that says why, a Loop that cannot be
// sharded this way: one given its own reconcile.WithSharding or an elector
// (reconcile.WithElector, Manager.Elector included: a sharded Manager does
// not campaign), a Runner that is not a *reconcile.Loop (or a wrapper
// embedding one), and a second Loop of the same name (its replicas would
// share the first one's shards).
//
// Each Loop's caches hold the whole kind: a cache shared by several Loops
// cannot follow one Loop's shards. To cache only one Loop's shards, shard
// it yourself (shard.New, reconcile.WithSharding, cache.WithKeep of its
// Sharder's Caches) and run it in a Manager without WithSharding.
func WithSharding(b kv.Backend, identity string, opts ...shard.Option) Option {
	return func(m *Manager) {
		m.sharding = &sharding{b: b, identity: identity, opts: opts}
	}
}

// sharding is WithSharding's arguments.
type sharding struct {
	b        kv.Backend
	identity string
	opts     []shard.Option
}

// New returns an empty Manager. A bad option is reported by AddLoop and
// Run (New has no error result).
func New(opts ...Option) *Manager {
	m := &Manager{log: slog.Default(), shared: newSharedElector()}
	for _, o := range opts {
		if o != nil {
			o(m)
		}
	}
	if sh := m.sharding; sh != nil {
		// Checked once here with a stand-in name, so a Manager with no
		// Loop yet still reports a bad identity or backend from Run.
		switch _, err := shard.New(sh.b, "manager", sh.identity, sh.options(m.log)...); {
		case err != nil:
			m.optErr = invalid("WithSharding: %v", err)
		case m.elector != nil:
			m.optErr = invalid("WithSharding and WithElector exclude each other: a sharded Manager's replicas all work, each on its shards")
		}
	}
	return m
}

func (s *sharding) options(log *slog.Logger) []shard.Option {
	return append([]shard.Option{shard.WithLogger(log)}, s.opts...)
}

// shardable is what AddLoop needs of a Loop to shard it;
// *reconcile.Loop implements it.
type shardable interface {
	SetSharding(*shard.Sharder) error
}

// AddCache adds a cache the Manager runs and waits for before any Loop
// starts. It returns an error after Run has started, for a nil cache (a
// typed nil, such as a nil *cache.Cache, included), and for a cache added
// before (a second Run of it would fail, and the Manager's with it).
func (m *Manager) AddCache(c Cache) error {
	if nilness.IsNil(c) {
		return invalid("nil cache (%T)", c)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return errors.New("manager: add after Run")
	}
	if slices.ContainsFunc(m.caches, func(o Cache) bool { return samePart(o, c) }) {
		return invalid("cache %T added twice", c)
	}
	m.caches = append(m.caches, c)
	return nil
}

// AddLoop adds a Loop. It returns an error after Run has started, for a
// nil Loop, and for a Loop whose name an added Loop has: Loops are told
// apart by name (in logs, metrics, the debug page and sharding), and the
// same Loop added twice would fail its second Run. With WithSharding, it
// also returns one for a bad WithSharding argument or a Loop it cannot
// shard (see WithSharding), and then the Loop is not added.
func (m *Manager) AddLoop(l Runner) error {
	if nilness.IsNil(l) {
		return invalid("nil loop (%T)", l)
	}
	if m.optErr != nil {
		return m.optErr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return errors.New("manager: add after Run")
	}
	name := l.Name()
	if m.names[name] {
		return invalid("loop %q added twice: Loops are told apart by name", name)
	}
	if m.sharding != nil {
		if err := m.shard(l, name); err != nil {
			return err
		}
	}
	if m.names == nil {
		m.names = map[string]bool{}
	}
	m.names[name] = true
	m.loops = append(m.loops, l)
	return nil
}

// shard gives l, named name, a Sharder of the Manager's WithSharding.
func (m *Manager) shard(l Runner, name string) error {
	sl, ok := l.(shardable)
	if !ok {
		return invalid("loop %q: %T is not a *reconcile.Loop, so it cannot be sharded (WithSharding)", name, l)
	}
	sh, err := shard.New(m.sharding.b, name, m.sharding.identity, m.sharding.options(m.log)...)
	if err != nil {
		return invalid("loop %q: %v", name, err)
	}
	if err := sl.SetSharding(sh); err != nil {
		return fmt.Errorf("manager: loop %q cannot join the Manager's sharding (WithSharding): %w", name, err)
	}
	return nil
}

// samePart reports whether a and b are one part: the same pointer (every
// cache of this project is one) to a value that is not zero-sized (those
// may share an address). Equal values of another kind may be two parts.
func samePart(a, b any) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta.Kind() == reflect.Pointer && ta.Elem().Size() != 0 && a == b
}

// Elector returns the elector to give each of the Manager's Loops
// (reconcile.WithElector): a Loop's Campaign returns while the Manager leads, with the
// Manager's fence, and its term ends with the Manager's term or the Loop's
// ctx. Without a Manager elector, Campaign returns at once (always leading).
func (m *Manager) Elector() lease.Elector { return m.shared }

// Run runs the Manager until ctx ends; see Manager. It returns the first
// error of a part that failed (a Loop or cache whose Run returned an error),
// joined with the errors of the stop, or, if ctx ended while it waited for
// a cache to sync, an error wrapping reconcile.ErrNotSynced that names the cache and
// its last list or watch error. A part whose Run or WaitForSync panics
// fails like one that returned an error (the panic is logged at Error with
// its stack); an elector whose Campaign panics is logged and campaigned
// with again, like one that failed.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return errors.New("manager: Run called twice")
	}
	m.started = true
	caches, loops := append([]Cache(nil), m.caches...), append([]Runner(nil), m.loops...)
	m.mu.Unlock()
	if m.optErr != nil {
		return m.optErr
	}
	if m.elector != nil && nilness.IsNil(m.elector) {
		return invalid("nil elector (%T)", m.elector)
	}

	ctx = storeaccess.WithWriteLimit(ctx, m.writeWait)
	failCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	record := func(what string, err error) {
		if err == nil || ctx.Err() != nil {
			return
		}
		err = fmt.Errorf("manager: %s: %w", what, err)
		m.mu.Lock()
		if m.failed == nil {
			m.failed = err
		}
		m.mu.Unlock()
		m.log.LogAttrs(ctx, slog.LevelError, "manager part failed", slog.Any("error", err))
		fail(err)
	}

	// 1. Caches.
	cacheCtx, stopCaches := context.WithCancel(context.WithoutCancel(ctx))
	var cacheWG sync.WaitGroup
	for i, c := range caches {
		cacheWG.Go(func() { record(fmt.Sprintf("cache %d", i), m.run(c.Run, cacheCtx)) })
	}
	defer func() { stopCaches(); cacheWG.Wait() }()
	for i, c := range caches {
		what := fmt.Sprintf("cache %d (%s)", i, syncwait.Describe(c))
		start := time.Now()
		err := syncwait.Wait(failCtx, clock.Real{}, c.WaitForSync, func(waited time.Duration) {
			m.log.LogAttrs(ctx, slog.LevelWarn, "manager waiting for a cache to sync", slog.Int("cache", i),
				slog.String("what", syncwait.Describe(c)), slog.Duration("waited", waited), slog.Any("lastError", syncwait.LastError(c)))
		})
		if p, ok := err.(*guard.Panic); ok {
			m.log.LogAttrs(ctx, slog.LevelError, "manager: WaitForSync panicked", slog.String("what", what),
				slog.String("panic", guard.Describe(p.Value, guard.MaxText)), slog.String("stack", string(p.Stack)))
			return fmt.Errorf("manager: %s: WaitForSync %w", what, p)
		}
		if err != nil {
			if failed := m.failure(); failed != nil {
				return failed
			}
			return syncwait.NotSynced(reconcile.ErrNotSynced, what, time.Since(start), syncwait.Why(failCtx, err, syncwait.LastError(c)))
		}
	}

	// 2. Leadership. Like the caches', the campaign's ctx ends only once
	// the Loops stopped: ending it with ctx would release leadership while
	// the Loops still drain their reconciles.
	electCtx, stopElect := context.WithCancel(context.WithoutCancel(failCtx))
	var electWG sync.WaitGroup
	if m.elector != nil {
		electWG.Go(func() { m.campaign(electCtx) })
	} else {
		m.shared.publish(context.WithoutCancel(ctx), store.Fence{}, false)
	}
	defer func() {
		stopElect()
		electWG.Wait()
		if m.elector != nil {
			m.waitReleased(ctx)
		}
	}()

	// 3. Loops.
	var loopWG sync.WaitGroup
	for _, l := range loops {
		loopWG.Go(func() {
			record("loop "+l.Name(), m.run(l.Run, failCtx))
			m.mu.Lock()
			if m.returned == "" && failCtx.Err() == nil {
				m.returned = l.Name()
			}
			m.mu.Unlock()
		})
	}
	m.mu.Lock()
	m.running = true
	m.mu.Unlock()
	<-failCtx.Done()
	loopWG.Wait()
	m.mu.Lock()
	m.running = false
	m.mu.Unlock()
	return m.failure()
}

// run calls a part's Run under recovery: one that panics fails like one
// that returned an error, which ends the Manager's Run.
func (m *Manager) run(run func(context.Context) error, ctx context.Context) (err error) {
	if p := guard.Call(func() { err = run(ctx) }); p != nil {
		m.log.LogAttrs(ctx, slog.LevelError, "manager part panicked", slog.String("panic", guard.Describe(p.Value, guard.MaxText)),
			slog.String("stack", string(p.Stack)))
		return p
	}
	return err
}

func (m *Manager) failure() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed
}

// waitReleased waits for the elector to release its last term (its
// optional Wait method), so the release is done before the caches stop
// and Run returns.
func (m *Manager) waitReleased(ctx context.Context) {
	ok, p := electwait.Wait(m.elector, clock.Real{})
	switch {
	case p != nil:
		m.log.LogAttrs(ctx, slog.LevelError, "manager: elector's Wait panicked",
			slog.String("panic", guard.Describe(p.Value, guard.MaxText)), slog.String("stack", string(p.Stack)))
	case !ok:
		m.log.LogAttrs(ctx, slog.LevelError, "manager: elector's Wait did not return; stopping without it",
			slog.Duration("waited", electwait.Limit), slog.String("elector", fmt.Sprintf("%T", m.elector)))
	}
}

// campaign keeps campaigning while ctx lasts and publishes each term.
func (m *Manager) campaign(ctx context.Context) {
	for ctx.Err() == nil {
		var term context.Context
		var fence store.Fence
		var err error
		if p := guard.Call(func() { term, fence, err = m.elector.Campaign(ctx) }); p != nil {
			m.log.LogAttrs(ctx, slog.LevelError, "manager: Elector.Campaign panicked",
				slog.String("panic", guard.Describe(p.Value, guard.MaxText)), slog.String("stack", string(p.Stack)))
			err = p
		}
		if err != nil {
			if ctx.Err() == nil {
				m.log.LogAttrs(ctx, slog.LevelError, "manager campaign failed", slog.Any("error", err))
				t := time.NewTimer(time.Second)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
			}
			continue
		}
		m.shared.publish(term, fence, true)
		<-term.Done()
		m.shared.publish(nil, store.Fence{}, false)
	}
}

// Ready returns nil once every cache has synced and every Loop is
// running, else an error wrapping ErrNotReady that says what is missing:
// for a cache that has not synced, which one and its last list or watch
// error (a cache that has a LastError method, as *cache.Cache does); a
// Loop whose Run returned nil before the Manager's ctx ended (no failure,
// so Live stays nil) is named too. A
// cache that quarantines values (it has a Quarantined method, as
// *cache.Cache does) makes Ready fail too, naming the first of them (key,
// revision and why) and how many there are: a value that does not decode is
// skipped and the rest of its kind is served, but nothing reconciles that
// key until someone writes a valid value or purges it.
func (m *Manager) Ready() error {
	m.mu.Lock()
	caches, running, failed, returned := m.caches, m.running, m.failed, m.returned
	m.mu.Unlock()
	if failed != nil {
		return fmt.Errorf("%w: %w", ErrNotReady, failed)
	}
	for i, c := range caches {
		if !c.HasSynced() {
			if err := syncwait.LastError(c); err != nil {
				return fmt.Errorf("%w: cache %d (%s) has not synced; last error: %w", ErrNotReady, i, syncwait.Describe(c), err)
			}
			return fmt.Errorf("%w: cache %d (%s) has not synced", ErrNotReady, i, syncwait.Describe(c))
		}
	}
	for i, c := range caches {
		q, ok := c.(interface{ Quarantined() []*store.DecodeError })
		if !ok {
			continue
		}
		if bad := q.Quarantined(); len(bad) > 0 {
			return fmt.Errorf("%w: cache %d (%s): %d undecodable value(s) quarantined, the first at key %.128q: %w",
				ErrNotReady, i, syncwait.Describe(c), len(bad), bad[0].Key, bad[0])
		}
	}
	if !running {
		return fmt.Errorf("%w: loops are not running", ErrNotReady)
	}
	if returned != "" {
		return fmt.Errorf("%w: loop %q returned and runs no more", ErrNotReady, returned)
	}
	return nil
}

// Live returns nil unless a cache or Loop has failed, then an error
// wrapping ErrNotLive and the failure.
func (m *Manager) Live() error {
	if err := m.failure(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotLive, err)
	}
	return nil
}

// sharedElector hands the Manager's current term to every Loop.
type sharedElector struct {
	mu      sync.Mutex
	term    context.Context // nil when not leading
	fence   store.Fence
	fenced  bool
	changed chan struct{}
}

func newSharedElector() *sharedElector { return &sharedElector{changed: make(chan struct{})} }

func (s *sharedElector) publish(term context.Context, f store.Fence, fenced bool) {
	s.mu.Lock()
	s.term, s.fence, s.fenced = term, f, fenced
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// Campaign implements lease.Elector for one Loop.
func (s *sharedElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	if err := ctx.Err(); err != nil {
		// lease.Elector: a Campaign whose ctx ended returns its error, not
		// a term that ended before it began.
		return nil, store.Fence{}, err
	}
	for {
		s.mu.Lock()
		term, f, fenced, changed := s.term, s.fence, s.fenced, s.changed
		s.mu.Unlock()
		if term != nil && term.Err() == nil {
			loopTerm, cancel := context.WithCancelCause(ctx)
			stop := context.AfterFunc(term, func() { cancel(context.Cause(term)) })
			context.AfterFunc(loopTerm, func() { stop() })
			if fenced {
				loopTerm = lease.WithFence(loopTerm, f)
			}
			return loopTerm, f, nil
		}
		select {
		case <-ctx.Done():
			return nil, store.Fence{}, ctx.Err()
		case <-changed:
		}
	}
}

// invalid is an error wrapping reconcile.ErrInvalidOption.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: manager: %s", reconcile.ErrInvalidOption, fmt.Sprintf(format, args...))
}
