package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// writePathObjects creates n objects of the controller-shaped benchmark's
// shape (bench/cmd/ctl-steady): a ~200-byte spec owned by "user" and a
// status field applied by "ctrl".
func writePathObjects(b testing.TB, st *store.Store[judgeSpec, judgeStatus], n int) []string {
	ctx := context.Background()
	var names []string
	for i := range n {
		name := fmt.Sprintf("app-%05d", i)
		_, err := st.As("user").Create(ctx, judgeApp(name, 1))
		require.NoError(b, err)
		_, err = st.As("ctrl").ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: 1}, nil)
		require.NoError(b, err)
		names = append(names, name)
	}
	return names
}

// allocsStore returns a Store over memstore holding one object of
// writePathObjects' shape, and its name, for a test that counts
// allocations; it skips the test where counts are not exact: under -short,
// and under the race detector, whose sync.Pool drops scratch space at
// random.
func allocsStore(t *testing.T) (*store.Store[judgeSpec, judgeStatus], string) {
	t.Helper()
	if testing.Short() || raceScale > 1 {
		t.Skip("counts allocations (the race detector's sync.Pool drops scratch space at random)")
	}
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(t, err)
	return st, writePathObjects(t, st, 1)[0]
}

// BenchmarkApplyStatusOwnField measures a controller's status write, half
// the writes of a controller-shaped workload: "ctrl" applies the one status
// field it owns with a new value, cycling through more objects than the
// Store's memos hold. Each op is one ApplyStatus that changes the object.
//
//	go test -run '^$' -bench ApplyStatusOwnField -benchmem ./store/
func BenchmarkApplyStatusOwnField(b *testing.B) {
	benchApplyStatusOwnField(b, nil)
}

// BenchmarkApplySpecOwnField is BenchmarkApplyStatusOwnField on the spec
// side: "deployer" applies the one spec field it owns with a new value.
//
//	go test -run '^$' -bench ApplySpecOwnField -benchmem ./store/
func BenchmarkApplySpecOwnField(b *testing.B) {
	ctx := context.Background()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(b, err)
	names := writePathObjects(b, st, 16)
	deployer := st.As("deployer")
	for _, name := range names {
		_, err := deployer.Apply(ctx, name, map[string]any{"replicas": 5}, store.WithForce())
		require.NoError(b, err)
	}
	b.ReportAllocs()
	start := typedBenchCPU()
	i := 0
	for b.Loop() {
		res, err := deployer.Apply(ctx, names[i%len(names)], map[string]any{"replicas": 6 + i/len(names)})
		if err != nil || !res.Changed {
			b.Fatal(err, res)
		}
		i++
	}
	reportTypedCPU(b, start)
}

// BenchmarkUpdateSpecOther measures the other writer of that workload: a
// client that reads an object and writes it back with its spec's replicas
// changed (a Store that remembers no values, so each op is a Get and an
// Update).
//
//	go test -run '^$' -bench UpdateSpecOther -benchmem ./store/
func BenchmarkUpdateSpecOther(b *testing.B) {
	benchUpdateSpec(b, store.WithLastValues(0))
}

// BenchmarkUpdateSpecRemembering is BenchmarkUpdateSpecOther with a client
// Store that remembers values (the default): its Update writes from what
// its Get remembered, with no read.
//
//	go test -run '^$' -bench UpdateSpecRemembering -benchmem ./store/
func BenchmarkUpdateSpecRemembering(b *testing.B) {
	benchUpdateSpec(b)
}

