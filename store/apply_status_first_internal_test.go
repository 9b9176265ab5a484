package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/ownership"
)

// firstStatus is a status that is flat unless Extra is set, and names
// Count only when it is set.
type firstStatus struct {
	Ready int64             `json:"ready"`
	Phase string            `json:"phase"`
	Count *int64            `json:"count,omitempty"`
	Obs   bool              `json:"obs"`
	Extra map[string]string `json:"extra,omitempty"`
}

type firstSpec struct {
	Replicas int64 `json:"replicas"`
}

func randomFirstStatus(rng *rand.Rand) firstStatus {
	st := firstStatus{Ready: rng.Int64N(3), Phase: []string{"", "Up", "Down"}[rng.IntN(3)], Obs: rng.IntN(2) == 0}
	if rng.IntN(3) == 0 {
		n := rng.Int64N(2)
		st.Count = &n
	}
	if rng.IntN(8) == 0 {
		st.Extra = map[string]string{"k": "v"}
	}
	return st
}

// A status apply that flatStatusApply takes, a manager's first or one of
// the fields it owns by an earlier apply, gives the object, the stored
// status, the ownership record and what is known of the sides that the
// tree merge gives, over random objects whose status other managers
// applied (fields of it, by force or not, or conditions), updated, or that
// the manager itself applied or updated before; and it takes a good share
// of both kinds.
func TestApplyStatusFlatMatchesTheMerge(t *testing.T) {
	ctx := context.Background()
	st, err := New[firstSpec, firstStatus](newMapBackend(), "First")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(26, 3))
	took, tried, beside, own, unchanged, first := 0, 0, 0, 0, 0, 0
	ctrl := st.As("ctrl")
	for i := range race.Sweep(1500, 8) {
		name := fmt.Sprintf("o-%d", i)
		_, err := st.As("user").Create(ctx, &Object[firstSpec, firstStatus]{Meta: Meta{Name: name}, Spec: firstSpec{Replicas: 1}, Status: randomFirstStatus(rng)})
		require.NoError(t, err)
		for range rng.IntN(4) {
			history(ctx, t, st, name, rng)
		}
		if rng.IntN(3) == 0 { // ctrl applied last: the apply below is a later one
			_, err := ctrl.ApplyStatus(ctx, name, randomFirstStatus(rng), nil, WithForce())
			require.NoError(t, err)
		}
		cur, err := st.getRaw(ctx, name, nil)
		require.NoError(t, err)
		if rng.IntN(8) == 0 {
			// A record not in the store's canonical order (status-side
			// entries first): no fast path may take it, known or not.
			cur.Meta.Managed = slices.Clone(cur.Meta.Managed)
			slices.SortStableFunc(cur.Meta.Managed, func(a, b ManagedFields) int {
				return strings.Compare(b.Subresource, a.Subresource)
			})
		}
		status := randomFirstStatus(rng)
		if rng.IntN(4) == 0 {
			_ = json.Unmarshal(cur.Status, &status) // the stored values, where they fit
		}
		applied, err := encodeJSON("applied status", status)
		require.NoError(t, err)
		tried++
		fast, fastSides, ok, ferr := ctrl.flatStatusApply(cur, applied, nil)
		// Given cur's status side, as the memory knows it, it decides the
		// same without decoding it.
		known, _ := st.schemas.decodeSideOf(cur, statusSide, nil)
		kfast, kfastSides, kok, kerr := ctrl.flatStatusApply(cur, applied, &known)
		require.Equal(t, ok, kok)
		require.Equal(t, ferr, kerr)
		require.Equal(t, fast, kfast)
		require.Equal(t, fastSides, kfastSides)
		if !ok && ferr == nil {
			continue
		}
		took++
		for _, e := range cur.Meta.Managed {
			if e.Subresource == statusSide && e.Manager != "ctrl" {
				beside++ // another manager's status-side entry
				break
			}
		}
		if slices.ContainsFunc(cur.Meta.Managed, func(e ManagedFields) bool { return e.Manager == "ctrl" && e.Subresource == statusSide }) {
			own++
		}
		want, wantSides, werr := ctrl.mergeStatusTrees(json.RawMessage(applied), applied, nil, false, cur)
		why := fmt.Sprintf("object %d: status %s, applied %s, record %+v", i, cur.Status, applied, cur.Meta.Managed)
		if werr != nil {
			require.EqualError(t, ferr, werr.Error(), why)
			continue
		}
		require.NoError(t, ferr, why)
		require.Equal(t, want, fast, why)
		if wantSides.status == nil && fastSides.status != nil {
			// A first apply knows the record it writes: the one the
			// merge's object decodes to.
			first++
			dec, _ := st.schemas.decodeSideOf(want, statusSide, nil)
			require.True(t, dec.canonical, why)
			require.Equal(t, dec, *fastSides.status, why)
			fastSides.status = nil
		}
		require.Equal(t, wantSides, fastSides, why)
		if want == nil {
			unchanged++
			continue
		}
		wantBytes, err := st.encodeStored(want)
		require.NoError(t, err)
		gotBytes, err := st.encodeStored(fast)
		require.NoError(t, err)
		require.Equal(t, string(wantBytes), string(gotBytes), why)
	}
	t.Logf("flatStatusApply took %d of %d applies, %d beside another manager's status-side entry, %d of fields ctrl owned, %d changing nothing, %d first applies that knew their record",
		took, tried, beside, own, unchanged, first)
	require.Greater(t, beside, took/6, "too few beside other entries to be tested")
	require.Greater(t, own, took/8, "too few of fields ctrl owned to be tested")
	require.Greater(t, first, took/4, "too few first applies that knew their record to be tested")
	require.Greater(t, unchanged, own/8, "too few that change nothing to be tested")
	require.Greater(t, took, tried/6, "flatStatusApply took too few to be tested")
	require.Less(t, took, tried*9/10, "flatStatusApply gave up too rarely for its limits to be tested")
}

