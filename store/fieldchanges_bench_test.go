package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

type judgeSpec struct {
	Replicas int64             `json:"replicas"`
	Image    string            `json:"image"`
	Args     []string          `json:"args"`
	Selector map[string]string `json:"selector"`
}

// judgeApp is an App named name with a ~200-byte spec at replicas, as a
// controller's user creates it.
func judgeApp(name string, replicas int64) *store.Object[judgeSpec, judgeStatus] {
	return &store.Object[judgeSpec, judgeStatus]{
		Meta: store.Meta{Name: name},
		Spec: judgeSpec{
			Replicas: replicas,
			Image:    "registry.example.com/team/app:v1.2.3",
			Args:     []string{"--listen=:8080", "--verbose", "--config=/etc/app/config.yaml"},
			Selector: map[string]string{"app": name, "tier": "backend"},
		},
	}
}

type judgeStatus struct {
	ReadyReplicas int64 `json:"readyReplicas"`
}

// BenchmarkFieldChangesOwnStatus measures the change judge on the event of
// a controller's own status write, half the events a controller sees: a
// ~200-byte spec owned by "user", a status applied by "ctrl", and
// FieldChanges(old, new, "ctrl") where new is ctrl's next status apply.
// The judgement decodes the status side's ownership of old and new. It
// cycles through more objects than the Store's decoded-ownership memo
// holds, as a controller with many objects does.
//
//	go test -run '^$' -bench FieldChangesOwnStatus -benchmem ./store/
func BenchmarkFieldChangesOwnStatus(b *testing.B) { benchFieldChangesOwnStatus(b, 0) }

// BenchmarkFieldChangesOwnStatusLagging is BenchmarkFieldChangesOwnStatus
// judged as a cache that lags behind the Loop does: the Store creates and
// applies the status of 1,000 other objects before the events are judged, more
// than the latest writes it keeps decoded (the controller benchmark's
// cache lags hundreds of writes behind).
//
//	go test -run '^$' -bench FieldChangesOwnStatusLagging -benchmem ./store/
func BenchmarkFieldChangesOwnStatusLagging(b *testing.B) { benchFieldChangesOwnStatus(b, 1000) }

// benchFieldChangesOwnStatus is BenchmarkFieldChangesOwnStatus with lag
// status writes of other objects made before the judging.
func benchFieldChangesOwnStatus(b *testing.B, lag int) {
	ctx := context.Background()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(), "App")
	require.NoError(b, err)
	user, ctrl := st.As("user"), st.As("ctrl")
	type pair struct {
		old, new *store.Object[judgeSpec, judgeStatus]
	}
	var pairs []pair
	for i := range 16 {
		name := fmt.Sprintf("app-%05d", i)
		_, err := user.Create(ctx, judgeApp(name, 1))
		require.NoError(b, err)
		_, err = ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: 1}, nil)
		require.NoError(b, err)
		o, err := st.Get(ctx, name)
		require.NoError(b, err)
		o.Spec.Replicas = 2
		_, err = user.Update(ctx, o)
		require.NoError(b, err)
		old, err := st.Get(ctx, name)
		require.NoError(b, err)
		_, err = ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: 2}, nil)
		require.NoError(b, err)
		new, err := st.Get(ctx, name)
		require.NoError(b, err)
		pairs = append(pairs, pair{old, new})
	}
	if lag > 0 {
		for i := range lag {
			name := fmt.Sprintf("other-%05d", i)
			_, err := user.Create(ctx, &store.Object[judgeSpec, judgeStatus]{Meta: store.Meta{Name: name}})
			require.NoError(b, err)
			_, err = ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: 1}, nil)
			require.NoError(b, err)
		}
	}
	for _, p := range pairs {
		owned, foreign := st.FieldChanges(p.old, p.new, "ctrl")
		require.Len(b, owned, 1)
		require.Empty(b, foreign)
	}
	b.ReportAllocs()
	start := typedBenchCPU()
	i := 0
	for b.Loop() {
		p := pairs[i%len(pairs)]
		i++
		st.FieldChanges(p.old, p.new, "ctrl")
	}
	reportTypedCPU(b, start)
}

// BenchmarkFieldChangesOtherSpec measures the change judge on the other
// half of a controller's events: "user" updates the replicas of the
// ~200-byte spec, and FieldChanges(old, new, "ctrl") judges it for the
// controller, which a Loop does only to feed the key's oscillation
// detector (ctrl has no spec-side entry: nothing is decoded).
//
//	go test -run '^$' -bench FieldChangesOtherSpec -benchmem ./store/
func BenchmarkFieldChangesOtherSpec(b *testing.B) {
	ctx := context.Background()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(), "App")
	require.NoError(b, err)
	names := writePathObjects(b, st, 16)
	type pair struct {
		old, new *store.Object[judgeSpec, judgeStatus]
	}
	var pairs []pair
	for _, name := range names {
		old, err := st.Get(ctx, name)
		require.NoError(b, err)
		o := *old
		o.Spec.Replicas++
		_, err = st.As("user").Update(ctx, &o)
		require.NoError(b, err)
		new, err := st.Get(ctx, name)
		require.NoError(b, err)
		owned, foreign := st.FieldChanges(old, new, "ctrl")
		require.Empty(b, owned)
		require.Len(b, foreign, 1)
		pairs = append(pairs, pair{old, new})
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		p := pairs[i%len(pairs)]
		i++
		st.FieldChanges(p.old, p.new, "ctrl")
	}
}
