package otelsteady_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/tracing/otelsteady"
)

type (
	spec   struct{ Replicas int }
	status struct{ Ready int }
)

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func spansNamed(sr *tracetest.SpanRecorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range sr.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// TestSpansAttributesAndTheLinkToTheWriter runs a Loop over a store whose
// writes record their trace: a client writes an object inside its own span,
// and the reconcile it triggers links to it, with the reconcile's own write
// as its child.
func TestSpansAttributesAndTheLinkToTheWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sr := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
		defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()

		st, err := store.New[spec, status](otelsteady.Backend(memstore.New(), tp), "App",
			store.WithTraceContext(otelsteady.TraceContext))
		require.NoError(t, err)
		c := cache.New[spec, status](st)

		var mu sync.Mutex
		calls := map[string]int{}
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			mu.Lock()
			calls[key]++
			n := calls[key]
			mu.Unlock()
			switch key {
			case "blocked":
				if n == 1 {
					return reconcile.Result{}, reconcile.Blocked("SecretMissing", errors.New("secret db-password not found"))
				}
			case "panics":
				if n == 1 {
					panic("nil map")
				}
			}
			_, err := st.As("app").ApplyStatus(ctx, key, status{Ready: 1}, nil)
			return reconcile.Result{}, err
		})
		trigger, err := otelsteady.FromCache(c)
		require.NoError(t, err)
		traced := otelsteady.Reconciler(r, otelsteady.Config[string]{Loop: "app", TracerProvider: tp, Trigger: trigger})
		loop, err := reconcile.New("app", traced, reconcile.FromStore(c, st), reconcile.WithResync(24*time.Hour, 0))
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = c.Run(ctx) })
		wg.Go(func() { _ = loop.Run(ctx) })
		defer func() { cancel(); wg.Wait() }()
		require.NoError(t, c.WaitForSync(ctx))

		// The client's write, in its own trace.
		clientCtx, client := tp.Tracer("client").Start(context.Background(), "PUT /apps/web")
		for _, name := range []string{"web", "blocked", "panics"} {
			_, err = st.As("client").Create(clientCtx, &store.Object[spec, status]{Meta: store.Meta{Name: name}, Spec: spec{Replicas: 3}})
			require.NoError(t, err)
		}
		client.End()
		time.Sleep(time.Second)
		synctest.Wait()

		recs := spansNamed(sr, "reconcile")
		byKey := map[string][]sdktrace.ReadOnlySpan{}
		for _, s := range recs {
			k := attrs(s)["steady.key"].AsString()
			byKey[k] = append(byKey[k], s)
		}
		require.Len(t, byKey["web"], 1)
		web := byKey["web"][0]
		a := attrs(web)
		require.Equal(t, "app", a["steady.loop"].AsString())
		require.Equal(t, int64(1), a["steady.attempt"].AsInt64())
		require.Regexp(t, `^[0-9a-f]{8}-\d+$`, a["steady.reconcile_id"].AsString(), "the ID of the Loop's log lines (reconcile.ReconcileID)")
		require.Equal(t, "success", a["steady.result"].AsString())
		_, hasReason := a["steady.requeue.reason"]
		require.False(t, hasReason, "a success is not requeued")
		require.Equal(t, codes.Unset, web.Status().Code)
		require.Equal(t, trace.SpanKindInternal, web.SpanKind())

		// The link to the client's write.
		require.Len(t, web.Links(), 1)
		require.Equal(t, client.SpanContext().TraceID(), web.Links()[0].SpanContext.TraceID())
		require.Equal(t, client.SpanContext().SpanID(), web.Links()[0].SpanContext.SpanID())
		require.NotEqual(t, client.SpanContext().TraceID(), web.SpanContext().TraceID(), "a new trace, linked")

		// The reconcile's write is its child, and records its trace.
		var child sdktrace.ReadOnlySpan
		for _, s := range spansNamed(sr, "steady.store.txn") {
			if s.Parent().SpanID() == web.SpanContext().SpanID() {
				child = s
			}
		}
		require.NotNil(t, child, "the status write is a child of the reconcile")
		require.Equal(t, "App/web", attrs(child)["steady.store.key"].AsString())
		require.Equal(t, "put", attrs(child)["steady.store.op"].AsString())
		require.Positive(t, attrs(child)["steady.store.revision"].AsInt64())
		obj, err := st.Get(context.Background(), "web")
		require.NoError(t, err)
		require.Equal(t, otelsteady.TraceContext(trace.ContextWithSpanContext(context.Background(), web.SpanContext())),
			obj.Meta.LastWrite.Trace, "the reconcile's write records the reconcile's trace")

		// A Blocked failure, then its retry.
		require.Len(t, byKey["blocked"], 2)
		first, second := byKey["blocked"][0], byKey["blocked"][1]
		a = attrs(first)
		require.Equal(t, "error", a["steady.result"].AsString())
		require.Equal(t, "blocked", a["steady.requeue.reason"].AsString())
		require.Equal(t, "SecretMissing", a["steady.blocked.reason"].AsString())
		require.Equal(t, codes.Error, first.Status().Code)
		require.True(t, slices.ContainsFunc(first.Events(), func(e sdktrace.Event) bool { return e.Name == "exception" }), "the error is recorded")
		require.Equal(t, int64(2), attrs(second)["steady.attempt"].AsInt64())
		require.Equal(t, "success", attrs(second)["steady.result"].AsString())

		// A panic: recorded, and re-raised for the Loop, which retries.
		require.Len(t, byKey["panics"], 2)
		p := byKey["panics"][0]
		require.Equal(t, codes.Error, p.Status().Code)
		require.True(t, slices.ContainsFunc(p.Events(), func(e sdktrace.Event) bool {
			for _, kv := range e.Attributes {
				if kv.Key == "exception.message" && kv.Value.AsString() == "nil map" {
					return true
				}
			}
			return false
		}))
		require.Equal(t, "success", attrs(byKey["panics"][1])["steady.result"].AsString())
	})
}