// history makes one random status write to name: another manager's apply
// of some status fields (forced or not) or of conditions, an update of the
// status, or ctrl's own apply or update (after which ctrl's next apply is
// not its first). Conflicts are part of the game.
func history(ctx context.Context, t *testing.T, st *Store[firstSpec, firstStatus], name string, rng *rand.Rand) {
	t.Helper()
	var err error
	switch rng.IntN(8) {
	case 0, 1:
		fields := map[string]any{}
		for k, v := range map[string]any{"ready": rng.Int64N(3), "phase": "Up", "obs": true, "count": rng.Int64N(2)} {
			if rng.IntN(3) == 0 {
				fields[k] = v
			}
		}
		var opts []WriteOption
		if rng.IntN(2) == 0 {
			opts = append(opts, WithForce())
		}
		_, err = st.As("other").ApplyStatus(ctx, name, fields, nil, opts...)
	case 2, 7:
		conds := []Condition{{Type: "Ready", Status: ConditionTrue, Reason: "Fine"}}
		if rng.IntN(2) == 0 {
			conds = append(conds, Condition{Type: "Stalled", Status: ConditionFalse})
		}
		_, err = st.As("loop").ApplyStatus(ctx, name, nil, conds)
	case 3, 4:
		mgr := []string{"editor", "ctrl"}[rng.IntN(2)]
		var o *Object[firstSpec, firstStatus]
		if o, err = st.Get(ctx, name); err == nil {
			o.Status = randomFirstStatus(rng)
			_, err = st.As(mgr).UpdateStatus(ctx, o)
		}
	case 5:
		_, err = st.As("ctrl").ApplyStatus(ctx, name, randomFirstStatus(rng), nil, WithForce())
	case 6:
		_, err = st.As("other").ApplyStatus(ctx, name, nil, nil) // drops its fields
	}
	if err != nil {
		var ce *ownership.ConflictError
		require.ErrorAs(t, err, &ce)
	}
}

// sameScalar compares two scalars as their decoded trees compare
// (treeEqual of jsonscan.Decode's values), integers unboxed included.
func TestSameScalarIsTheTrees(t *testing.T) {
	texts := []string{"0", "-0", "1", "12", "13", "-12", "1.0", "1e3", "1000", "1.5", "1.50",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		`"a"`, `"\u0061"`, `"b"`, "true", "false", "null"}
	for _, a := range texts {
		for _, b := range texts {
			x, err := jsonscan.Decode([]byte(a))
			require.NoError(t, err)
			y, err := jsonscan.Decode([]byte(b))
			require.NoError(t, err)
			require.Equal(t, treeEqual(x, y), sameScalar([]byte(a), []byte(b)), "%s and %s", a, b)
		}
	}
}

