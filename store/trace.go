package store

import (
	"context"
	"log/slog"
	"runtime/debug"

	"github.com/steady-go/steady/internal/guard"
)

// WithTraceContext makes every write of the Store record, in
// Meta.LastWrite.Trace, the trace context that inject returns for the
// write's ctx: for OpenTelemetry, the W3C traceparent of the span in ctx
// (the tracing adapter's TraceContext function), "" when there is none.
// Watchers and caches then see who wrote and in which trace, and a
// reconcile triggered by the write can link its span to the writer's.
//
// A status write (ApplyStatus, UpdateStatus) whose ctx carries no trace
// ("" from inject) keeps the trace the value already records: the Loop's
// own conditions (Reconciling after a new object's first reconcile failed,
// Stalled) are written so, and must not cut the link from the reconcile to
// the write that caused it. Any other write without a trace records "".
//
// inject is called once per write that stores a value (not for a write that
// changes nothing, nor for a deletion), before the value is encoded; it must
// be quick and safe for concurrent use. An inject that panics counts as
// "" (no trace): the write goes on, as a tracing hook must not fail it nor
// crash the goroutine writing (a Loop's worker, for its own conditions).
// Its first panic is logged once at Error with its stack (see WithLogger),
// and the Store does not call inject again: its writes record no trace of
// their own from then on, as a hook that panicked once would likely panic
// on every write and log each time. A nil inject, the default, records
// nothing and costs nothing.
func WithTraceContext(inject func(ctx context.Context) string) Option {
	return func(c *config) { c.trace = inject }
}

// traceOf calls the Store's inject (not nil) under recovery, until it
// panics once.
func (s *Store[S, T]) traceOf(ctx context.Context) (tr string) {
	if s.traceOff.Load() {
		return ""
	}
	defer func() {
		if v := recover(); v != nil {
			tr = ""
			if s.traceOff.Swap(true) {
				return // another write's panic was logged
			}
			s.logger.LogAttrs(ctx, slog.LevelError, "store: trace inject panicked; no write of this Store records a trace of its own from now on",
				slog.String("kind", s.kind), slog.String("panic", guard.Describe(v, guard.MaxText)), slog.String("stack", string(debug.Stack())))
		}
	}()
	return s.trace(ctx)
}
