package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

type lvSpec struct {
	Image    string            `json:"image"`
	Replicas int               `json:"replicas"`
	Env      map[string]string `json:"env,omitempty"`
	Ports    []lvPort          `json:"ports,omitempty" steady:"keys=name"`
}

type lvPort struct {
	Name string `json:"name"`
	Port int    `json:"port"`
}

type lvStatus struct {
	Ready int      `json:"ready"`
	Notes []string `json:"notes,omitempty"`
}

type lvObject = store.Object[lvSpec, lvStatus]

// countingBackend counts the reads a Store makes of its Backend.
type countingBackend struct {
	kv.Backend
	gets, txns atomic.Int64
}

func (c *countingBackend) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	c.gets.Add(1)
	return c.Backend.Get(ctx, key)
}

func (c *countingBackend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	c.txns.Add(1)
	return c.Backend.Txn(ctx, conds, w)
}

// lvWorld is one Backend written by the Store under test and by another
// Store (another process, say) whose writes the first never sees.
type lvWorld struct {
	backend *memstore.Store
	counted *countingBackend
	st      *store.Store[lvSpec, lvStatus]
	other   *store.Store[lvSpec, lvStatus]
	held    map[string][]*lvObject // objects returned, oldest first
	// events is a watch of st: what it decodes, st remembers (see drain).
	events  <-chan store.Event[lvSpec, lvStatus]
	watched int64 // the revision up to which events has been read
}

// newLVWorld returns a world whose Store keeps lastValues bytes of
// memory (WithLastValues) and forgets past them as seeded by forget
// (SeedForgetting): a sequence that failed replays the memory's choices,
// though not the timing of the watch's goroutine, which remembers what it
// decodes beside the test's calls.
func newLVWorld(t *testing.T, lastValues int, forget uint64) *lvWorld {
	b := memstore.New()
	counted := &countingBackend{Backend: b}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	uids := func(prefix string) func() string {
		n := 0
		return func() string { n++; return fmt.Sprintf("%s-%d", prefix, n) }
	}
	st, err := store.New[lvSpec, lvStatus](counted, "Thing", store.WithLastValues(lastValues), store.WithClock(fixedClock{t: now}))
	require.NoError(t, err)
	st.SetUIDs(uids("st"))
	st.SeedForgetting(forget)
	other, err := store.New[lvSpec, lvStatus](b, "Thing", store.WithClock(fixedClock{t: now}))
	require.NoError(t, err)
	other.SetUIDs(uids("other"))
	l, err := other.List(t.Context(), store.ListOptions{})
	require.NoError(t, err)
	events, err := st.Watch(t.Context(), l.Revision)
	require.NoError(t, err)
	return &lvWorld{backend: b, counted: counted, st: st, other: other, held: map[string][]*lvObject{}, events: events, watched: l.Revision}
}

// drain reads w's watch up to the last write, so that st decodes every
// event until then, and remembers the values it read so (its own writes
// among them).
func (w *lvWorld) drain(t *testing.T) {
	t.Helper()
	l, err := w.other.List(t.Context(), store.ListOptions{})
	require.NoError(t, err)
	for w.watched < l.Revision {
		ev := <-w.events
		require.NoError(t, ev.Err)
		w.watched = ev.Revision
	}
}

// copyObject returns a deep copy of o.
func copyObject(t *testing.T, o *lvObject) *lvObject {
	b, err := json.Marshal(o)
	require.NoError(t, err)
	var c lvObject
	require.NoError(t, json.Unmarshal(b, &c))
	c.Meta.Revision = o.Meta.Revision
	return &c
}

// lvOutcome is what one operation gave, to compare between worlds.
type lvOutcome struct {
	Rev    int64
	Err    string
	Obj    *lvObject
	Result store.ApplyResult
}