// benchUpdateSpec times a client Store, made with opts, that reads one of
// 16 objects and writes it back with its spec's replicas changed.
func benchUpdateSpec(b *testing.B, opts ...store.Option) {
	ctx := context.Background()
	mem := memstore.New(memstore.WithHistorySize(16))
	st, err := store.New[judgeSpec, judgeStatus](mem, "App")
	require.NoError(b, err)
	names := writePathObjects(b, st, 16)
	other, err := store.New[judgeSpec, judgeStatus](mem, "App", opts...)
	require.NoError(b, err)
	user := other.As("user")
	b.ReportAllocs()
	start := typedBenchCPU()
	i := 0
	for b.Loop() {
		o, err := other.Get(ctx, names[i%len(names)])
		if err != nil {
			b.Fatal(err)
		}
		o.Spec.Replicas++
		if _, err := user.Update(ctx, o); err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportTypedCPU(b, start)
}

// BenchmarkApplyStatusOwnFieldBesideCondition is BenchmarkApplyStatusOwnField
// on objects that also carry a condition of another manager's, as a Loop's
// objects carry its Reconciling condition: the write leaves it as it is.
//
//	go test -run '^$' -bench ApplyStatusOwnFieldBesideCondition -benchmem ./store/
func BenchmarkApplyStatusOwnFieldBesideCondition(b *testing.B) {
	benchApplyStatusOwnField(b, []store.Condition{{Type: "Reconciling", Status: store.ConditionFalse, Reason: "Reconciled"}})
}

// benchApplyStatusOwnField times "ctrl"'s ApplyStatus of its one status
// field on 16 objects that "loop" first gave conditions (none when nil).
func benchApplyStatusOwnField(b *testing.B, conditions []store.Condition) {
	ctx := context.Background()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(b, err)
	names := writePathObjects(b, st, 16)
	if conditions != nil {
		for _, name := range names {
			_, err := st.As("loop").ApplyStatus(ctx, name, nil, conditions)
			require.NoError(b, err)
		}
	}
	ctrl := st.As("ctrl")
	b.ReportAllocs()
	start := typedBenchCPU()
	i := 0
	for b.Loop() {
		res, err := ctrl.ApplyStatus(ctx, names[i%len(names)], judgeStatus{ReadyReplicas: int64(2 + i/len(names))}, nil)
		if err != nil || !res.Changed {
			b.Fatal(err, res)
		}
		i++
	}
	reportTypedCPU(b, start)
}

// BenchmarkApplyConditionsOnly measures the Loop's own status writes (its
// Reconciling, Stalled and Paused conditions): "loop" applies one condition
// and no status fields, forced, flipping its status every op, on objects
// whose status field "ctrl" owns. Each op is one ApplyStatus that changes
// the object.
//
//	go test -run '^$' -bench ApplyConditionsOnly -benchmem ./store/
func BenchmarkApplyConditionsOnly(b *testing.B) {
	ctx := context.Background()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(b, err)
	names := writePathObjects(b, st, 16)
	loop := st.As("loop")
	b.ReportAllocs()
	start := typedBenchCPU()
	i := 0
	for b.Loop() {
		status := store.ConditionTrue
		if i/len(names)%2 == 1 {
			status = store.ConditionFalse
		}
		c := store.Condition{Type: "Reconciling", Status: status, Reason: "Progressing"}
		res, err := loop.ApplyStatus(ctx, names[i%len(names)], nil, []store.Condition{c}, store.WithForce())
		if err != nil || !res.Changed {
			b.Fatal(err, res)
		}
		i++
	}
	reportTypedCPU(b, start)
}

// BenchmarkApplyStatusFirst measures a controller's first status write to
// an object, the status write of nearly every event once a controller has
// more objects than events (the controller benchmark at 100k and 1M
// objects): "ctrl", which owns nothing on the object yet, applies its one
// status field to an object "user" created (and owns the spec of). Each op
// is one ApplyStatus that changes the object; the objects are created in
// batches outside the timer (for instruction counts, collect only inside
// ApplyStatus: callgrind --collect-atstart=no --toggle-collect='*Writer*ApplyStatus').
// It keeps ownership's first-apply fast path (see ownership.Apply).
//
//	go test -run '^$' -bench ApplyStatusFirst -benchmem ./store/
func BenchmarkApplyStatusFirst(b *testing.B) {
	ctx := context.Background()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(b, err)
	user, ctrl := st.As("user"), st.As("ctrl")
	var names []string
	b.ReportAllocs()
	start := typedBenchCPU()
	i, created := 0, 0
	for b.Loop() {
		if i == len(names) {
			b.StopTimer()
			names = names[:0]
			for j := range 128 {
				name := fmt.Sprintf("app-%09d", created+j)
				_, err := user.Create(ctx, judgeApp(name, 3))
				require.NoError(b, err)
				names = append(names, name)
			}
			i, created = 0, created+len(names)
			b.StartTimer()
		}
		res, err := ctrl.ApplyStatus(ctx, names[i], judgeStatus{ReadyReplicas: 3}, nil)
		if err != nil || !res.Changed {
			b.Fatal(err, res)
		}
		i++
	}
	reportTypedCPU(b, start)
}

// BenchmarkApplyStatusFirstObserved is BenchmarkApplyStatusFirst as the
// controller benchmark's Loop makes it at 1M objects (bench/cmd/ctl-steady),
// where every update of the run hits an object the controller has never
// written: another client (a Store that remembers nothing) creates the
// objects, with a ~200-byte spec it owns, the controller's Store reads
// each as its cache's watch does (Watch: the memory keeps the value
// decoded, its ownership record shared from object to object), and
// "ctrl" applies its one status field, guarded by that read
// (WithObserved). The objects are created and watched in batches of
// 1,024 outside the timer; each op is one ApplyStatus that changes an
// object. For its instructions, collect only inside the apply (callgrind
// --collect-atstart=no --toggle-collect='*Writer*ApplyStatus').
//
//	go test -run '^$' -bench ApplyStatusFirstObserved -benchmem ./store/
func BenchmarkApplyStatusFirstObserved(b *testing.B) {
	const batch = 1024
	ctx := context.Background()
	mem := memstore.New(memstore.WithHistorySize(4 * batch))
	st, err := store.New[judgeSpec, judgeStatus](mem, "App")
	require.NoError(b, err)
	other, err := store.New[judgeSpec, judgeStatus](mem, "App", store.WithLastValues(0))
	require.NoError(b, err)
	user, ctrl := other.As("user"), st.As("ctrl")
	read := make([]*store.Object[judgeSpec, judgeStatus], 0, batch)
	created := 0
	// watched creates the next batch and reads it through a watch of st,
	// which it ends before the applies: no decode of their events runs
	// beside them.
	watched := func() {
		read = read[:0]
		var from int64
		for j := range batch {
			rev, err := user.Create(ctx, judgeApp(fmt.Sprintf("app-%09d", created+j), 3))
			require.NoError(b, err)
			if j == 0 {
				from = rev - 1 // a watch from r delivers the writes after r
			}
		}
		created += batch
		wctx, cancel := context.WithCancel(ctx)
		events, err := st.Watch(wctx, from)
		require.NoError(b, err)
		for ev := range events {
			require.NoError(b, ev.Err)
			if ev.Object != nil {
				read = append(read, ev.Object)
			}
			if len(read) == batch {
				break
			}
		}
		cancel()
		for range events { // until the watch is over
		}
	}
	b.ReportAllocs()
	start := typedBenchCPU()
	i := 0
	for b.Loop() {
		if i == len(read) {
			b.StopTimer()
			watched()
			i = 0
			b.StartTimer()
		}
		o := read[i]
		res, err := ctrl.ApplyStatus(ctx, o.Meta.Name, judgeStatus{ReadyReplicas: 3}, nil, store.WithObserved(o.Meta))
		if err != nil || !res.Changed {
			b.Fatal(err, res)
		}
		i++
	}
	reportTypedCPU(b, start)
}

// BenchmarkApplyStatusObserved measures the controller benchmark's status
// write as its Loop makes it (bench/cmd/ctl-steady): another client (a
// Store that remembers nothing) updates an object's spec, the Loop's Store
// reads it (as its cache's watch does, remembering it decoded), and "ctrl"
// applies the one status field it owns with the new value, guarded by that
// read (WithObserved). It cycles through 1,024 objects, more than the own
// writes the Store keeps decoded. Each op is one update, one read and one
// ApplyStatus that changes the object, all timed: a timer stopped around
// the first two would flush the allocator's caches every op
// (runtime.ReadMemStats), and make the apply's allocations dearer than a
// Loop's. The update and the read cost the same whatever the apply does,
// so a change in ns/op (or in instructions per op) is the apply's.
//
//	go test -run '^$' -bench ApplyStatusObserved -benchmem ./store/
func BenchmarkApplyStatusObserved(b *testing.B) {
	ctx := context.Background()
	mem := memstore.New(memstore.WithHistorySize(16))
	st, err := store.New[judgeSpec, judgeStatus](mem, "App")
	require.NoError(b, err)
	names := writePathObjects(b, st, 1024)
	other, err := store.New[judgeSpec, judgeStatus](mem, "App", store.WithLastValues(0))
	require.NoError(b, err)
	user, ctrl := other.As("user"), st.As("ctrl")
	b.ReportAllocs()
	start := typedBenchCPU()
	i := 0
	for b.Loop() {
		name := names[i%len(names)]
		o, err := other.Get(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		o.Spec.Replicas++
		if _, err := user.Update(ctx, o); err != nil {
			b.Fatal(err)
		}
		if o, err = st.Get(ctx, name); err != nil {
			b.Fatal(err)
		}
		res, err := ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: o.Spec.Replicas}, nil, store.WithObserved(o.Meta))
		if err != nil || !res.Changed {
			b.Fatal(err, res)
		}
		i++
	}
	reportTypedCPU(b, start)
}