// sameShape says two flat objects have the same shape key only when they
// have, each a key (ownStatusApply then keeps the record without asking
// codecOf), and it says so for flat objects of the same keys in the same
// order whose numbers are short and have no exponent (the Loop's).
func TestSameShapeIsTheShapeKey(t *testing.T) {
	texts := []string{`{"a":1}`, `{"a":2,"b":"x"}`, `{"b":"x","a":2}`, `{"a":null,"b":true}`, `{"a":1.5,"b":"y"}`,
		`{"a":1e3,"b":"x"}`, `{"a":1e999,"b":"x"}`, `{"a":1E999,"b":"x"}`, `{"a":-12345678901234567,"b":"x"}`, `{"a":1234567890123456789012,"b":""}`,
		`{"a":"1e999","b":"x"}`, `{"a":3,"b":"x","c":false}`, `{"b":1}`}
	sawSame := 0
	for _, x := range texts {
		for _, y := range texts {
			var arr [4 * maxFirstFields][]byte
			a, ok := flatFields(flatObject{arr[0:0], arr[maxFirstFields:maxFirstFields]}, []byte(x), nil)
			if !ok {
				a, ok = flatFields(flatObject{arr[0:0], arr[maxFirstFields:maxFirstFields]}, []byte(x), [][]byte{[]byte("a"), []byte("b")})
			}
			require.True(t, ok, x)
			b, ok := flatFields(flatObject{arr[2*maxFirstFields : 2*maxFirstFields], arr[3*maxFirstFields : 3*maxFirstFields]}, []byte(y), a.keys)
			if !ok {
				continue // not a's fields
			}
			kx, okx := jsonscan.AppendShapeKey(nil, []byte(x))
			ky, oky := jsonscan.AppendShapeKey(nil, []byte(y))
			keyed := okx && oky && string(kx) == string(ky)
			if sameShape(a, b) {
				sawSame++
				require.True(t, keyed, "%s and %s: sameShape, not the same key", x, y)
			}
			short := !slices.ContainsFunc([]string{x, y}, func(s string) bool {
				return slices.ContainsFunc([]string{"e3", "e999", "E999", "4567", "1.5"}, func(n string) bool { return strings.Contains(s, n) })
			})
			if keyed && short {
				require.True(t, sameShape(a, b), "%s and %s: the same key, short numbers", x, y)
			}
		}
	}
	require.Greater(t, sawSame, 8)
}

// sameFields says two flat objects hold the same fields with equal
// values exactly when their decoded trees are equal: keys in another
// order, values of other texts (1.0 and 1, "\u0061" and "a"), one more,
// one fewer, one other key.
func TestSameFieldsIsTheTrees(t *testing.T) {
	texts := []string{`{"a":1}`, `{"a":1.0}`, `{"a":2}`, `{"b":1}`, `{"a":1,"b":"x"}`, `{"b":"x","a":1}`,
		`{"b":"\u0078","a":1}`, `{"a":1,"b":"y"}`, `{"b":"x","a":2}`, `{"a":1,"c":"x"}`, `{"a":1,"b":"x","c":null}`,
		`{"c":null,"a":1,"b":"x"}`, `{"a":null}`, `{"a":true,"b":false}`, `{"b":false,"a":true}`, `{}`}
	names := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	sawSame := 0
	for _, x := range texts {
		for _, y := range texts {
			var arr [4 * maxFirstFields][]byte
			a, ok := flatFields(flatObject{arr[0:0], arr[maxFirstFields:maxFirstFields]}, []byte(x), names)
			require.True(t, ok, x)
			b, ok := flatFields(flatObject{arr[2*maxFirstFields : 2*maxFirstFields], arr[3*maxFirstFields : 3*maxFirstFields]}, []byte(y), names)
			require.True(t, ok, y)
			tx, err := jsonscan.Decode([]byte(x))
			require.NoError(t, err)
			ty, err := jsonscan.Decode([]byte(y))
			require.NoError(t, err)
			same := sameFields(a, b)
			require.Equal(t, treeEqual(tx, ty), same, "%s and %s", x, y)
			if same && x != y {
				sawSame++
			}
		}
	}
	require.Greater(t, sawSame, 4)
}