// TestLastValuesAgree is the proof that the Store's memory of the values it
// read and wrote (WithLastValues) changes nothing but the reads: random
// sequences of Create, Update, UpdateStatus, Apply, ApplyStatus, Get and
// Delete, with writes based on fresh and on stale objects and writes by
// another Store the memory never sees, give the same revisions, errors,
// returned objects and stored bytes with the memory on as with it off,
// while the memory saves reads.
func TestLastValuesAgree(t *testing.T) {
	var saved [11]int64
	for seed := range max(2, 30/raceScale) { // the race detector has nothing to find here
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			on, off := newLVWorld(t, 16<<20, uint64(seed)), newLVWorld(t, 0, 0)
			rng := rand.New(rand.NewPCG(uint64(seed), 1))
			for step := range 300 {
				op, name := rng.IntN(11), fmt.Sprintf("thing-%d", rng.IntN(3))
				pick, mutation, manager := rng.Uint64(), rng.IntN(8), []string{"alice", "bob"}[rng.IntN(2)]
				saved[op] += lvCompare(t, off, op, name, pick, mutation, manager, fmt.Sprint("step ", step), on)[0]
			}
		})
	}
	t.Logf("reads saved by the memory, by operation: %v", saved)
	require.Positive(t, saved[1]+saved[2]+saved[3], "no read saved for Update: its fast path was never taken")
	require.Positive(t, saved[4]+saved[5]+saved[6], "no read saved for UpdateStatus: its fast path was never taken")
	require.Positive(t, saved[7], "no read saved for Apply: its fast path was never taken")
	require.Positive(t, saved[8], "no read saved for ApplyStatus: its fast path was never taken")
	require.Positive(t, saved[10], "no read saved for Delete: its fast path was never taken")
}

// TestLastValuesAgreeWhileForgetting is TestLastValuesAgree over more
// objects than a small memory holds, so that most values it remembers
// make it forget another at random: forgetting, and the index's moves
// and removals under it, change nothing but the reads either.
func TestLastValuesAgreeWhileForgetting(t *testing.T) {
	var small, full int64
	for seed := range max(2, 10/raceScale) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			tiny, on, off := newLVWorld(t, 3<<10, uint64(seed)), newLVWorld(t, 16<<20, uint64(seed)), newLVWorld(t, 0, 0)
			rng := rand.New(rand.NewPCG(uint64(seed), 2))
			for step := range 400 {
				op, name := rng.IntN(11), fmt.Sprintf("thing-%d", rng.IntN(12))
				if step < 24 {
					op = 0 // most objects exist early, so that the memory fills
				}
				pick, mutation, manager := rng.Uint64(), rng.IntN(8), []string{"alice", "bob"}[rng.IntN(2)]
				saved := lvCompare(t, off, op, name, pick, mutation, manager, fmt.Sprint("step ", step), tiny, on)
				small, full = small+saved[0], full+saved[1]
			}
		})
	}
	t.Logf("reads saved: %d by the small memory, %d by the one that holds every value", small, full)
	require.Positive(t, small, "the small memory saved no read: it held nothing")
	require.Less(t, small, full, "the small memory saved as many reads as the full one: it forgot nothing")
}

// FuzzLastValuesAgree is TestLastValuesAgree with the sequence of
// operations taken from the fuzzer's bytes, four per operation.
func FuzzLastValuesAgree(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 1, 3, 0, 0, 1, 9, 0, 0, 0, 1, 0, 0, 1})
	f.Add([]byte{0, 1, 0, 0, 8, 1, 0, 1, 4, 1, 0, 3, 9, 1, 0, 1, 4, 1, 0, 2, 7, 1, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 7, 0, 5, 1, 8, 0, 5, 1, 9, 0, 0, 1, 8, 0, 10, 0, 7, 0, 15, 5, 10, 0, 0, 0, 7, 0, 15, 4})
	// Writes that the memory says change nothing, after an unseen writer
	// changed the object: an Apply, an ApplyStatus, and a Delete of an
	// object whose deletion the memory says is requested already.
	f.Add([]byte{0, 0, 1, 0, 7, 0, 1, 0, 9, 0, 1, 0, 7, 0, 1, 0})
	f.Add([]byte{0, 0, 1, 0, 8, 0, 1, 0, 9, 0, 1, 1, 8, 0, 1, 0})
	f.Add([]byte{0, 0, 1, 0, 1, 0, 1, 5, 10, 0, 1, 0, 9, 0, 1, 3, 10, 0, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		on, tiny, off := newLVWorld(t, 16<<20, 1), newLVWorld(t, 3<<10, 1), newLVWorld(t, 0, 0)
		for i := 0; i+4 <= len(ops) && i < 4*200; i += 4 {
			op, name := int(ops[i])%11, fmt.Sprintf("thing-%d", ops[i+1]%3)
			pick, mutation, manager := uint64(ops[i+2]), int(ops[i+3]%8), []string{"alice", "bob"}[ops[i+3]/8%2]
			lvCompare(t, off, op, name, pick, mutation, manager, fmt.Sprint("operation ", i/4), on, tiny)
		}
	})
}

