package reconcile

import (
	"context"
	"log/slog"
	"sync"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/internal/syncwait"
)

// AddSource adds src to the Loop while it runs (or before: it then starts
// with Run), for a kind that appears later, say, and returns remove, which
// stops it: controller-runtime's Controller.Watch after Start. caches are
// run with src and stopped with it: the caches of the kinds src watches
// (a FromCacheMapped's or FromOwned's), which no Manager runs since they
// came after its Run.
//
// An added source runs on its own goroutine: its caches are started, the
// source's hints flow once each of its syncers (src, if it is one) has
// synced, and, if src is a keyLister, its keys are queued once at low
// priority then. Unlike the sources given to New, it is not listed at resync
// or term start, no Result.RequeueAfterWrite waits for it, and the Loop does not wait
// for it to sync. When it fails (its Run or a cache's returns an error,
// panics, or calls runtime.Goexit), it is logged at Error and stopped, and
// the Loop goes on.
//
// remove cancels the source and its caches and returns once every goroutine
// they ran has ended; calling it again does nothing. When Run returns,
// every added source has been stopped.
//
// AddSource returns an error wrapping ErrInvalidOption for a nil (or typed
// nil) src or cache, for a cache source over a nil cache or given a nil
// predicate, for a src that carries a ConditionWriter (the Loop's is
// chosen once, by New), for a FromOwned src whose owner kind the Loop does
// not reconcile (see FromOwned), and once Run has returned. A cache source
// serves one Loop once: to add a kind again, make a new source.
func (l *Loop[K]) AddSource(src Source[K], caches ...interface {
	Run(ctx context.Context) error
}) (remove func(), err error) {
	srcs, sw, err := flatten(src, nil, nil)
	if err != nil {
		return nil, invalid("loop %s: AddSource: %v", l.name, err)
	}
	if len(srcs) == 0 {
		return nil, invalid("loop %s: AddSource of a nil source", l.name)
	}
	if sw != nil {
		return nil, invalid("loop %s: AddSource of a source with a ConditionWriter (%T): the Loop's is chosen by New", l.name, sw)
	}
	if err := checkSources(append(srcs, l.sources...)); err != nil {
		return nil, invalid("loop %s: AddSource: %v", l.name, err)
	}
	for _, c := range caches {
		if nilness.IsNil(c) {
			return nil, invalid("loop %s: AddSource with a nil cache (%T)", l.name, c)
		}
	}
	e := &addedSource[K]{srcs: srcs, caches: caches, done: make(chan struct{})}
	if err := l.added.add(e, l); err != nil {
		return nil, err
	}
	return func() { l.added.remove(e) }, nil
}

// addedSources are the sources AddSource added.
type addedSources[K comparable] struct {
	mu      sync.Mutex
	base    context.Context // Run's, while it runs; nil before
	stopped bool            // Run has returned
	all     map[*addedSource[K]]struct{}
}

type addedSource[K comparable] struct {
	srcs   []Source[K]
	caches []interface {
		Run(ctx context.Context) error
	}
	cancel context.CancelFunc // nil until started
	done   chan struct{}      // closed when its goroutines have ended
	once   sync.Once
}

func (a *addedSources[K]) add(e *addedSource[K], l *Loop[K]) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return invalid("loop %s: AddSource after Run returned", l.name)
	}
	if a.all == nil {
		a.all = map[*addedSource[K]]struct{}{}
	}
	a.all[e] = struct{}{}
	if a.base != nil {
		e.start(a.base, l)
	}
	return nil
}

// start runs the added sources from now on, with ctx (Run's); the caller
// calls stop when Run ends.
func (a *addedSources[K]) start(ctx context.Context, l *Loop[K]) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.base = ctx
	for e := range a.all {
		e.start(ctx, l)
	}
}

// stop stops every added source and waits for them; AddSource fails from
// now on.
func (a *addedSources[K]) stop() {
	a.mu.Lock()
	a.stopped, a.base = true, nil
	all := a.all
	a.all = nil
	a.mu.Unlock()
	for e := range all {
		e.stop()
	}
}

func (a *addedSources[K]) remove(e *addedSource[K]) {
	a.mu.Lock()
	delete(a.all, e)
	a.mu.Unlock()
	e.stop()
}

// start runs e until ctx ends or it is stopped. The caller holds a.mu.
func (e *addedSource[K]) start(ctx context.Context, l *Loop[K]) {
	ctx, e.cancel = context.WithCancel(ctx)
	go func() {
		defer close(e.done)
		defer e.cancel()
		var wg sync.WaitGroup
		defer wg.Wait()
		for i, c := range e.caches {
			wg.Go(func() {
				if err := guardedRun(c.Run, ctx); err != nil && ctx.Err() == nil {
					l.log.LogAttrs(ctx, slog.LevelError, "added source's cache failed", slog.String("controller", l.name),
						slog.Int("cache", i), slog.String("what", syncwait.Describe(c)), slog.Any("error", err))
					e.cancel()
				}
			})
		}
		for i, s := range e.srcs {
			wg.Go(func() { e.run(ctx, l, i, s) })
		}
	}()
}

// run waits for s to sync, queues its keys once, and runs it.
func (e *addedSource[K]) run(ctx context.Context, l *Loop[K], i int, s Source[K]) {
	fail := func(err error) {
		if ctx.Err() == nil {
			l.log.LogAttrs(ctx, slog.LevelError, "added source failed", slog.String("controller", l.name),
				slog.Int("source", i), slog.String("what", syncwait.Describe(s)), slog.Any("error", err))
			e.cancel()
		}
	}
	done := make(chan error, 1)
	go func() { done <- l.runSource(ctx, i, s) }()
	if sy, ok := s.(syncer); ok {
		var err error
		if p := guard.Call(func() { err = sy.WaitForSync(ctx) }); p != nil {
			l.userPanic("syncer.WaitForSync", p, slog.String("what", syncwait.Describe(s)))
			err = p
		}
		if err != nil {
			fail(err)
		}
	}
	if kl, ok := s.(keyLister[K]); ok && ctx.Err() == nil {
		if p := guard.Call(func() {
			for k := range kl.Keys() {
				l.AddLow(k)
			}
		}); p != nil {
			l.userPanic("keyLister", p, slog.String("what", syncwait.Describe(s)))
		}
	}
	if err := <-done; err != nil {
		fail(err)
	}
}

func (e *addedSource[K]) stop() {
	e.once.Do(func() {
		if e.cancel == nil { // never started: Run had not begun
			close(e.done)
			return
		}
		e.cancel()
	})
	<-e.done
}

// guardedRun calls run under recovery: a Run that panics, or calls
// runtime.Goexit, fails like one that returned an error.
func guardedRun(run func(context.Context) error, ctx context.Context) (err error) {
	if p := guard.CallIsolated(func() { err = run(ctx) }); p != nil {
		return p
	}
	return err
}