// ownsExactlyKnown answers as ownsExactly, from its memory of the last set
// and keys it found owned when it holds them, and only then: another set
// (even an equal one), other keys (a prefix, a longer key, one more, one
// fewer) are walked again.
func TestOwnsExactlyKnownAnswersAsOwnsExactly(t *testing.T) {
	status := func(names ...string) *ownership.Set {
		var ps []diff.Path
		for _, n := range names {
			ps = append(ps, diff.Path{{Kind: diff.FieldElem, Name: statusSide}, {Kind: diff.FieldElem, Name: n}})
		}
		return ownership.MustNewSet(ps...)
	}
	keys := func(names ...string) [][]byte {
		var out [][]byte
		for _, n := range names {
			out = append(out, []byte(n))
		}
		return out
	}
	ready, readyAgain, both, message := status("ready"), status("ready"), status("ready", "message"), status("message")
	var last atomic.Pointer[ownedFields]
	for _, c := range []struct {
		set  *ownership.Set
		keys [][]byte
	}{
		{ready, keys("ready")}, {ready, keys("ready")}, {ready, keys("rea")}, {ready, keys("readyx")},
		{ready, keys("re", "ady")}, {ready, keys("ready", "message")}, {ready, keys()}, {readyAgain, keys("ready")},
		{both, keys("ready", "message")}, {both, keys("ready", "message")}, {both, keys("ready")},
		{both, keys("message", "ready")}, {both, keys("message")}, {ready, keys("message")},
		// Another set of the same keys, after a set found to own them.
		{ready, keys("ready")}, {message, keys("ready")}, {both, keys("ready", "message")}, {ready, keys("ready", "message")},
		// Keys that spell the joined ones without their ends.
		{ready, keys("ready")}, {ready, keys("rea", "y")},
	} {
		require.Equal(t, ownsExactly(c.set, c.keys), ownsExactlyKnown(&last, c.set, c.keys), "%s owns exactly %q", c.set, c.keys)
	}
}

// wideStatus is a flat status of up to 17 fields: those set (not 0).
type wideStatus struct {
	F01 int64 `json:"f01,omitempty"`
	F02 int64 `json:"f02,omitempty"`
	F03 int64 `json:"f03,omitempty"`
	F04 int64 `json:"f04,omitempty"`
	F05 int64 `json:"f05,omitempty"`
	F06 int64 `json:"f06,omitempty"`
	F07 int64 `json:"f07,omitempty"`
	F08 int64 `json:"f08,omitempty"`
	F09 int64 `json:"f09,omitempty"`
	F10 int64 `json:"f10,omitempty"`
	F11 int64 `json:"f11,omitempty"`
	F12 int64 `json:"f12,omitempty"`
	F13 int64 `json:"f13,omitempty"`
	F14 int64 `json:"f14,omitempty"`
	F15 int64 `json:"f15,omitempty"`
	F16 int64 `json:"f16,omitempty"`
	F17 int64 `json:"f17,omitempty"`
}

// wideOf returns a wideStatus of its first n fields, each v.
func wideOf(n int, v int64) wideStatus {
	var st wideStatus
	fs := []*int64{&st.F01, &st.F02, &st.F03, &st.F04, &st.F05, &st.F06, &st.F07, &st.F08, &st.F09,
		&st.F10, &st.F11, &st.F12, &st.F13, &st.F14, &st.F15, &st.F16, &st.F17}
	for _, f := range fs[:n] {
		*f = v
	}
	return st
}