// lvCompare carries out one operation in off, the world with no memory at
// all, and in each of worlds, requires the same outcome and stored values,
// and that a memory never costs a read, and returns the reads that each
// of worlds saved. Before it, half the time, the worlds' watches
// catch up with their writes.
func lvCompare(t *testing.T, off *lvWorld, op int, name string, pick uint64, mutation int, manager, where string, worlds ...*lvWorld) []int64 {
	t.Helper()
	if pick/7%2 == 0 {
		for _, w := range worlds {
			w.drain(t)
		}
		off.drain(t)
	}
	gets := make([]int64, len(worlds))
	got := make([]lvOutcome, len(worlds))
	for i, w := range worlds {
		gets[i] = w.counted.gets.Load()
		got[i] = lvStep(t, w, op, name, pick, mutation, manager)
		gets[i] = w.counted.gets.Load() - gets[i]
	}
	wantGets := off.counted.gets.Load()
	want := lvStep(t, off, op, name, pick, mutation, manager)
	wantGets = off.counted.gets.Load() - wantGets
	saved := make([]int64, len(worlds))
	for i, w := range worlds {
		require.Equal(t, want, got[i], "%s: world %d: op %d on %s, pick %d, mutation %d by %s", where, i, op, name, pick, mutation, manager)
		requireSameValues(t, off.backend, w.backend)
		require.LessOrEqual(t, gets[i], wantGets, "%s: world %d: op %d: the memory cost a read", where, i, op)
		saved[i] = wantGets - gets[i]
	}
	return saved
}

// lvStep carries out one operation on w and returns its outcome.
func lvStep(t *testing.T, w *lvWorld, op int, name string, pick uint64, mutation int, manager string) lvOutcome {
	ctx := t.Context()
	var out lvOutcome
	var obj *lvObject
	if h := w.held[name]; len(h) > 0 {
		// The last object returned, mostly; an older (stale) one otherwise.
		i := len(h) - 1
		if pick%3 == 0 {
			i = int(pick/3) % len(h)
		}
		obj = copyObject(t, h[i])
	}
	keep := func(o *lvObject) { w.held[name] = append(w.held[name], copyObject(t, o)) }
	setErr := func(err error) {
		if err != nil {
			out.Err = err.Error()
		}
	}
	switch {
	case op == 0:
		o := &lvObject{Meta: store.Meta{Name: name, Labels: map[string]string{"app": name}}, Spec: lvSpec{Image: "v1", Replicas: 1}}
		rev, err := w.st.As(manager).Create(ctx, o)
		out.Rev, out.Obj = rev, o
		setErr(err)
		if err == nil {
			keep(o)
		}
	case op <= 6 && obj == nil:
		return lvOutcome{Err: "nothing held"}
	case op <= 3:
		mutateSpec(obj, mutation)
		rev, err := w.st.As(manager).Update(ctx, obj)
		out.Rev, out.Obj = rev, obj
		setErr(err)
		if err == nil {
			keep(obj)
		}
	case op <= 6:
		var opts []store.WriteOption
		switch mutation % 4 {
		case 0: // hand-built: no read behind it
			obj.Meta.Revision, obj.Meta.Generation, obj.Meta.UID = 0, 0, ""
		case 1:
			opts = append(opts, store.WithGeneration(obj.Meta.Generation))
		}
		mutateStatus(obj, mutation/2)
		rev, err := w.st.As(manager).UpdateStatus(ctx, obj, opts...)
		out.Rev, out.Obj = rev, obj
		setErr(err)
		if err == nil {
			keep(obj)
		}
	case op == 7:
		var opts []store.WriteOption
		switch pick / 5 % 4 {
		case 1:
			if obj != nil {
				opts = append(opts, store.WithRevision(obj.Meta.Revision))
			}
		case 2:
			opts = append(opts, store.WithForce())
		case 3: // metadata too: a finalizer added, kept or taken away
			meta := store.ApplyMeta{Labels: map[string]string{"applied": manager}}
			if mutation%2 == 1 {
				meta.Finalizers = []string{"example.com/" + manager}
			}
			opts = append(opts, store.WithMeta(meta))
		}
		res, err := w.st.As(manager).Apply(ctx, name, lvSpec{Image: fmt.Sprintf("applied-%d", mutation%3), Replicas: mutation % 2}, opts...)
		out.Result = res
		setErr(err)
	case op == 8:
		var opts []store.WriteOption
		switch pick / 5 % 4 {
		case 1:
			if obj != nil {
				opts = append(opts, store.WithGeneration(obj.Meta.Generation))
			}
		case 2:
			if obj != nil {
				opts = append(opts, store.WithUID(obj.Meta.UID))
			}
		case 3:
			opts = append(opts, store.WithForce())
		}
		cond := store.Condition{Type: "Ready", Status: []store.ConditionStatus{store.ConditionTrue, store.ConditionFalse}[mutation%2]}
		res, err := w.st.As(manager).ApplyStatus(ctx, name, map[string]any{"ready": mutation % 3}, []store.Condition{cond}, opts...)
		out.Result = res
		setErr(err)
	case op == 9:
		// Another Store writes: the memory of w.st is now out of date.
		o, err := w.other.Get(ctx, name)
		if err == nil {
			switch mutation % 4 {
			case 0:
				o.Spec.Replicas += 10
				_, err = w.other.As("outsider").Update(ctx, o)
			case 1:
				o.Status.Ready += 10
				_, err = w.other.As("outsider").UpdateStatus(ctx, o)
			case 2: // the Ready condition flipped at another time, for stamping
				if c := findReady(o.Conditions); c != nil {
					c.Status = []store.ConditionStatus{store.ConditionTrue, store.ConditionFalse}[pick%2]
					c.LastTransitionTime = time.Date(2025, 1, 1, 0, 0, int(pick%60), 0, time.UTC)
				}
				_, err = w.other.As("outsider").UpdateStatus(ctx, o)
			default:
				if len(o.Meta.Finalizers) > 0 { // finalizers taken away: deleted if it was requested
					o.Meta.Finalizers = nil
					_, err = w.other.As("outsider").Update(ctx, o)
					break
				}
				// Deleted and created again: another UID.
				if _, err = w.other.As("outsider").Delete(ctx, name); err == nil {
					_, err = w.other.As("outsider").Create(ctx, &lvObject{Meta: store.Meta{Name: name}, Spec: lvSpec{Image: "theirs"}})
				}
			}
		}
		setErr(err)
	default:
		if mutation == 0 || mutation == 1 && pick%2 == 0 {
			var opts []store.WriteOption
			switch pick / 5 % 3 {
			case 1:
				if obj != nil {
					opts = append(opts, store.WithRevision(obj.Meta.Revision))
				}
			case 2:
				if obj != nil {
					opts = append(opts, store.WithUID(obj.Meta.UID))
				}
			}
			rev, err := w.st.As(manager).Delete(ctx, name, opts...)
			out.Rev = rev
			setErr(err)
			break
		}
		o, err := w.st.Get(ctx, name)
		out.Obj = o
		setErr(err)
		if err == nil {
			keep(o)
		}
	}
	return out
}

