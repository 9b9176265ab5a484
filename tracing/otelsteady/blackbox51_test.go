package otelsteady_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/tracing/otelsteady"
)

// TestBlackbox51NilWrapped: wrapping a nil Backend or Reconciler (typed
// or not) gives nil, which store.New and reconcile.New refuse with an
// error, instead of a wrapper that passes their nil checks and panics at
// its first call.
func TestBlackbox51NilWrapped(t *testing.T) {
	var typedNil *memstore.Store
	for _, b := range []kv.Backend{nil, typedNil} {
		w := otelsteady.Backend(b, nil)
		require.Nil(t, w)
		_, err := store.New[spec, status](w, "App")
		require.ErrorIs(t, err, store.ErrInvalid)
	}
	var typedNilR reconcile.Func[string]
	for _, r := range []reconcile.Reconciler[string]{nil, typedNilR} {
		w := otelsteady.Reconciler(r, otelsteady.Config[string]{Loop: "l"})
		require.Nil(t, w)
		_, err := reconcile.New("l", w, reconcile.Keys(func() iter.Seq[string] { return slices.Values([]string{"k"}) }))
		require.Error(t, err)
	}
}

// TestBlackbox51InvalidUTF8: a span's string attributes, its status and
// its exception event are valid UTF-8 (OTLP cannot encode others) whatever
// bytes the Loop's name, the key, a Blocked reason, an error or a
// panic's value hold: each run of invalid bytes is one U+FFFD. An error
// whose message is valid is recorded by RecordError as is, and one whose
// message is not gets the same exception.type.
func TestBlackbox51InvalidUTF8(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	errs := []error{
		errors.New("boom \xff\xfe"),
		reconcile.Blocked("why\xff", errors.New("x")),
		errors.New("valid"),
	}
	for _, e := range errs {
		r := otelsteady.Reconciler(reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, e }),
			otelsteady.Config[string]{Loop: "bad\xff\xfe", TracerProvider: tp})
		_, err := r.Reconcile(context.Background(), "k\xff")
		require.Equal(t, e, err)
	}
	r := otelsteady.Reconciler(reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { panic("p\xff") }),
		otelsteady.Config[string]{Loop: "l", TracerProvider: tp})
	require.Panics(t, func() { _, _ = r.Reconcile(context.Background(), "k") })

	b := otelsteady.Backend(memstore.New(), tp)
	_, err := b.Txn(context.Background(), nil, kv.Write{Kind: kv.WritePut, Key: "s\xff", Value: []byte("v")})
	require.NoError(t, err)
	_, err = b.Txn(context.Background(), nil, kv.Write{Kind: kv.WriteDelete, Key: "gone\xff"})
	require.ErrorIs(t, err, store.ErrNotFound)

	spans := sr.Ended()
	require.Len(t, spans, 6)
	for _, s := range spans {
		require.True(t, utf8.ValidString(s.Status().Description), "%s: status %q", s.Name(), s.Status().Description)
		kvs := slices.Clone(s.Attributes())
		for _, ev := range s.Events() {
			kvs = append(kvs, ev.Attributes...)
		}
		for _, a := range kvs {
			if a.Value.Type() == attribute.STRING {
				require.True(t, utf8.ValidString(a.Value.AsString()), "%s: %s=%q", s.Name(), a.Key, a.Value.AsString())
			}
		}
	}
	a := attrs(spans[0])
	require.Equal(t, "bad\uFFFD", a["steady.loop"].AsString())
	require.Equal(t, "k\uFFFD", a["steady.key"].AsString())
	require.Equal(t, "boom \uFFFD", spans[0].Status().Description)
	exception := func(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
		require.Len(t, s.Events(), 1)
		m := map[attribute.Key]attribute.Value{}
		for _, a := range s.Events()[0].Attributes {
			m[a.Key] = a.Value
		}
		return m
	}
	require.Equal(t, "boom \uFFFD", exception(spans[0])["exception.message"].AsString())
	require.Equal(t, exception(spans[2])["exception.type"], exception(spans[0])["exception.type"], "the type RecordError records")
	require.Equal(t, "why\uFFFD", attrs(spans[1])["steady.blocked.reason"].AsString())
	require.Equal(t, "valid", exception(spans[2])["exception.message"].AsString())
	require.Equal(t, "p\uFFFD", exception(spans[3])["exception.message"].AsString())
	require.Equal(t, "s\uFFFD", attrs(spans[4])["steady.store.key"].AsString())
}