// flatStatusApply takes a flat status of up to maxFirstFields fields,
// first applies and later ones alike, and gives the merge's object; past
// maxFirstFields it leaves the apply to the merge.
func TestFlatStatusApplyTakesUpToMaxFirstFields(t *testing.T) {
	ctx := context.Background()
	st, err := New[firstSpec, wideStatus](newMapBackend(), "Wide")
	require.NoError(t, err)
	ctrl := st.As("ctrl")
	for _, n := range []int{1, 4, 5, maxFirstFields, maxFirstFields + 1} {
		name := fmt.Sprintf("o-%d", n)
		_, err := st.As("user").Create(ctx, &Object[firstSpec, wideStatus]{Meta: Meta{Name: name}, Spec: firstSpec{Replicas: 1}})
		require.NoError(t, err)
		for v := range int64(2) { // a first apply, then one of the fields ctrl owns
			status := wideOf(n, v+1)
			cur, err := st.getRaw(ctx, name, nil)
			require.NoError(t, err)
			applied, err := encodeJSON("applied status", status)
			require.NoError(t, err)
			fast, _, ok, err := ctrl.flatStatusApply(cur, applied, nil)
			require.NoError(t, err)
			require.Equal(t, n <= maxFirstFields, ok, "%d fields, apply %d", n, v+1)
			if ok {
				want, _, err := ctrl.mergeStatusTrees(json.RawMessage(applied), applied, nil, false, cur)
				require.NoError(t, err)
				require.NotNil(t, want)
				wantBytes, err := st.encodeStored(want)
				require.NoError(t, err)
				gotBytes, err := st.encodeStored(fast)
				require.NoError(t, err)
				require.Equal(t, string(wantBytes), string(gotBytes), "%d fields, apply %d", n, v+1)
			}
			_, err = ctrl.ApplyStatus(ctx, name, status, nil)
			require.NoError(t, err)
		}
	}
}

// TestFlatStatusSideOfIsDecodeSideOf checks that the status side a status
// apply takes for a flat status (flatStatusSideOf) is the one decodeSideOf
// decodes, its Codec included, and that it gives the side it remembers
// only for a status of the same keys, in the same order, and no
// conditions, whose record has the same status-side entries, in the same
// place among the spec-side ones.
func TestFlatStatusSideOfIsDecodeSideOf(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	st := newReadAsStore(t, b)
	user, ctrl, ops := st.As("user"), st.As("ctrl"), st.As("ops")
	for _, name := range []string{"a", "b", "c"} {
		_, err := user.Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Replicas: 1}})
		require.NoError(t, err)
	}
	_, err := ctrl.ApplyStatus(ctx, "a", keepStatus{Ready: 1}, nil)
	require.NoError(t, err)
	_, err = ctrl.ApplyStatus(ctx, "b", keepStatus{Ready: 2, Message: "m"}, nil)
	require.NoError(t, err)
	_, err = ctrl.ApplyStatus(ctx, "c", keepStatus{Ready: 3}, nil)
	require.NoError(t, err)
	_, err = ops.ApplyStatus(ctx, "c", map[string]any{"message": "ops"}, nil, WithForce())
	require.NoError(t, err)
	read := func(name string) *rawObject {
		stored, err := b.Get(ctx, st.keyOf(name))
		require.NoError(t, err)
		raw, err := st.decodeRaw(stored, false)
		require.NoError(t, err)
		return raw
	}
	base := read("a")
	with := func(change func(raw *rawObject)) *rawObject {
		raw := *base
		raw.Meta.Managed = slices.Clone(base.Meta.Managed)
		change(&raw)
		return &raw
	}
	require.Len(t, base.Meta.Managed, 2)
	cases := []struct {
		name  string
		raw   *rawObject
		taken bool
	}{
		{"alike", read("b"), true},
		{"itself", base, true},
		{"keys reordered", with(func(r *rawObject) { r.Status = []byte(`{"message":"","ready":1}`) }), false},
		{"a key more", with(func(r *rawObject) { r.Status = []byte(`{"ready":1,"message":"","extra":1}`) }), false},
		{"a number the shape key parses", with(func(r *rawObject) { r.Status = []byte(`{"ready":1e999,"message":""}`) }), false},
		{"conditions", with(func(r *rawObject) { r.Conditions = []Condition{{Type: "Ready", Status: ConditionTrue}} }), false},
		{"another manager's entry", read("c"), false},
		{"the entry another manager's", with(func(r *rawObject) {
			for i := range r.Meta.Managed {
				if r.Meta.Managed[i].Subresource == statusSide {
					r.Meta.Managed[i].Manager = "ops"
				}
			}
		}), false},
		{"the spec side's entry after", with(func(r *rawObject) { slices.Reverse(r.Meta.Managed) }), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := st.As("ctrl")
			flat := func(raw *rawObject) flatObject {
				o, ok := flatFields(flatObject{}, raw.Status, nil)
				require.True(t, ok)
				return o
			}
			st.statusSide.Store(nil)
			known, knownCodec := w.flatStatusSideOf(base, flat(base))
			require.NotNil(t, known)
			got, gotCodec := w.flatStatusSideOf(c.raw, flat(c.raw))
			require.Equal(t, c.taken, got == known, "the side remembered taken")
			want, wantCodec := st.schemas.decodeSideOf(c.raw, statusSide, nil)
			if wantCodec == nil { // a number out of range: no Codec, no side
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.Equal(t, want.canonical, got.canonical)
			require.Len(t, got.managed, len(want.managed))
			for i, e := range want.managed {
				g := got.managed[i]
				require.Equal(t, e.Manager, g.Manager)
				require.Equal(t, e.Operation, g.Operation)
				require.True(t, e.Set.Equal(g.Set), "%v, want %v", g.Set, e.Set)
			}
			if c.taken {
				require.Same(t, knownCodec, gotCodec)
			}
			if wantCodec == knownCodec { // a Codec the Store remembers by its shape
				require.Same(t, wantCodec, gotCodec)
			} else {
				require.NotSame(t, knownCodec, gotCodec)
			}
		})
	}
}