func findReady(conds []store.Condition) *store.Condition {
	for i := range conds {
		if conds[i].Type == "Ready" {
			return &conds[i]
		}
	}
	return nil
}

// mutateSpec changes obj's spec side in one of several ways (or not at
// all), as an Update's caller would.
func mutateSpec(obj *lvObject, mutation int) {
	switch mutation {
	case 0: // no change
	case 1, 2:
		obj.Spec.Replicas++
	case 3:
		obj.Spec.Image += "+"
	case 4:
		if obj.Meta.Labels == nil {
			obj.Meta.Labels = map[string]string{}
		}
		obj.Meta.Labels["tier"] += "x"
	case 5:
		if len(obj.Meta.Finalizers) == 0 {
			obj.Meta.Finalizers = []string{"example.com/keep"}
		} else {
			obj.Meta.Finalizers = nil
		}
	case 6:
		obj.Spec.Ports = append(obj.Spec.Ports, lvPort{Name: fmt.Sprint("p", len(obj.Spec.Ports)), Port: 80})
	default:
		if obj.Spec.Env == nil {
			obj.Spec.Env = map[string]string{}
		}
		obj.Spec.Env["A"] += "a"
	}
}

// mutateStatus changes obj's status side in one of several ways (or not at
// all), as an UpdateStatus's caller would.
func mutateStatus(obj *lvObject, mutation int) {
	switch mutation {
	case 0: // no change
	case 1:
		obj.Status.Ready++
	case 2:
		obj.Status.Notes = append(obj.Status.Notes, "n")
	default:
		obj.Conditions = []store.Condition{{Type: "Synced", Status: store.ConditionTrue, Reason: fmt.Sprint(len(obj.Conditions))}}
	}
}

// requireSameValues requires both backends to hold the same keys, values
// and revisions.
func requireSameValues(t *testing.T, want, got kv.Backend) {
	t.Helper()
	w, err := want.List(t.Context(), "", kv.ListOptions{})
	require.NoError(t, err)
	g, err := got.List(t.Context(), "", kv.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, w.Revision, g.Revision)
	require.Equal(t, len(w.KVs), len(g.KVs))
	for i := range w.KVs {
		require.Equal(t, w.KVs[i].Key, g.KVs[i].Key)
		require.JSONEq(t, string(w.KVs[i].Value), string(g.KVs[i].Value))
		require.Equal(t, string(w.KVs[i].Value), string(g.KVs[i].Value))
		require.Equal(t, w.KVs[i].ModRevision, g.KVs[i].ModRevision)
	}
}

