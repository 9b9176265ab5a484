package reconcile

import (
	"context"
	"iter"
	"log/slog"
	"time"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/internal/nilness"
)

// Source delivers hints: keys that are due for a comparison. A hint is never
// an instruction; a missed one is repaired by resync.
//
// Run delivers hints to sink until ctx ends, then returns nil. It returns an
// error only when it cannot go on, which ends the Loop's Run with that error;
// a Run that panics, or calls runtime.Goexit (Run runs on a goroutine of
// its own), is reported (logged at Error, counted as a reconcile panic)
// and ends the Loop's Run the same way.
// The Loop calls Run once, when its own Run starts, whether or not it leads.
// A hint (Add or AddLow) that arrives while no term runs (before the first
// term, while caches sync or the Loop campaigns, and between terms) is kept
// in a deduplicated pending set of up to 100,000 keys and added to the next
// term's queue as it begins, with every key its sources list (a key both
// pending and listed runs once); past the cap further hints are dropped and
// logged at Warn, once per gap between terms, and AddAfter is dropped while
// no term runs. Pending hints are discarded when the Loop's Run returns.
// So a source that lists nothing, such as Mapped's, loses no hint for want
// of a term.
//
// A Source may also have any of these methods, which the Loop looks for
// when New is called (by method set: no interface to name):
//   - Keys() iter.Seq[K]: its keys are added at low priority at every
//     resync and new term; a key several sources list is added once per
//     pass (every listing is read before any of its keys is queued); a
//     Keys (or its iteration) that panics is reported like a reconcile
//     panic, the keys listed before it queued;
//   - WaitForSync(ctx) error: the Loop waits for it to be warm (hold a full
//     listing) before it campaigns; one that panics ends Run with an error;
//   - Revision() int64 and WaitFor(ctx, revision int64) error (both):
//     Result.RequeueAfterWrite waits until Revision reaches the highest
//     revision the reconcile wrote (WaitFor returns once it has, or with
//     ctx's error), or for the read-your-writes timeout; a Revision that
//     panics reads as behind, a WaitFor that panics as a timeout. The
//     cache sources (FromStore, FromOwned, FromCacheMapped) wait only for
//     writes to the backend their cache follows (a write to another
//     store has revisions of its own); any other source waits for the
//     highest revision written to any backend;
//   - ConditionWriter[K]: the Loop writes its Stalled condition through it
//     (FromStore's source is one; WithConditionWriter attaches one to any
//     source).
type Source[K comparable] interface {
	Run(ctx context.Context, sink Sink[K]) error
}

// Sink is where a Source delivers hints. The Loop implements it; its
// methods are safe for concurrent use and never block on reconciles.
type Sink[K comparable] interface {
	// Add makes key due now (it runs once even if added many times before a
	// worker takes it). It does not shorten the backoff of a key that
	// oscillates.
	Add(key K)
	// AddLow makes key due at low priority, the way resync does; it never
	// advances a key waiting in backoff.
	AddLow(key K)
	// AddAfter makes key due after d.
	AddAfter(key K, d time.Duration)
}

// keyLister is implemented by sources that can enumerate every key. The
// Loop adds every listed key at low priority on each resync and at the
// start of each leadership term. A Keys (or its iteration) that panics is
// reported like a reconcile panic; the keys listed before it are queued.
type keyLister[K comparable] interface {
	Keys() iter.Seq[K]
}

// syncer is implemented by sources that must be warm (hold a full listing)
// before the Loop starts working. The Loop waits for every syncer before it
// campaigns for leadership. A WaitForSync that panics ends the Loop's Run
// with an error naming the panic.
type syncer interface {
	WaitForSync(ctx context.Context) error
}

// revisionWaiter is implemented by sources that follow a store, such as the
// cache sources: after a reconcile that returns Result{RequeueAfterWrite: true}, the
// Loop runs the key again once every revisionWaiter's Revision has reached
// the highest revision the reconcile wrote (or after the read-your-writes
// timeout). A Revision that panics reads as behind, a WaitFor that panics
// as a wait that timed out; each panic is reported like a reconcile panic.
type revisionWaiter interface {
	// Revision returns the store revision the source reflects now.
	Revision() int64
	// WaitFor returns once the source reflects revision, or with ctx's
	// error.
	WaitFor(ctx context.Context, revision int64) error
}

// backendFollower is implemented by the cache sources: the backend their
// cache follows, so that a revision written to one backend is waited for
// only by caches over it. A revisionWaiter without it (a user's source)
// follows an unknown backend and waits for every write, as before backends
// were told apart.
type backendFollower interface {
	followedBackend() any
}

// Sources joins several sources into one: the Loop runs each, and looks for
// the optional interfaces (see Source) on each. Nil sources are left out; a
// typed nil one (a nil pointer or func) makes New fail. At most one of them
// may carry a ConditionWriter, else New fails.
func Sources[K comparable](srcs ...Source[K]) Source[K] { return sourceList[K](srcs) }

type sourceList[K comparable] []Source[K]

