package store

import "context"

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
// be quick and safe for concurrent use. A nil inject, the default, records
// nothing and costs nothing.
func WithTraceContext(inject func(ctx context.Context) string) Option {
	return func(c *config) { c.trace = inject }
}