func TestRequeueReasons(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	cases := []struct {
		res            reconcile.Result
		err            error
		result, reason string
	}{
		{reconcile.Result{}, nil, "success", ""},
		{reconcile.Result{RequeueAfterWrite: true}, nil, "requeue", "requeue"},
		{reconcile.Result{RequeueAfter: time.Minute}, nil, "requeue_after", "requeue_after"},
		{reconcile.Result{}, errors.New("x"), "error", "backoff"},
		{reconcile.Result{}, reconcile.RetryAfter(errors.New("x"), time.Second), "error", "retry_after"},
		{reconcile.Result{}, reconcile.Terminal(errors.New("x")), "error", "terminal"},
	}
	for i, c := range cases {
		r := otelsteady.Reconciler(reconcile.Func[int](func(context.Context, int) (reconcile.Result, error) { return c.res, c.err }),
			otelsteady.Config[int]{Loop: "l", TracerProvider: tp})
		res, err := r.Reconcile(context.Background(), i)
		require.Equal(t, c.res, res)
		require.Equal(t, c.err, err)
		s := sr.Ended()[i]
		a := attrs(s)
		require.Equal(t, c.result, a["steady.result"].AsString(), i)
		require.Equal(t, c.reason, a["steady.requeue.reason"].AsString(), i)
		require.Equal(t, int64(0), a["steady.attempt"].AsInt64(), "not a Loop's ctx")
		_, hasID := a["steady.reconcile_id"]
		require.False(t, hasID, "not a Loop's ctx")
	}
	require.Equal(t, 60.0, attrs(sr.Ended()[2])["steady.requeue.after"].AsFloat64())
}

func TestTraceContextIsEmptyWithoutASpan(t *testing.T) {
	require.Empty(t, otelsteady.TraceContext(context.Background()))
}

// A nil cache, typed (a nil *cache.Cache) or not, is refused when the
// Trigger is made, not left to panic in every reconcile it runs in.
func TestFromCacheRefusesANilCache(t *testing.T) {
	var c *cache.Cache[spec, status]
	trigger, err := otelsteady.FromCache[spec, status](c)
	require.ErrorContains(t, err, "nil cache")
	require.Nil(t, trigger)
	trigger, err = otelsteady.FromCache[spec, status](nil)
	require.ErrorContains(t, err, "nil cache")
	require.Nil(t, trigger)
}
