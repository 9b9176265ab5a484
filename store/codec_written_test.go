package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

type writtenSpec struct {
	Image    string            `json:"image"`
	Args     []string          `json:"args"`
	Selector map[string]string `json:"selector"`
}

type writtenStatus struct {
	Ready int64    `json:"ready"`
	Notes []string `json:"notes,omitempty"`
}

// The watch event of a value the Store wrote itself is decoded from what
// it remembers of that write, not from the event's bytes, when that gives
// exactly what the bytes decode to: the same object, nil where the
// encoding omits an empty map or slice. Where it would not (invalid UTF-8,
// which the encoding replaces; a condition time outside UTC or with a
// monotonic reading), and for a value written since by another client,
// whatever the memory holds, the bytes are decoded. Every event equals what
// another client, remembering nothing, reads at that revision.
func TestWatchOfOwnWriteIsTheStoredValue(t *testing.T) {
	ctx := t.Context()
	mem := memstore.New()
	st, err := store.New[writtenSpec, writtenStatus](mem, "W")
	require.NoError(t, err)
	other, err := store.New[writtenSpec, writtenStatus](mem, "W", store.WithLastValues(0))
	require.NoError(t, err)
	w, u := st.As("ctl"), other.As("user")
	from, err := u.Create(ctx, &store.Object[writtenSpec, writtenStatus]{Meta: store.Meta{Name: "seed"}})
	require.NoError(t, err)

	type step struct {
		name     string
		rev      int64
		fromMem  bool // the Store decodes its event from memory
		expected *store.Object[writtenSpec, writtenStatus]
	}
	var steps []step
	// stored records what another client reads of name after a write.
	stored := func(name string, rev int64, fromMem bool) {
		t.Helper()
		got, err := other.Get(ctx, name)
		require.NoError(t, err)
		require.Equal(t, rev, got.Meta.Revision)
		steps = append(steps, step{name, rev, fromMem, got})
	}
	create := func(wr *store.Writer[writtenSpec, writtenStatus], name string, labels map[string]string) int64 {
		t.Helper()
		rev, err := wr.Create(ctx, &store.Object[writtenSpec, writtenStatus]{
			Meta: store.Meta{Name: name, Labels: labels, Finalizers: []string{"f"}},
			Spec: writtenSpec{Image: "img", Args: []string{"a", "b"}, Selector: map[string]string{"app": name}},
		})
		require.NoError(t, err)
		return rev
	}

	stored("plain", create(w, "plain", map[string]string{"a": "1"}), true)

	create(u, "empty", map[string]string{"a": "1"})
	obj, err := st.Get(ctx, "empty")
	require.NoError(t, err)
	obj.Meta.Labels, obj.Meta.Finalizers = map[string]string{}, []string{}
	rev, err := w.Update(ctx, obj)
	require.NoError(t, err)
	stored("empty", rev, true)

	create(u, "applied", nil)
	res, err := w.ApplyStatus(ctx, "applied", writtenStatus{Ready: 2, Notes: []string{"x"}},
		[]store.Condition{{Type: "Ready", Status: store.ConditionTrue, Message: "<ok> & \"quoted\" ✓"}})
	require.NoError(t, err)
	stored("applied", res.Revision, true)

	for name, at := range map[string]time.Time{
		"monotonic": time.Now(),
		"zoned":     time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600)),
	} {
		create(u, name, nil)
		obj, err := st.Get(ctx, name)
		require.NoError(t, err)
		obj.Status.Ready = 1
		obj.Conditions = []store.Condition{{Type: "Ready", Status: store.ConditionTrue, LastTransitionTime: at}}
		rev, err := w.UpdateStatus(ctx, obj)
		require.NoError(t, err)
		stored(name, rev, false)
	}

	stored("utf8", create(w, "utf8", map[string]string{"a": "x\xffy"}), false)

	// Another client writes over the Store's own write: the memory holds
	// the older revision, which is not the newer value.
	stored("overwritten", create(w, "overwritten", nil), true)
	obj, err = other.Get(ctx, "overwritten")
	require.NoError(t, err)
	obj.Spec.Image = "other"
	rev, err = u.Update(ctx, obj)
	require.NoError(t, err)
	stored("overwritten", rev, false)

	for _, s := range steps {
		got, ok := st.DecodeWrittenAt(s.name, s.rev)
		require.Equal(t, s.fromMem, ok, "%s at %d decoded from memory", s.name, s.rev)
		if ok {
			require.Equal(t, s.expected, got, "%s at %d", s.name, s.rev)
		}
	}
	// The watch replays every write after the seed, decoding them now.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := st.Watch(wctx, from)
	require.NoError(t, err)
	for _, s := range steps {
		if s.name == "empty" || s.name == "applied" || s.name == "monotonic" || s.name == "zoned" {
			// Its creation by the other client comes first.
			ev := <-events
			require.Equal(t, store.Added, ev.Type)
			require.Equal(t, s.name, ev.Object.Meta.Name)
		}
		ev := <-events
		require.Nil(t, ev.Undecodable)
		require.Equal(t, s.expected, ev.Object, "%s at %d", s.name, s.rev)
	}
}