// BenchmarkApplyStatusFirstJudged measures a controller's first status
// write to an object together with the change judge of its event, as a
// Loop's cache hands it over: "user" creates an object, "ctrl" applies
// its one status field, and FieldChanges(created, applied, "ctrl") judges
// the write (its objects read back with Get, as a watch decodes them).
// Each op is all of that, timed: what the apply learns of the record it
// writes, the judge need not decode.
//
//	go test -run '^$' -bench ApplyStatusFirstJudged -benchmem ./store/
func BenchmarkApplyStatusFirstJudged(b *testing.B) {
	ctx := context.Background()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(memstore.WithHistorySize(16)), "App")
	require.NoError(b, err)
	user, ctrl := st.As("user"), st.As("ctrl")
	b.ReportAllocs()
	start := typedBenchCPU()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("app-%09d", i)
		i++
		created := judgeApp(name, 3)
		if _, err := user.Create(ctx, created); err != nil {
			b.Fatal(err)
		}
		res, err := ctrl.ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: 3}, nil)
		if err != nil || !res.Changed {
			b.Fatal(err, res)
		}
		applied, err := st.Get(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		if owned, foreign := st.FieldChanges(created, applied, "ctrl"); len(owned) != 1 || len(foreign) != 0 {
			b.Fatal(owned, foreign)
		}
	}
	reportTypedCPU(b, start)
}