// A Loop's writes are based on its previous write's result or on what its
// cache saw; with the Store's memory each is one Txn and no read.
func TestUpdateFromRememberedValueSendsOneTxn(t *testing.T) {
	ctx := t.Context()
	b := &countingBackend{Backend: memstore.New()}
	st, err := store.New[lvSpec, lvStatus](b, "Thing")
	require.NoError(t, err)
	w := st.As("loop")
	obj := &lvObject{Meta: store.Meta{Name: "a"}, Spec: lvSpec{Image: "v1"}}
	_, err = w.Create(ctx, obj)
	require.NoError(t, err)

	writes := func(f func()) (gets, txns int64) {
		g0, t0 := b.gets.Load(), b.txns.Load()
		f()
		return b.gets.Load() - g0, b.txns.Load() - t0
	}
	gets, txns := writes(func() {
		for range 3 {
			obj.Spec.Replicas++
			_, err := w.Update(ctx, obj)
			require.NoError(t, err)
			obj.Status.Ready++
			_, err = w.UpdateStatus(ctx, obj)
			require.NoError(t, err)
		}
	})
	require.Equal(t, [2]int64{0, 6}, [2]int64{gets, txns}, "writes based on the previous write: no reads, one txn each")

	// A write by someone else, seen through the Store's Watch (as a cache
	// sees it), is remembered too.
	events, err := st.Watch(ctx, obj.Meta.Revision)
	require.NoError(t, err)
	other, err := store.New[lvSpec, lvStatus](b.Backend, "Thing")
	require.NoError(t, err)
	theirs, err := other.Get(ctx, "a")
	require.NoError(t, err)
	theirs.Spec.Image = "v2"
	_, err = other.As("user").Update(ctx, theirs)
	require.NoError(t, err)
	ev := <-events
	require.Equal(t, store.Modified, ev.Type)
	seen := ev.Object
	gets, txns = writes(func() {
		seen.Spec.Replicas = 7
		_, err := w.Update(ctx, seen)
		require.NoError(t, err)
	})
	require.Equal(t, [2]int64{0, 1}, [2]int64{gets, txns}, "a write based on a watched object")

	// A write based on an object that has moved on is a conflict, as
	// without the memory.
	stale := copyObject(t, obj)
	stale.Spec.Replicas = 100
	_, err = w.Update(ctx, stale)
	require.ErrorIs(t, err, store.ErrConflict)
}

// recordingBackend keeps every value a Store hands over (kv.Write.Owned),
// with a copy of it as it was handed over.
type recordingBackend struct {
	kv.Backend
	mu     sync.Mutex
	handed [][2][]byte
}

func (r *recordingBackend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if w.Owned {
		r.mu.Lock()
		r.handed = append(r.handed, [2][]byte{w.Value, bytes.Clone(w.Value)})
		r.mu.Unlock()
	}
	return r.Backend.Txn(ctx, conds, w)
}

// A Store hands the values it writes over to its Backend (kv.Write.Owned),
// which memstore then keeps without a copy (and the memory of values
// remembers once): so it never modifies one afterwards, whatever it writes
// next from its memory of values.
func TestAStoreHandsItsValuesOverAndNeverModifiesOne(t *testing.T) {
	ctx := t.Context()
	b := &recordingBackend{Backend: memstore.New()}
	st, err := store.New[lvSpec, lvStatus](b, "Thing")
	require.NoError(t, err)
	w := st.As("loop")
	for i := range 20 {
		o := &lvObject{Meta: store.Meta{Name: fmt.Sprint("t", i%4), Labels: map[string]string{"a": "b"}}, Spec: lvSpec{Image: "v1"}}
		if i < 4 {
			_, err = w.Create(ctx, o)
			require.NoError(t, err)
			continue
		}
		o, err = st.Get(ctx, o.Meta.Name)
		require.NoError(t, err)
		o.Spec.Replicas = i
		o.Status.Notes = append(o.Status.Notes, fmt.Sprint(i))
		_, err = w.Update(ctx, o)
		require.NoError(t, err)
		_, err = w.ApplyStatus(ctx, o.Meta.Name, lvStatus{Ready: i}, nil)
		require.NoError(t, err)
		_, err = w.UpdateStatus(ctx, o) // stale: a conflict
		require.ErrorIs(t, err, store.ErrConflict)
	}
	require.Len(t, b.handed, 4+16*2)
	for _, h := range b.handed {
		require.Equal(t, string(h[1]), string(h[0]), "a value handed over is never modified")
	}
}