// A value the Store read from a watch is remembered decoded, as decoding
// its bytes gives it, and a write from it (an ApplyStatus) writes what is
// stored, whatever the watch's caller does to the object it was handed.
func TestWriteFromWatchedValueIgnoresTheEventsObject(t *testing.T) {
	ctx := t.Context()
	mem := memstore.New()
	st, err := store.New[writtenSpec, writtenStatus](mem, "W")
	require.NoError(t, err)
	other, err := store.New[writtenSpec, writtenStatus](mem, "W", store.WithLastValues(0))
	require.NoError(t, err)
	u := other.As("user")
	from, err := u.Create(ctx, &store.Object[writtenSpec, writtenStatus]{Meta: store.Meta{Name: "seed"}})
	require.NoError(t, err)
	_, err = u.Create(ctx, &store.Object[writtenSpec, writtenStatus]{
		Meta: store.Meta{Name: "x", Labels: map[string]string{"a": "1"}, Finalizers: []string{"f"}},
		Spec: writtenSpec{Image: "img", Args: []string{"a"}},
	})
	require.NoError(t, err)
	obj, err := other.Get(ctx, "x")
	require.NoError(t, err)
	obj.Conditions = []store.Condition{{Type: "Ready", Status: store.ConditionFalse, Message: "m"}}
	_, err = u.UpdateStatus(ctx, obj)
	require.NoError(t, err)
	want, err := other.Get(ctx, "x")
	require.NoError(t, err)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := st.Watch(wctx, from)
	require.NoError(t, err)
	var ev store.Event[writtenSpec, writtenStatus]
	for range 2 {
		ev = <-events
	}
	require.Equal(t, want, ev.Object)
	decoded, same := st.LatestRead("x")
	require.True(t, decoded, "remembered decoded")
	require.True(t, same, "as its bytes decode")
	o := ev.Object
	o.Meta.Labels["a"] = "changed"
	o.Meta.Finalizers[0] = "changed"
	o.Meta.Managed[0].Fields = "changed"
	o.Conditions[0].Message = "changed"
	_, same = st.LatestRead("x")
	require.True(t, same, "the memory shares nothing with the event's object")

	_, err = st.As("ctl").ApplyStatus(ctx, "x", writtenStatus{Ready: 1}, nil)
	require.NoError(t, err)
	got, err := other.Get(ctx, "x")
	require.NoError(t, err)
	require.Equal(t, want.Meta.Labels, got.Meta.Labels)
	require.Equal(t, want.Meta.Finalizers, got.Meta.Finalizers)
	require.Equal(t, want.Meta.Managed[0], got.Meta.Managed[0])
	require.Equal(t, want.Conditions, got.Conditions)
	require.Equal(t, want.Spec, got.Spec)
	require.Equal(t, int64(1), got.Status.Ready)
}