// Run runs every source until ctx ends, or until one fails (returns an
// error, panics, or calls runtime.Goexit): then it stops the others and returns that error. A Loop does not call it (it runs the
// joined sources itself); it is there for code that runs a Source directly.
func (sl sourceList[K]) Run(ctx context.Context, sink Sink[K]) error {
	srcs, _, err := flatten[K](sl, nil, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(srcs))
	for _, s := range srcs {
		go func() {
			var err error
			if p := guard.CallIsolated(func() { err = s.Run(ctx, sink) }); p != nil {
				// A Run that panics, or calls runtime.Goexit (which
				// used to leave this Run waiting for it for ever),
				// fails like one that returned an error.
				err = p
			}
			errs <- err
		}()
	}
	var first error
	for range srcs {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// WithConditionWriter returns src with w as the ConditionWriter the Loop writes
// its Stalled condition through, in place of any src carries itself (such as
// FromStore's). A nil w leaves src as it is; a typed nil one (a nil
// pointer) makes New fail.
func WithConditionWriter[K comparable](src Source[K], w ConditionWriter[K]) Source[K] {
	if w == nil {
		return src
	}
	return withStatus[K]{src: src, w: w}
}

type withStatus[K comparable] struct {
	src Source[K]
	w   ConditionWriter[K]
}

// Run runs the wrapped source; a nil one delivers nothing.
func (s withStatus[K]) Run(ctx context.Context, sink Sink[K]) error {
	if s.src == nil {
		<-ctx.Done()
		return nil
	}
	return s.src.Run(ctx, sink)
}

// flatten unpacks src (Sources lists and WithConditionWriter wrappers) into
// the sources the Loop runs and the ConditionWriter it writes through. A
// ConditionWriter given with WithConditionWriter replaces those found inside the
// source it wraps; two found side by side are an error.
func flatten[K comparable](src Source[K], out []Source[K], sw ConditionWriter[K]) ([]Source[K], ConditionWriter[K], error) {
	switch s := src.(type) {
	case nil:
		return out, sw, nil
	case sourceList[K]:
		for _, inner := range s {
			var err error
			if out, sw, err = flatten(inner, out, sw); err != nil {
				return nil, nil, err
			}
		}
		return out, sw, nil
	case withStatus[K]:
		var err error
		if out, _, err = flatten(s.src, out, nil); err != nil {
			return nil, nil, err
		}
		if nilness.IsNil(s.w) {
			return nil, nil, invalid("nil status writer (%T)", s.w)
		}
		sw, err = joinStatus(sw, s.w)
		return out, sw, err
	}
	if nilness.IsNil(src) {
		// A nil pointer or func behind the interface: it would panic
		// on the Loop's goroutine when run.
		return nil, nil, invalid("nil source (%T)", src)
	}
	if w, ok := src.(ConditionWriter[K]); ok {
		var err error
		if sw, err = joinStatus(sw, w); err != nil {
			return nil, nil, err
		}
	}
	return append(out, src), sw, nil
}

func joinStatus[K comparable](have, add ConditionWriter[K]) (ConditionWriter[K], error) {
	if have != nil {
		return nil, invalid("two status writers among the sources (%T and %T)", have, add)
	}
	return add, nil
}

// FromChannel returns a Source that adds every key received from ch. It
// returns when ctx ends or ch is closed.
func FromChannel[K comparable](ch <-chan K) Source[K] {
	return Mapped(ch, func(k K) []K { return []K{k} })
}

// Mapped returns a Source that receives values from ch and adds the keys fn
// maps each to: a custom mapper, for example a dependency index that turns a
// changed secret into every object that references it. It returns when ctx
// ends or ch is closed. A call of fn that panics is reported (to the Loop,
// like a reconcile panic, or to slog.Default when the sink is not a Loop)
// and its value maps to no key; the next values are mapped.
func Mapped[T any, K comparable](ch <-chan T, fn func(T) []K) Source[K] {
	return SourceFunc[K](func(ctx context.Context, sink Sink[K]) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case v, ok := <-ch:
				if !ok {
					return nil
				}
				keys, p := mapValue(fn, v)
				if p != nil {
					reportPanic(sink, "mapper", p)
				}
				for _, k := range keys {
					sink.Add(k)
				}
			}
		}
	})
}

// panicReporter is the one thing any source of this package asks of the
// Loop beyond Sink (the cache sources ask more: loopHooks): reporting a
// panic of user code it ran (logged, counted) like the Loop's own.
type panicReporter interface {
	userPanic(what string, p *guard.Panic, attrs ...slog.Attr)
}

// reportPanic reports a panic of a function of the user's that a source
// called: to the Loop when sink is one (panicReporter), else at Error to
// slog.Default.
func reportPanic(sink any, what string, p *guard.Panic, attrs ...slog.Attr) {
	if r, ok := sink.(panicReporter); ok {
		r.userPanic(what, p, attrs...)
		return
	}
	attrs = append(attrs, slog.String("panic", guard.Describe(p.Value, guard.MaxText)), slog.String("stack", string(p.Stack)))
	slog.Default().LogAttrs(context.Background(), slog.LevelError, what+" panicked", attrs...)
}

func mapValue[T any, K comparable](fn func(T) []K, v T) (keys []K, p *guard.Panic) {
	defer guard.Catch(&p)
	return fn(v), nil
}

// SourceFunc adapts a function to a Source.
type SourceFunc[K comparable] func(ctx context.Context, sink Sink[K]) error

// Run calls f(ctx, sink).
func (f SourceFunc[K]) Run(ctx context.Context, sink Sink[K]) error { return f(ctx, sink) }

// Keys returns a Source that delivers no hints but lists keys: every key
// keys yields is added at low priority at each resync and each new term.
// Use it for a fixed or externally tracked key set.
func Keys[K comparable](keys func() iter.Seq[K]) Source[K] { return keyList[K](keys) }

type keyList[K comparable] func() iter.Seq[K]

func (keyList[K]) Run(ctx context.Context, _ Sink[K]) error {
	<-ctx.Done()
	return nil
}

func (f keyList[K]) Keys() iter.Seq[K] { return f() }
