package otelsteady

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// TraceContext returns the W3C traceparent of the span in ctx, "" when ctx
// carries no valid span. Give it to store.WithTraceContext, so every write
// records the trace it was made in.
func TraceContext(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// LastWriteCache is what FromCache needs of a cache; *cache.Cache
// implements it.
type LastWriteCache[S, T any] interface {
	Get(name string) (*store.Object[S, T], bool)
}

// FromCache returns a Config.Trigger that reads the trace context of the
// object's last write from c: the write the reconcile is reacting to. It
// returns an error for a nil c (a nil *cache.Cache included), which would
// otherwise panic in every reconcile.
func FromCache[S, T any](c LastWriteCache[S, T]) (func(name string) string, error) {
	if nilness.IsNil(c) {
		return nil, errors.New("otelsteady: FromCache of a nil cache")
	}
	return func(name string) string {
		if o, ok := c.Get(name); ok {
			return o.Meta.LastWrite.Trace
		}
		return ""
	}, nil
}

// Backend returns b wrapped so that every Txn (every store write) runs in a
// "steady.store.txn" span, a child of the span in the write's ctx. Reads,
// lists and watches pass through untraced. A nil tp means
// otel.GetTracerProvider(). A nil b gives nil, which store.New refuses,
// rather than a wrapper that panics at the first call.
func Backend(b kv.Backend, tp trace.TracerProvider) kv.Backend {
	if nilness.IsNil(b) {
		return nil
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &tracedBackend{Backend: b, tracer: tp.Tracer(ScopeName)}
}

type tracedBackend struct {
	kv.Backend
	tracer trace.Tracer
}

func (b *tracedBackend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	op := "put"
	if w.Kind == kv.WriteDelete {
		op = "delete"
	}
	ctx, span := b.tracer.Start(ctx, "steady.store.txn", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("steady.store.key", validUTF8(w.Key)), attribute.String("steady.store.op", op)))
	defer span.End()
	rev, err := b.Backend.Txn(ctx, conds, w)
	if err != nil {
		recordError(span, err)
	} else {
		span.SetAttributes(attribute.Int64("steady.store.revision", rev))
	}
	return rev, err
}