// A Store keeps only its latest writes decoded (WithLastValues), but
// remembers the older ones still: a write based on one of them needs no
// read either, and stores what a write without the memory stores.
func TestAWriteFromAnOldWriteNeedsNoRead(t *testing.T) {
	ctx := t.Context()
	b := &countingBackend{Backend: memstore.New()}
	st, err := store.New[lvSpec, lvStatus](b, "Thing")
	require.NoError(t, err)
	w := st.As("loop")
	objs := make([]*lvObject, 1500) // more than the writes kept decoded
	for i := range objs {
		objs[i] = &lvObject{Meta: store.Meta{Name: fmt.Sprintf("thing-%04d", i)}, Spec: lvSpec{Image: "web:v1"}}
		_, err := w.Create(ctx, objs[i])
		require.NoError(t, err)
	}
	gets0, txns0 := b.gets.Load(), b.txns.Load()
	for _, o := range objs[:10] { // written first, displaced since
		o.Status.Ready = 3
		_, err := w.UpdateStatus(ctx, o)
		require.NoError(t, err)
		_, err = w.ApplyStatus(ctx, o.Meta.Name, lvStatus{Ready: 4}, nil)
		require.NoError(t, err)
	}
	require.Equal(t, [2]int64{0, 20}, [2]int64{b.gets.Load() - gets0, b.txns.Load() - txns0})
	for _, o := range objs[:10] {
		got, err := st.Get(ctx, o.Meta.Name)
		require.NoError(t, err)
		require.Equal(t, 4, got.Status.Ready)
		require.Equal(t, "web:v1", got.Spec.Image)
	}
}

// The memory of values (WithLastValues) stays within its bound however
// many objects pass through the Store, and writes go on agreeing with the
// stored values when most of it has been forgotten.
func TestLastValuesBound(t *testing.T) {
	ctx := t.Context()
	b := &countingBackend{Backend: memstore.New()}
	// Room for a handful of ~300-byte values.
	st, err := store.New[lvSpec, lvStatus](b, "Thing", store.WithLastValues(4<<10))
	require.NoError(t, err)
	w := st.As("loop")
	objs := make([]*lvObject, 200)
	for i := range objs {
		objs[i] = &lvObject{Meta: store.Meta{Name: fmt.Sprintf("thing-%03d", i)}, Spec: lvSpec{Image: "registry.example.com/some/image:v1"}}
		_, err := w.Create(ctx, objs[i])
		require.NoError(t, err)
	}
	gets0 := b.gets.Load()
	for _, o := range slices.Backward(objs) { // the last written first
		o.Spec.Replicas++
		_, err := w.Update(ctx, o)
		require.NoError(t, err)
	}
	forgotten := b.gets.Load() - gets0
	require.Greater(t, forgotten, int64(150), "a 4 KiB memory cannot hold 200 objects")
	require.Less(t, forgotten, int64(200), "the objects written last are remembered")
	list, err := st.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	for i, o := range list.Items {
		require.Equal(t, 1, o.Spec.Replicas)
		require.Equal(t, objs[i].Meta, o.Meta)
	}
}

