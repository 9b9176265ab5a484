package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

type traceKey struct{}

func TestWithTraceContextRecordsTheWritersTraceInLastWrite(t *testing.T) {
	ctx := context.Background()
	inject := func(ctx context.Context) string { s, _ := ctx.Value(traceKey{}).(string); return s }
	st, err := store.New[typedSpec, typedStatus](memstore.New(), "Widget", store.WithTraceContext(inject))
	require.NoError(t, err)
	w := st.As("alice")
	in := func(trace string) context.Context { return context.WithValue(ctx, traceKey{}, trace) }

	obj := &typedObj{Meta: store.Meta{Name: "a"}, Spec: typedSpec{Replicas: 1}}
	_, err = w.Create(in("trace-create"), obj)
	require.NoError(t, err)
	require.Equal(t, store.LastWrite{Manager: "alice", Op: ownership.OpCreate, Trace: "trace-create"}, obj.Meta.LastWrite)
	got, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "trace-create", got.Meta.LastWrite.Trace, "stored with the value")

	got.Spec.Replicas = 2
	_, err = w.Update(in("trace-update"), got)
	require.NoError(t, err)
	_, err = st.As("bob").ApplyStatus(in("trace-status"), "a", typedStatus{Ready: 2}, nil)
	require.NoError(t, err)
	got, err = st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, store.LastWrite{Manager: "bob", Op: ownership.OpApplyStatus, Trace: "trace-status"}, got.Meta.LastWrite)

	// A write that changes nothing writes nothing, trace included; a ctx
	// without a trace records none.
	_, err = w.Update(in("trace-noop"), got)
	require.NoError(t, err)
	again, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "trace-status", again.Meta.LastWrite.Trace)
	again.Spec.Replicas = 3
	_, err = w.Update(ctx, again)
	require.NoError(t, err)
	require.Empty(t, again.Meta.LastWrite.Trace)

	// An untraced status write (the Loop's own conditions) keeps the trace
	// of the write before it, so a reconcile still links to its cause.
	again.Spec.Replicas = 4
	_, err = w.Update(in("trace-spec"), again)
	require.NoError(t, err)
	_, err = st.As("loop").ApplyStatus(ctx, "a", nil, []store.Condition{{Type: "Reconciling", Status: store.ConditionTrue, Reason: "Progressing"}})
	require.NoError(t, err)
	got, err = st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, store.LastWrite{Manager: "loop", Op: ownership.OpApplyStatus, Trace: "trace-spec"}, got.Meta.LastWrite)
}

func TestWithoutTraceContextNothingIsRecorded(t *testing.T) {
	st := newTypedStore(t, memstore.New())
	obj := &typedObj{Meta: store.Meta{Name: "a"}}
	_, err := st.As("alice").Create(context.WithValue(context.Background(), traceKey{}, "x"), obj)
	require.NoError(t, err)
	require.Empty(t, obj.Meta.LastWrite.Trace)
}

// An inject that panics is logged once, at its first panic, and not called
// again: every write goes on without a trace of its own. It was logged,
// with its stack, on every write.
func TestAPanickingTraceInjectIsLoggedOnceAndDropped(t *testing.T) {
	ctx := context.Background()
	var log syncBuffer
	calls := 0
	inject := func(ctx context.Context) string {
		calls++
		panic("tracer broke")
	}
	st, err := store.New[typedSpec, typedStatus](memstore.New(), "Widget",
		store.WithTraceContext(inject), store.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	require.NoError(t, err)
	w := st.As("alice")
	for i := range 3 {
		obj := &typedObj{Meta: store.Meta{Name: fmt.Sprintf("o%d", i)}}
		_, err := w.Create(ctx, obj)
		require.NoError(t, err, "the write goes on")
		require.Empty(t, obj.Meta.LastWrite.Trace)
	}
	_, err = st.As("bob").ApplyStatus(ctx, "o0", typedStatus{Ready: 1}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, calls, "not called after its panic")
	require.Equal(t, 1, strings.Count(log.String(), "trace inject panicked"), log.String())
	require.Contains(t, log.String(), "level=ERROR")
	require.Contains(t, log.String(), "tracer broke")
}
