package otelsteady

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/reconcile"
)

// ScopeName is the instrumentation scope of the tracers this package uses.
const ScopeName = "github.com/steady-go/steady/tracing/otelsteady"

// Config configures Reconciler.
type Config[K comparable] struct {
	// Loop is the Loop's name, recorded as steady.loop.
	Loop string
	// TracerProvider makes the tracer; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator decodes the trace contexts Trigger returns; nil means
	// propagation.TraceContext{} (the W3C traceparent TraceContext writes).
	Propagator propagation.TextMapPropagator
	// Trigger returns the trace context recorded with the last write of
	// key's object (LastWrite.Trace), "" for none; the reconcile's span
	// links to it. nil means no links. FromCache reads it from a cache.
	Trigger func(key K) string
}

// Reconciler returns r wrapped so that every Reconcile runs in a span; see
// the package documentation for its attributes. The span is in the ctx r
// gets, so the store writes r makes with it are its children (through a
// Backend wrapped by Backend) and record its trace (WithTraceContext). A
// nil r gives nil, which reconcile.New refuses, rather than a wrapper that
// panics in every reconcile.
func Reconciler[K comparable](r reconcile.Reconciler[K], cfg Config[K]) reconcile.Reconciler[K] {
	if nilness.IsNil(r) {
		return nil
	}
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := cfg.Propagator
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	return &traced[K]{r: r, cfg: cfg, tracer: tp.Tracer(ScopeName), prop: prop, loop: attribute.String("steady.loop", validUTF8(cfg.Loop))}
}

type traced[K comparable] struct {
	r      reconcile.Reconciler[K]
	cfg    Config[K]
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	loop   attribute.KeyValue
}

func (t *traced[K]) Reconcile(ctx context.Context, key K) (res reconcile.Result, err error) {
	attrs := []attribute.KeyValue{t.loop, attribute.String("steady.key", validUTF8(keyString(key))),
		attribute.Int("steady.attempt", reconcile.Attempt(ctx))}
	if id := reconcile.ReconcileID(ctx); id != "" {
		attrs = append(attrs, attribute.String("steady.reconcile_id", validUTF8(id)))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithNewRoot(),
		trace.WithAttributes(attrs...)}
	if t.cfg.Trigger != nil {
		if tc := t.cfg.Trigger(key); tc != "" {
			sc := trace.SpanContextFromContext(t.prop.Extract(context.Background(), propagation.MapCarrier{"traceparent": tc}))
			if sc.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc,
					Attributes: []attribute.KeyValue{attribute.String("steady.link", "last write")}}))
			}
		}
	}
	ctx, span := t.tracer.Start(ctx, "reconcile", opts...)
	defer func() {
		if p := recover(); p != nil {
			span.AddEvent("exception", trace.WithAttributes(attribute.String("exception.type", "panic"),
				attribute.String("exception.message", validUTF8(fmt.Sprint(p)))))
			span.SetStatus(codes.Error, "panic")
			span.SetAttributes(attribute.String("steady.result", "error"), attribute.String("steady.requeue.reason", "backoff"))
			span.End()
			panic(p)
		}
	}()
	res, err = t.r.Reconcile(ctx, key)
	if span.IsRecording() {
		annotate(span, res, err)
	}
	span.End()
	return res, err
}

// annotate sets the outcome attributes and status of a reconcile's span.
func annotate(span trace.Span, res reconcile.Result, err error) {
	attrs := make([]attribute.KeyValue, 0, 4)
	if res.RequeueAfter > 0 {
		attrs = append(attrs, attribute.Float64("steady.requeue.after", res.RequeueAfter.Seconds()))
	}
	var result, reason string
	switch {
	case err != nil && errors.Is(err, reconcile.ErrTerminal):
		result, reason = "error", "terminal"
	case err != nil && errors.Is(err, reconcile.ErrBlocked):
		result, reason = "error", "blocked"
		attrs = append(attrs, attribute.String("steady.blocked.reason", validUTF8(reconcile.BlockedReason(err))))
	case err != nil && errors.Is(err, reconcile.ErrRetryAfter):
		result, reason = "error", "retry_after"
	case err != nil:
		result, reason = "error", "backoff"
	case res.RequeueAfter > 0:
		result, reason = "requeue_after", "requeue_after"
	case res.RequeueAfterWrite || res.Requeue: // Requeue is the deprecated name of RequeueAfterWrite
		result, reason = "requeue", "requeue"
	default:
		result = "success"
	}
	attrs = append(attrs, attribute.String("steady.result", result))
	if reason != "" {
		attrs = append(attrs, attribute.String("steady.requeue.reason", reason))
	}
	span.SetAttributes(attrs...)
	if err != nil {
		recordError(span, err)
	}
}

// recordError records err on span as RecordError does (an "exception"
// event and the Error status), with its message made valid UTF-8.
func recordError(span trace.Span, err error) {
	msg := err.Error()
	if utf8.ValidString(msg) {
		span.RecordError(err)
		span.SetStatus(codes.Error, msg)
		return
	}
	msg = validUTF8(msg)
	// RecordError's attributes, with the message replaced.
	t := reflect.TypeOf(err)
	typ := t.String()
	if t.PkgPath() != "" || t.Name() != "" {
		typ = t.PkgPath() + "." + t.Name()
	}
	span.AddEvent("exception", trace.WithAttributes(attribute.String("exception.type", typ), attribute.String("exception.message", msg)))
	span.SetStatus(codes.Error, msg)
}

// validUTF8 is s as an attribute value: OTLP cannot carry a string that is
// not valid UTF-8 (an exporter fails to encode the batch of spans it is
// in), and a key, a Loop's name or a Blocked reason need not be one, so
// each run of invalid bytes becomes one U+FFFD, as the Prometheus adapter
// does with label values. A valid s is returned as is, with no allocation.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func keyString[K comparable](key K) string {
	if s, ok := any(key).(string); ok {
		return s
	}
	return fmt.Sprint(key)
}