// Eight writers, each a Loop writing its own objects from its last write
// and applying status to it, and all of them writing one shared object from
// reads and applying to it, with the memory on:
// no update is lost, and under -race no memory is shared unsafely.
func TestLastValuesConcurrentWriters(t *testing.T) {
	const writers = 8
	rounds := 400 / raceScale
	ctx := t.Context()
	st, err := store.New[lvSpec, lvStatus](memstore.New(), "Thing")
	require.NoError(t, err)
	_, err = st.As("setup").Create(ctx, &lvObject{Meta: store.Meta{Name: "shared"}})
	require.NoError(t, err)
	var g errgroup.Group
	for i := range writers {
		w := st.As(fmt.Sprint("writer-", i))
		own := &lvObject{Meta: store.Meta{Name: fmt.Sprint("own-", i), Labels: map[string]string{"w": fmt.Sprint(i)}}}
		_, err := w.Create(ctx, own)
		require.NoError(t, err)
		g.Go(func() error {
			for range rounds {
				own.Spec.Replicas++
				own.Meta.Labels["n"] = fmt.Sprint(own.Spec.Replicas) // the caller's map, changed after each write
				if _, err := w.Update(ctx, own); err != nil {
					return err
				}
				own.Status.Ready++
				if _, err := w.UpdateStatus(ctx, own); err != nil {
					return err
				}
				// Applies from the memory: to the shared object, whose
				// remembered value others' writes keep making stale, and
				// to its own, whose revision own then no longer has.
				key := fmt.Sprint("W", i)
				if _, err := w.Apply(ctx, "shared", map[string]any{"env": map[string]any{key: fmt.Sprint(own.Spec.Replicas)}}); err != nil {
					return err
				}
				res, err := w.ApplyStatus(ctx, own.Meta.Name, nil, []store.Condition{{Type: key, Status: store.ConditionTrue, Reason: fmt.Sprint(own.Spec.Replicas)}})
				if err != nil {
					return err
				}
				own.Meta.Revision = res.Revision
				for {
					shared, err := st.Get(ctx, "shared")
					if err != nil {
						return err
					}
					shared.Status.Notes = append(shared.Status.Notes, fmt.Sprint(i))
					if _, err = w.UpdateStatus(ctx, shared); errors.Is(err, store.ErrConflict) {
						continue
					} else if err != nil {
						return err
					}
					break
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	shared, err := st.Get(ctx, "shared")
	require.NoError(t, err)
	require.Len(t, shared.Status.Notes, writers*rounds)
	require.Len(t, shared.Spec.Env, writers)
	for i := range writers {
		own, err := st.Get(ctx, fmt.Sprint("own-", i))
		require.NoError(t, err)
		require.Equal(t, rounds, own.Spec.Replicas)
		require.Equal(t, rounds, own.Status.Ready)
		require.Equal(t, map[string]string{"w": fmt.Sprint(i), "n": fmt.Sprint(rounds)}, own.Meta.Labels)
		require.Equal(t, fmt.Sprint(rounds), shared.Spec.Env[fmt.Sprint("W", i)])
		require.Equal(t, []store.Condition{{Type: fmt.Sprint("W", i), Status: store.ConditionTrue, Reason: fmt.Sprint(rounds), LastTransitionTime: own.Conditions[0].LastTransitionTime}}, own.Conditions)
		require.True(t, slices.ContainsFunc(own.Meta.Managed, func(m store.ManagedFields) bool { return m.Manager == fmt.Sprint("writer-", i) }))
	}
}

// refusingBackend refuses the Txns it is told to with ErrUnavailable (an
// answer lost, say), counting the reads and Txns a Store makes.
type refusingBackend struct {
	countingBackend
	refuse atomic.Int64 // how many of the next Txns to refuse
}

func (r *refusingBackend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if r.refuse.Add(-1) >= 0 {
		r.txns.Add(1)
		return 0, fmt.Errorf("connection lost: %w", store.ErrUnavailable)
	}
	return r.countingBackend.Txn(ctx, conds, w)
}

// A write from the remembered value whose Txn the Backend refuses for a
// reason no other current value changes (ErrFenced, ErrUnavailable: the
// write may even have landed) returns that error at once, as the write
// would without the memory: no read, no second Txn that would turn a lost
// answer into a misleading conflict or a hidden second write.
func TestWriteFromRememberedValueReturnsTheBackendsRefusal(t *testing.T) {
	ctx := t.Context()
	b := &refusingBackend{countingBackend: countingBackend{Backend: memstore.New()}}
	st, err := store.New[lvSpec, lvStatus](b, "Thing")
	require.NoError(t, err)
	w := st.As("loop")
	obj := &lvObject{Meta: store.Meta{Name: "a", Finalizers: []string{"keep"}}, Spec: lvSpec{Image: "v1"}}
	_, err = w.Create(ctx, obj)
	require.NoError(t, err)

	writes := map[string]func() error{
		"Update": func() error {
			next := copyObject(t, obj)
			next.Spec.Replicas++
			_, err := w.Update(ctx, next)
			return err
		},
		"UpdateStatus": func() error {
			next := copyObject(t, obj)
			next.Status.Ready++
			_, err := w.UpdateStatus(ctx, next)
			return err
		},
		"Apply": func() error {
			_, err := w.Apply(ctx, "a", map[string]any{"image": "v2"})
			return err
		},
		"ApplyStatus": func() error {
			_, err := w.ApplyStatus(ctx, "a", map[string]any{"ready": 3}, nil)
			return err
		},
		"Delete": func() error {
			_, err := w.Delete(ctx, "a")
			return err
		},
	}
	for _, name := range []string{"Update", "UpdateStatus", "Apply", "ApplyStatus", "Delete"} {
		g0, t0 := b.gets.Load(), b.txns.Load()
		b.refuse.Store(1)
		err := writes[name]()
		require.ErrorIs(t, err, store.ErrUnavailable, name)
		require.Equal(t, [2]int64{0, 1}, [2]int64{b.gets.Load() - g0, b.txns.Load() - t0}, "%s: reads and Txns", name)
	}
}

// The memory of values (WithLastValues) holds no more heap than its bound,
// although what it keeps of the Store's own writes is decoded, not the
// encoded bytes its bound used to count. The writes are a controller's:
// a status with a condition whose message and time differ from object to
// object, so that each status side has a shape of its own.
func TestLastValuesHeapStaysWithinTheBound(t *testing.T) {
	const bound = 512 << 10
	ctx := t.Context()
	st, err := store.New[lvSpec, lvStatus](memstore.New(), "Thing", store.WithLastValues(bound))
	require.NoError(t, err)
	n := 4000 / raceScale
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		o := &lvObject{Meta: store.Meta{Name: fmt.Sprintf("thing-%05d", i)}, Spec: lvSpec{Image: "web:v1", Replicas: 1 + i%5}}
		_, err := st.As("deployer").Create(ctx, o)
		require.NoError(t, err)
		o, err = st.Get(ctx, o.Meta.Name)
		require.NoError(t, err)
		next := *o
		next.Status.Ready = o.Spec.Replicas
		next.Conditions = []store.Condition{{Type: "Ready", Status: store.ConditionTrue, Reason: "AllRunning",
			Message: fmt.Sprintf("%d/%d running %s", i%7, o.Spec.Replicas, o.Spec.Image), ObservedGeneration: 1,
			LastTransitionTime: now.Add(time.Duration(i) * time.Millisecond)}}
		_, err = st.As("controller").UpdateStatus(ctx, &next)
		require.NoError(t, err)
	}
	var full, empty runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&full)
	st.ForgetLastValues()
	runtime.GC()
	runtime.ReadMemStats(&empty)
	held := int64(full.HeapAlloc) - int64(empty.HeapAlloc)
	t.Logf("%d objects written: the memory held %d KiB (bound %d KiB)", n, held>>10, bound>>10)
	require.LessOrEqual(t, held, int64(bound)*5/4, "heap held by the memory of values")
	runtime.KeepAlive(st)
}

// The status records the memory of values keeps of the Store's own status
// writes past its decoded ones (see WithLastValues) hold no more heap than
// they count, and no more than MaxStatusRecords are kept. The writes are a
// controller's status applies of one field, twice to each object (a status
// write knows its record, the first apply's included), as in the
// controller benchmark.
func TestLastValuesStatusRecordsHoldNoMoreThanTheyCount(t *testing.T) {
	ctx := t.Context()
	st, err := store.New[judgeSpec, judgeStatus](memstore.New(), "App", store.WithLastValues(256<<20))
	require.NoError(t, err)
	n := store.MaxStatusRecords + 1000
	if raceScale > 1 {
		n = 2000
	}
	for i := range n {
		name := fmt.Sprintf("thing-%05d", i)
		_, err := st.As("deployer").Create(ctx, &store.Object[judgeSpec, judgeStatus]{Meta: store.Meta{Name: name}, Spec: judgeSpec{Image: "web:v1", Replicas: 1}})
		require.NoError(t, err)
		for ready := range 2 { // the first apply makes the record, the second keeps it
			_, err = st.As("controller").ApplyStatus(ctx, name, judgeStatus{ReadyReplicas: int64(ready)}, nil)
			require.NoError(t, err)
		}
	}
	var full, empty runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&full)
	records, counted := st.ForgetStatusRecords()
	runtime.GC()
	runtime.ReadMemStats(&empty)
	held := int64(full.HeapAlloc) - int64(empty.HeapAlloc)
	t.Logf("%d status writes: %d records held %d bytes, counted as %d", n, records, held, counted)
	// Each object makes two records: its first apply's when the second
	// replaces it, and the second's when it leaves the decoded writes (the
	// 256 latest: the creation and two applies of each of the last 86
	// objects, whose first apply's record is their latest). The records
	// kept are the latest MaxStatusRecords made, so each key's latest is
	// among them for the last MaxStatusRecords/2 objects to leave the
	// decoded writes, and for those 86.
	want := min(n, store.MaxStatusRecords/2+(store.MaxDecoded+2)/3)
	require.Equal(t, want, records)
	require.LessOrEqual(t, held, int64(counted), "heap held by the status records")
	runtime.KeepAlive(st)
}
