package reconcile

import (
	"context"
	"iter"
	"time"
)

// Source delivers hints: keys that are due for a comparison. A hint is never
// an instruction; a missed one is repaired by resync.
//
// Run delivers hints to sink until ctx ends, then returns nil. It returns an
// error only when it cannot go on, which ends the Loop's Run with that error.
// The Loop calls Run once, when its own Run starts, whether or not it leads
// (hints that arrive while it does not lead are dropped: each term starts
// with every key). A Source may also implement KeyLister (for resync and new
// terms) and Syncer (to be warm before the Loop leads).
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

// KeyLister is implemented by sources that can enumerate every key. The
// Loop adds every listed key at low priority on each resync and at the
// start of each leadership term.
type KeyLister[K comparable] interface {
	Keys() iter.Seq[K]
}

// Syncer is implemented by sources that must be warm (hold a full listing)
// before the Loop starts working. The Loop waits for every Syncer before it
// campaigns for leadership.
type Syncer interface {
	WaitForSync(ctx context.Context) error
}

// FromChannel returns a Source that adds every key received from ch. It
// returns when ctx ends or ch is closed.
func FromChannel[K comparable](ch <-chan K) Source[K] {
	return Mapped(ch, func(k K) []K { return []K{k} })
}

// Mapped returns a Source that receives values from ch and adds the keys fn
// maps each to: a custom mapper, for example a dependency index that turns a
// changed secret into every object that references it. It returns when ctx
// ends or ch is closed.
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
				for _, k := range fn(v) {
					sink.Add(k)
				}
			}
		}
	})
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
