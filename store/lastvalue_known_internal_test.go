package store

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/ownership"
)

// knownStatus is a status stored as it encodes (plainJSON), as a Store
// remembers the values it reads decoded only then, whose shape changes
// with Note.
type knownStatus struct {
	Ready int64  `json:"ready"`
	Phase string `json:"phase"`
	Note  string `json:"note,omitempty"`
}

func randomKnownStatus(rng *rand.Rand) knownStatus {
	st := knownStatus{Ready: rng.Int64N(3), Phase: []string{"", "Up"}[rng.IntN(2)]}
	if rng.IntN(4) == 0 {
		st.Note = "n"
	}
	return st
}

// knownHistory writes the status side of name as a manager other than
// "ctrl" does, through st: fields applied, by force or not, or dropped,
// conditions applied, the status updated.
func knownHistory(ctx context.Context, t *testing.T, st *Store[firstSpec, knownStatus], name string, rng *rand.Rand) {
	t.Helper()
	var err error
	switch rng.IntN(5) {
	case 0:
		fields := map[string]any{}
		for k, v := range map[string]any{"ready": rng.Int64N(3), "phase": "Down", "note": "m"} {
			if rng.IntN(3) == 0 {
				fields[k] = v
			}
		}
		var opts []WriteOption
		if rng.IntN(2) == 0 {
			opts = append(opts, WithForce())
		}
		_, err = st.As("other").ApplyStatus(ctx, name, fields, nil, opts...)
	case 1:
		conds := []Condition{{Type: "Ready", Status: ConditionTrue, Reason: "Fine"}}
		if rng.IntN(2) == 0 {
			conds = append(conds, Condition{Type: "Stalled", Status: ConditionFalse})
		}
		_, err = st.As("loop").ApplyStatus(ctx, name, nil, conds)
	case 2:
		var o *Object[firstSpec, knownStatus]
		if o, err = st.Get(ctx, name); err == nil {
			o.Status = randomKnownStatus(rng)
			_, err = st.As("editor").UpdateStatus(ctx, o)
		}
	case 3:
		_, err = st.As("other").ApplyStatus(ctx, name, nil, nil) // drops its fields
	case 4:
		_, err = st.As("loop").ApplyStatus(ctx, name, nil, nil) // drops its conditions
	}
	if err != nil {
		var ce *ownership.ConflictError
		require.ErrorAs(t, err, &ce)
	}
}

// A value the Store reads after another writer changed the object it last
// wrote knows its status side from that write's record only when that is
// the status side decodeSideOf gives the value (see
// lastValues.knownStatusLocked), over random histories in which other
// managers apply, update and drop status fields and conditions and another
// client updates the spec; and it is known often, and refused often.
func TestLastValuesKnownStatusIsTheDecodedOne(t *testing.T) {
	ctx := context.Background()
	b := newMapBackend()
	mine, err := New[firstSpec, knownStatus](b, "First")
	require.NoError(t, err)
	other, err := New[firstSpec, knownStatus](b, "First", WithLastValues(0))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(45, 1))
	const objects = 6
	for i := range objects {
		_, err := other.As("user").Create(ctx, &Object[firstSpec, knownStatus]{Meta: Meta{Name: fmt.Sprint("o-", i)}, Spec: firstSpec{Replicas: 1}})
		require.NoError(t, err)
	}
	known, refused := 0, 0
	for range race.Sweep(3000, 4) {
		name := fmt.Sprint("o-", rng.IntN(objects))
		switch rng.IntN(4) {
		case 0:
			knownHistory(ctx, t, other, name, rng)
		case 1, 2:
			o, err := other.Get(ctx, name)
			require.NoError(t, err)
			o.Spec.Replicas++
			_, err = other.As("user").Update(ctx, o)
			require.NoError(t, err)
		case 3:
			_, err := mine.As("ctrl").ApplyStatus(ctx, name, randomKnownStatus(rng), nil, WithForce())
			require.NoError(t, err)
			continue
		}
		key := mine.prefix + name
		mine.last.mu.Lock()
		var r statusRecord // as it is now: the Get below may record the key again, in place
		p, recorded := mine.last.records.byKey[key]
		if recorded {
			r = *p
		}
		mine.last.mu.Unlock()
		_, err := mine.Get(ctx, name)
		require.NoError(t, err)
		e, ok := mine.last.latest(key)
		require.True(t, ok)
		if e.written || e.raw == nil {
			continue
		}
		if e.sides.status == nil {
			if recorded && r.rev < e.rev {
				refused++
			}
			continue
		}
		known++
		dec, _ := mine.schemas.decodeSideOf(e.raw, statusSide, nil)
		require.Equal(t, dec, *e.sides.status, "%s at %d: record %+v, status %s", name, e.rev, e.raw.Meta.Managed, e.raw.Status)
	}
	t.Logf("%d reads knew their status side, %d with a record did not", known, refused)
	require.Greater(t, known, race.Sweep(100, 4), "too few reads knew their status side to be tested")
	require.Greater(t, refused, race.Sweep(100, 4), "too few reads were refused a record to be tested")
}