// recStatus is a flat status whose keys vary with its values: Phase and
// Big are named only when set, and Big is any number text.
type recStatus struct {
	Ready int64       `json:"ready"`
	Phase string      `json:"phase,omitempty"`
	Big   json.Number `json:"big,omitempty"`
}

// recSpec's record varies with its values: Image is named only when set.
type recSpec struct {
	Replicas int64  `json:"replicas"`
	Image    string `json:"image,omitempty"`
}

func randomRecStatus(rng *rand.Rand) recStatus {
	st := recStatus{Ready: rng.Int64N(4)}
	if rng.IntN(16) == 0 {
		st.Phase = "Up"
	}
	if rng.IntN(12) == 0 {
		// 17 digits and an exponent are numbers the shape key parses;
		// 1e999 is beyond float64's range.
		st.Big = json.Number([]string{"12", "12345678901234567", "1e3", "1e999"}[rng.IntN(4)])
	}
	return st
}

// A manager's first status apply over an object whose status side has no
// entry takes the record the Store's last such apply wrote (firstRecord)
// when it wrote it over the same record, for the same manager and the same
// status keys, with no conditions and no number the shape key parses; and
// whether it takes it or not, it gives what the apply gives without it, and
// what the merge gives: the object, its stored bytes, its record and its
// status side; and ApplyStatus stores those bytes, or refuses the write as
// it must (a stale WithObserved or WithGeneration), with or without
// WithForce. Over random objects of several creators, spec records and
// conditions, applies by two managers of statuses of several keys.
func TestFirstStatusApplyOfARememberedRecordIsTheMerge(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	st, err := New[recSpec, recStatus](b, "Rec")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(60, 26))
	hits, misses, refused := 0, 0, 0
	for i := range race.Sweep(1200, 8) {
		name := fmt.Sprintf("o-%d", i)
		o := &Object[recSpec, recStatus]{Meta: Meta{Name: name}, Spec: recSpec{Replicas: 1}}
		// Mostly alike, as a fleet is, and each way of differing now and
		// then.
		if rng.IntN(16) == 0 {
			o.Spec.Image = "img" // a spec record of other fields
		}
		if rng.IntN(16) == 0 {
			o.Conditions = []Condition{{Type: "Ready", Status: ConditionTrue, Reason: "Made"}}
		}
		creator := "user"
		if rng.IntN(16) == 0 {
			creator = "ops"
		}
		_, err := st.As(creator).Create(ctx, o)
		require.NoError(t, err)
		if rng.IntN(16) == 0 { // a second spec-side entry
			got, err := st.Get(ctx, name)
			require.NoError(t, err)
			got.Spec.Replicas = 2
			_, err = st.As("scaler").Update(ctx, got)
			require.NoError(t, err)
		}
		w := st.As("ctrl")
		if rng.IntN(16) == 0 {
			w = st.As("ctrl2")
		}
		status := randomRecStatus(rng)
		cur, err := st.getRaw(ctx, name, nil)
		require.NoError(t, err)
		applied, err := st.encodeApplied(status)
		require.NoError(t, err)
		why := fmt.Sprintf("object %d by %s: status %s, applied %s, record %+v, conditions %v", i, w.manager, cur.Status, applied, cur.Meta.Managed, cur.Conditions)

		before := st.firstRecord.Load()
		got, gotSides, ok, gerr := w.flatStatusApply(cur, applied, nil)
		after := st.firstRecord.Load()
		hit := before != nil && got != nil && len(got.Meta.Managed) > 0 && unsafe.SliceData(got.Meta.Managed) == unsafe.SliceData(before.managed)
		if hit {
			hits++
			require.Same(t, before, after, why)
		} else if ok || gerr != nil {
			misses++
		}
		// Without the record remembered, the same.
		st.firstRecord.Store(nil)
		plain, plainSides, pok, perr := w.flatStatusApply(cur, applied, nil)
		st.firstRecord.Store(after)
		require.Equal(t, pok, ok, why)
		require.Equal(t, perr, gerr, why)
		require.Equal(t, plain, got, why)
		require.Equal(t, plainSides, gotSides, why)
		if !ok && gerr == nil {
			continue
		}
		// And the merge's.
		want, wantSides, werr := w.mergeStatusTrees(json.RawMessage(applied), applied, nil, false, cur)
		if werr != nil {
			require.Error(t, gerr, why)
			continue
		}
		require.NoError(t, gerr, why)
		require.Equal(t, want, got, why)
		if wantSides.status == nil && gotSides.status != nil {
			dec, _ := st.schemas.decodeSideOf(want, statusSide, nil)
			require.Equal(t, dec, *gotSides.status, why)
		}
		wantBytes, err := st.encodeStored(want)
		require.NoError(t, err)
		gotBytes, err := st.encodeStored(got)
		require.NoError(t, err)
		require.Equal(t, string(wantBytes), string(gotBytes), why)

		// ApplyStatus stores those bytes, or refuses a stale guard.
		var opts []WriteOption
		stale := false
		switch rng.IntN(4) {
		case 0:
			read := cur.Meta
			if rng.IntN(4) == 0 {
				read.Generation++
				stale = true
			}
			opts = append(opts, WithObserved(read))
		case 1:
			g := cur.Meta.Generation
			if rng.IntN(4) == 0 {
				g--
				stale = true
			}
			opts = append(opts, WithGeneration(g))
		}
		if rng.IntN(3) == 0 {
			opts = append(opts, WithForce())
		}
		res, err := w.ApplyStatus(ctx, name, status, nil, opts...)
		if stale {
			refused++
			require.ErrorIs(t, err, ErrConflict, why)
			stored, err := b.Get(ctx, st.keyOf(name))
			require.NoError(t, err)
			require.Equal(t, cur.Meta.Revision, stored.ModRevision, why)
			continue
		}
		require.NoError(t, err, why)
		require.True(t, res.Changed, why)
		stored, err := b.Get(ctx, st.keyOf(name))
		require.NoError(t, err)
		require.Equal(t, string(wantBytes), string(stored.Value), why)
	}
	t.Logf("%d first applies took the record remembered, %d did not, %d refused", hits, misses, refused)
	require.Greater(t, hits, race.Sweep(1200, 8)/4, "too few took the record remembered to be tested")
	require.Greater(t, misses, race.Sweep(1200, 8)/6, "too few did not to be tested")
	require.Greater(t, refused, 0, "no stale guard tried")
}