// BenchmarkApplyStatusObservedCold is BenchmarkApplyStatusObserved as the
// controller benchmark's Loop makes it flat out (bench/cmd/ctl-steady at
// 10k objects, its queue hundreds of keys long): the apply to an object
// comes after the Store read 1,100 other objects since its read, more
// than it keeps decoded, so it remembers only the object's value; and
// long after its own last write to it. It cycles through 2,048 objects:
// op i updates and reads object i and applies to object i-1,100, guarded
// by that object's read. Each op is one update, one read and one
// ApplyStatus that changes the object, all timed (see
// BenchmarkApplyStatusObserved); for the apply's instructions alone,
// collect only inside it (callgrind --collect-atstart=no
// --toggle-collect='*Writer*ApplyStatus').
//
//	go test -run '^$' -bench ApplyStatusObservedCold -benchmem ./store/
func BenchmarkApplyStatusObservedCold(b *testing.B) {
	const n, lag = 2048, 1100
	ctx := context.Background()
	mem := memstore.New(memstore.WithHistorySize(16))
	st, err := store.New[judgeSpec, judgeStatus](mem, "App")
	require.NoError(b, err)
	names := writePathObjects(b, st, n)
	other, err := store.New[judgeSpec, judgeStatus](mem, "App", store.WithLastValues(0))
	require.NoError(b, err)
	user, ctrl := other.As("user"), st.As("ctrl")
	read := make([]*store.Object[judgeSpec, judgeStatus], n)
	// update is op i's update and read of object i%n.
	update := func(i int) error {
		o, err := other.Get(ctx, names[i%n])
		if err != nil {
			return err
		}
		o.Spec.Replicas++
		if _, err := user.Update(ctx, o); err != nil {
			return err
		}
		read[i%n], err = st.Get(ctx, names[i%n])
		return err
	}
	// The first lag updates, untimed: each op then applies to one.
	for i := range lag {
		require.NoError(b, update(i))
	}
	b.ReportAllocs()
	start := typedBenchCPU()
	i := lag
	for b.Loop() {
		if err := update(i); err != nil {
			b.Fatal(err)
		}
		j := (i - lag) % n
		o := read[j]
		res, err := ctrl.ApplyStatus(ctx, names[j], judgeStatus{ReadyReplicas: o.Spec.Replicas}, nil, store.WithObserved(o.Meta))
		if err != nil || !res.Changed {
			b.Fatal(err, res)
		}
		i++
	}
	reportTypedCPU(b, start)
}