// Two values have the same statusSideOf only with the same ownership
// record, status text and conditions: each of them alone decides the
// status side's record (its Codec is the status's and the conditions'
// shape), whether or not a random history happens to change one alone.
func TestStatusSideOfSameNeedsEachPart(t *testing.T) {
	base := func() *rawObject {
		return &rawObject{
			Meta: Meta{Managed: []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~a"},
				{Manager: "ctrl", Operation: "Apply", Subresource: statusSide, Fields: "~b"}}},
			Status:     []byte(`{"ready":1}`),
			Conditions: []Condition{{Type: "Ready", Status: ConditionTrue}},
		}
	}
	side := sideOf(base(), false)
	require.True(t, side.same(base()))
	for what, change := range map[string]func(*rawObject){
		"status": func(r *rawObject) { r.Status = []byte(`{"ready":1,"note":"n"}`) },
		"record": func(r *rawObject) { r.Meta.Managed = r.Meta.Managed[:1] },
		"entry": func(r *rawObject) {
			r.Meta.Managed = []ManagedFields{r.Meta.Managed[0], {Manager: "ctrl", Operation: "Apply", Subresource: statusSide, Fields: "~c"}}
		},
		"conditions": func(r *rawObject) {
			r.Conditions = append(r.Conditions, Condition{Type: "Stalled", Status: ConditionFalse})
		},
		"condition": func(r *rawObject) { r.Conditions = []Condition{{Type: "Ready", Status: ConditionTrue, Reason: "R"}} },
	} {
		r := base()
		change(r)
		require.False(t, side.same(r), what)
	}
}

// A value whose ownership record is the very list a status record holds
// has that record's entries; a prefix of that list, sharing its array, is
// another record, as is an equal list elsewhere only once compared.
func TestStatusSideOfSameSharedList(t *testing.T) {
	list := []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~a"},
		{Manager: "ctrl", Operation: "Apply", Subresource: statusSide, Fields: "~b"}}
	raw := func(m []ManagedFields) *rawObject {
		return &rawObject{Meta: Meta{Managed: m}, Status: []byte(`{"ready":1}`)}
	}
	side := sideOf(raw(list), false)
	require.True(t, side.same(raw(list)), "the same list")
	require.True(t, side.same(raw(slices.Clone(list))), "an equal list")
	require.False(t, side.same(raw(list[:1])), "a prefix of the same array")
	other := slices.Clone(list)
	other[1].Fields = "~c"
	require.False(t, side.same(raw(other)), "another list")
}

// What a status record counts is managedRecordBytes of its value's own
// ownership record, whichever list the memory counted last: the same list
// again, another of the same length, a prefix of the same array.
func TestRecordBytesFollowTheList(t *testing.T) {
	l := newLastValues(1 << 20)
	list := []ManagedFields{{Manager: "user", Operation: "Update", Fields: "~a"},
		{Manager: "ctrl", Operation: "Apply", Subresource: statusSide, Fields: "~b(,c,d)"}}
	other := slices.Clone(list)
	other[1].Fields = "~b(,c,d,e,f,g,h,i,j,k,l)"
	for _, m := range [][]ManagedFields{list, list, other, list, list[:1], list, nil, list} {
		r := &rawObject{Meta: Meta{Managed: m}, Status: []byte(`{"ready":1}`)}
		require.Equal(t, statusRecordBytes("k", r, managedRecordBytes(m)), l.recordBytesLocked("k", r))
	}
}

// The status record of a write given to the memory (a status apply's)
// shares the written status when it is the write's own, and copies it
// when it is cur's, which may be part of a whole value read.
func TestStatusRecordSharesAGivenWritesOwnStatus(t *testing.T) {
	read := []byte(`{"metadata":{},"spec":{},"status":{"ready":1}}`)
	i := bytes.Index(read, []byte(`{"ready"`))
	managed := []ManagedFields{{Manager: "ctrl", Operation: "Apply", Subresource: statusSide, Fields: "~b"}}
	cur := &rawObject{Meta: Meta{Managed: managed}, Status: read[i : len(read)-1 : len(read)-1]}
	for _, c := range []struct {
		what   string
		status []byte
		given  bool
		shared bool
	}{
		{"the write's own status", []byte(`{"ready":2}`), true, true},
		{"cur's status", cur.Status, true, false},
		{"a part of cur's status", cur.Status[1:], true, false},
		{"a write not given", []byte(`{"ready":2}`), false, false},
	} {
		l := newLastValues(1 << 20)
		next := &rawObject{Meta: Meta{Managed: managed}, Status: c.status}
		l.wroteGiven("k", 2, cur, next, []byte("v2"), decodedSides{status: &decodedSide{}}, c.given, false)
		// A later write of the key makes the record of revision 2.
		l.wroteGiven("k", 3, cur, &rawObject{Meta: Meta{Managed: managed}, Status: []byte(`{"ready":3}`)}, []byte("v3"), decodedSides{}, true, false)
		r := l.records.byKey["k"]
		require.NotNil(t, r, c.what)
		require.Equal(t, string(c.status), r.side.status, c.what)
		require.Equal(t, c.shared, unsafe.StringData(r.side.status) == unsafe.SliceData(c.status), c.what)
		require.True(t, r.side.same(&rawObject{Meta: Meta{Managed: managed}, Status: bytes.Clone(c.status)}), c.what)
	}
}