// A first status apply takes the record firstRecord remembers only for
// what that record was written for: the same manager, stored record and
// status keys, with no conditions and no number the shape key parses;
// and gives what it gives with nothing remembered either way.
func TestFirstRecordIsTakenOnlyForWhatItWasWrittenFor(t *testing.T) {
	ctx := context.Background()
	st, err := New[recSpec, recStatus](newMapBackend(), "Rec")
	require.NoError(t, err)
	n := 0
	// create makes an object as o gives it, "user" creating it unless
	// creator says otherwise.
	create := func(creator string, o Object[recSpec, recStatus]) *rawObject {
		n++
		o.Meta.Name = fmt.Sprintf("o-%d", n)
		_, err := st.As(creator).Create(ctx, &o)
		require.NoError(t, err)
		cur, err := st.getRaw(ctx, o.Meta.Name, nil)
		require.NoError(t, err)
		return cur
	}
	apply := func(manager string, cur *rawObject, status recStatus) (*rawObject, decodedSides, bool, error) {
		applied, err := st.encodeApplied(status)
		require.NoError(t, err)
		return st.As(manager).flatStatusApply(cur, applied, nil)
	}
	plain := Object[recSpec, recStatus]{Spec: recSpec{Replicas: 1}}
	withBig := func(big string) recStatus { return recStatus{Ready: 1, Big: json.Number(big)} }
	cases := []struct {
		name     string
		base     recStatus // ctrl's first apply that the record is remembered of
		creator  string
		obj      Object[recSpec, recStatus]
		manager  string
		status   recStatus
		taken    bool
		declined bool // with an error
	}{
		{name: "alike", status: recStatus{Ready: 2}, taken: true},
		{name: "another manager", manager: "ctrl2", status: recStatus{Ready: 2}},
		{name: "a key more", status: recStatus{Ready: 2, Phase: "Up"}},
		{name: "a key fewer", base: recStatus{Ready: 1, Phase: "Up"}, status: recStatus{Ready: 2}},
		{name: "alike, two keys", base: recStatus{Ready: 1, Phase: "Up"}, status: recStatus{Ready: 2, Phase: "Down"}, taken: true},
		{name: "created by another", creator: "ops", status: recStatus{Ready: 2}},
		{name: "another spec record", obj: Object[recSpec, recStatus]{Spec: recSpec{Replicas: 1, Image: "img"}}, status: recStatus{Ready: 2}},
		{name: "conditions", obj: Object[recSpec, recStatus]{Spec: recSpec{Replicas: 1}, Conditions: []Condition{{Type: "Ready", Status: ConditionTrue}}}, status: recStatus{Ready: 2}},
		{name: "alike, a number", base: withBig("12"), status: withBig("13"), taken: true},
		{name: "a long number", base: withBig("12"), status: withBig("12345678901234567")},
		{name: "a number out of range", base: withBig("12"), status: withBig("1e999"), declined: true},
		{name: "after a long number", base: withBig("12345678901234567"), status: withBig("13")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := c.base
			if base == (recStatus{}) {
				base = recStatus{Ready: 1}
			}
			st.firstRecord.Store(nil)
			_, _, ok, err := apply("ctrl", create("user", plain), base)
			require.True(t, ok)
			require.NoError(t, err)
			m := st.firstRecord.Load()
			if c.name == "after a long number" {
				require.Nil(t, m, "a record remembered for a number the shape key parses")
				return
			}
			require.NotNil(t, m)
			creator, obj, manager := c.creator, c.obj, c.manager
			if creator == "" {
				creator = "user"
			}
			if obj.Spec == (recSpec{}) {
				obj = plain
			}
			if manager == "" {
				manager = "ctrl"
			}
			cur := create(creator, obj)
			got, gotSides, ok, gerr := apply(manager, cur, c.status)
			taken := got != nil && unsafe.SliceData(got.Meta.Managed) == unsafe.SliceData(m.managed)
			require.Equal(t, c.taken, taken, "the record remembered taken")
			require.Equal(t, c.declined, gerr != nil, "declined: %v", gerr)
			st.firstRecord.Store(nil)
			want, wantSides, wok, werr := apply(manager, cur, c.status)
			require.Equal(t, wok, ok)
			require.Equal(t, werr, gerr)
			require.Equal(t, want, got)
			require.Equal(t, wantSides, gotSides)
		})
	}
}
