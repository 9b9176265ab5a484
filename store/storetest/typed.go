package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// WidgetSpec and WidgetStatus are the Spec and Status of the objects the
// typed suite stores.
type (
	WidgetSpec struct {
		Replicas int    `json:"replicas"`
		Image    string `json:"image,omitempty"`
	}
	WidgetStatus struct {
		Ready   int    `json:"ready"`
		Message string `json:"message,omitempty"`
	}
	// Widget is the object type of the typed suite.
	Widget = store.Object[WidgetSpec, WidgetStatus]
)

// RunTyped checks the typed semantics of store.Store over the backends that
// newBackend makes (a fresh, empty one per call): create and get, list with
// selectors and pagination, update preconditions and generations, the
// separation of spec and status writes, deletion with finalizers, watch
// events with LastWrite, leadership fences, server-side apply (field
// conflicts, no-op applies, concurrent applies of disjoint fields), key
// status freshness and identity (no lost status update, no status on a
// deleted object's successor), isolation between Stores whose prefixes once overlapped, and poison
// values (bad JSON, a wrong field type, null, another kind, a name other
// than the key's) that Get, List and Watch skip and report while serving the
// rest. Run calls it; a backend's tests may also call it alone.
func RunTyped(t *testing.T, newBackend func(t *testing.T) kv.Backend) {
	t.Run("CreateGet", func(t *testing.T) { testTypedCreateGet(t, newTypedWidgets(t, newBackend)) })
	t.Run("ListSelectorPagination", func(t *testing.T) { testTypedList(t, newTypedWidgets(t, newBackend)) })
	t.Run("UpdateConflictGeneration", func(t *testing.T) { testTypedUpdate(t, newTypedWidgets(t, newBackend)) })
	t.Run("StatusSeparation", func(t *testing.T) { testTypedStatus(t, newTypedWidgets(t, newBackend)) })
	t.Run("DeleteFinalizers", func(t *testing.T) { testTypedDelete(t, newTypedWidgets(t, newBackend)) })
	t.Run("WatchEvents", func(t *testing.T) { testTypedWatch(t, newTypedWidgets(t, newBackend)) })
	t.Run("Fence", func(t *testing.T) { testTypedFence(t, newTypedWidgets(t, newBackend)) })
	t.Run("Apply", func(t *testing.T) { testTypedApply(t, newBackend) })
	t.Run("KeyIsolation", func(t *testing.T) { testTypedKeyIsolation(t, newBackend) })
	t.Run("StatusFreshness", func(t *testing.T) { testTypedStatusFreshness(t, newTypedWidgets(t, newBackend)) })
	t.Run("StatusOnSuccessor", func(t *testing.T) { testTypedStatusSuccessor(t, newTypedWidgets(t, newBackend)) })
	t.Run("PoisonValues", func(t *testing.T) { testTypedPoison(t, newTypedWidgets(t, newBackend)) })
}

func newTypedWidgets(t *testing.T, newBackend func(t *testing.T) kv.Backend) *store.Store[WidgetSpec, WidgetStatus] {
	t.Helper()
	st, err := store.New[WidgetSpec, WidgetStatus](newBackend(t), "Widget", store.WithKeyPrefix("storetest/"))
	require.NoError(t, err)
	return st
}

func typedWidget(name string, replicas int) *Widget {
	return &Widget{Meta: store.Meta{Name: name}, Spec: WidgetSpec{Replicas: replicas, Image: "img:1"}}
}

func typedCreate(t *testing.T, w *store.Writer[WidgetSpec, WidgetStatus], obj *Widget) *Widget {
	t.Helper()
	_, err := w.Create(t.Context(), obj)
	require.NoError(t, err)
	return obj
}

func testTypedCreateGet(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx := t.Context()
	w := st.As("alice")
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	obj := typedWidget("web", 3)
	obj.Meta.Labels = map[string]string{"app": "web"}
	obj.Meta.UID, obj.Meta.Generation = "ignored", 7 // the store owns these
	obj.Status = WidgetStatus{Ready: 1}
	obj.Conditions = []store.Condition{{Type: "Ready", Status: store.ConditionFalse, LastTransitionTime: at}}

	rev, err := w.Create(ctx, obj)
	require.NoError(t, err)
	require.Positive(t, rev)
	require.Equal(t, rev, obj.Meta.Revision, "Create sets the revision in obj")
	require.NotEmpty(t, obj.Meta.UID)
	require.NotEqual(t, "ignored", obj.Meta.UID)
	require.EqualValues(t, 1, obj.Meta.Generation)
	require.Equal(t, "Widget", obj.Meta.Kind)
	require.Equal(t, store.LastWrite{Manager: "alice", Op: ownership.OpCreate}, obj.Meta.LastWrite)

	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, rev, got.Meta.Revision)
	require.Equal(t, obj.Meta.UID, got.Meta.UID)
	require.Equal(t, obj.Spec, got.Spec)
	require.Equal(t, obj.Status, got.Status)
	require.Equal(t, map[string]string{"app": "web"}, got.Meta.Labels)
	require.Len(t, got.Conditions, 1)
	require.True(t, at.Equal(got.Conditions[0].LastTransitionTime))

	_, err = w.Create(ctx, typedWidget("web", 1))
	require.ErrorIs(t, err, store.ErrAlreadyExists)
	require.NoError(t, store.IgnoreAlreadyExists(err))
	again, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, rev, again.Meta.Revision, "a failed Create writes nothing")

	_, err = st.Get(ctx, "missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = st.Get(ctx, "Bad_Name")
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = w.Create(ctx, typedWidget("Bad_Name", 1))
	require.ErrorIs(t, err, store.ErrInvalid)
	wrongKind := typedWidget("x", 1)
	wrongKind.Meta.Kind = "Gadget"
	_, err = w.Create(ctx, wrongKind)
	require.ErrorIs(t, err, store.ErrInvalid)
	dup := typedWidget("dup", 1)
	dup.Conditions = []store.Condition{{Type: "A", Status: store.ConditionTrue}, {Type: "A", Status: store.ConditionFalse}}
	_, err = w.Create(ctx, dup)
	require.ErrorIs(t, err, store.ErrInvalid, "conditions are keyed by type")
	_, err = st.As("").Create(ctx, typedWidget("anon", 1))
	require.ErrorIs(t, err, store.ErrInvalid, "every write names its manager")
}

func testTypedList(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx := t.Context()
	w := st.As("alice")
	var last int64
	for i := range 10 {
		obj := typedWidget(fmt.Sprintf("w%02d", i), i)
		obj.Meta.Labels = map[string]string{"app": "web", "parity": []string{"even", "odd"}[i%2]}
		typedCreate(t, w, obj)
		last = obj.Meta.Revision
	}

	all, err := st.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	require.Len(t, all.Items, 10)
	require.Equal(t, last, all.Revision, "a listing reflects the latest write")
	require.Empty(t, all.Continue)
	for i, obj := range all.Items {
		require.Equal(t, fmt.Sprintf("w%02d", i), obj.Meta.Name, "items come in name order")
		require.Positive(t, obj.Meta.Revision)
	}

	odd, err := store.ParseSelector("parity=odd")
	require.NoError(t, err)
	page, err := st.List(ctx, store.ListOptions{Selector: odd})
	require.NoError(t, err)
	require.Equal(t, []string{"w01", "w03", "w05", "w07", "w09"}, typedNames(page.Items))

	// Pages of 2 odd widgets: each page is filled although the backend holds
	// even ones in between, and every page reflects the first page's revision.
	var got []string
	opts := store.ListOptions{Selector: odd, Limit: 2}
	first := int64(0)
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5, "pagination does not end")
		p, err := st.List(ctx, opts)
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Items), 2)
		if first == 0 {
			first = p.Revision
			// A write after the first page is not part of this listing.
			typedCreate(t, w, &Widget{Meta: store.Meta{Name: "w99", Labels: map[string]string{"parity": "odd"}}})
		}
		require.Equal(t, first, p.Revision)
		got = append(got, typedNames(p.Items)...)
		if p.Continue == "" {
			break
		}
		require.Len(t, p.Items, 2, "only the last page is short")
		opts.Continue = p.Continue
	}
	require.Equal(t, []string{"w01", "w03", "w05", "w07", "w09"}, got)

	_, err = st.List(ctx, store.ListOptions{Continue: "garbage!"})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = st.List(ctx, store.ListOptions{Limit: -1})
	require.ErrorIs(t, err, store.ErrInvalid)

	// Other kinds under the same backend are not listed.
	gadgets, err := store.New[WidgetSpec, WidgetStatus](st.Backend(), "Widgets", store.WithKeyPrefix("storetest/"))
	require.NoError(t, err)
	typedCreate(t, gadgets.As("alice"), typedWidget("w00", 1))
	all, err = st.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	require.Len(t, all.Items, 11)
}

func typedNames(items []*Widget) []string {
	out := make([]string, len(items))
	for i, obj := range items {
		out[i] = obj.Meta.Name
	}
	return out
}

func testTypedUpdate(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx := t.Context()
	alice, bob := st.As("alice"), st.As("bob")
	created := typedCreate(t, alice, typedWidget("web", 1))

	// A label change keeps the generation.
	obj, err := st.Get(ctx, "web")
	require.NoError(t, err)
	obj.Meta.Labels = map[string]string{"tier": "front"}
	rev, err := bob.Update(ctx, obj)
	require.NoError(t, err)
	require.Greater(t, rev, created.Meta.Revision)
	require.Equal(t, rev, obj.Meta.Revision)
	require.EqualValues(t, 1, obj.Meta.Generation)
	require.Equal(t, store.LastWrite{Manager: "bob", Op: ownership.OpUpdate}, obj.Meta.LastWrite)

	// A spec change bumps it.
	obj.Spec.Replicas = 5
	_, err = bob.Update(ctx, obj)
	require.NoError(t, err)
	require.EqualValues(t, 2, obj.Meta.Generation)

	// A stale read conflicts and writes nothing.
	stale := *created
	stale.Spec.Replicas = 9
	_, err = alice.Update(ctx, &stale)
	require.ErrorIs(t, err, store.ErrConflict)
	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, 5, got.Spec.Replicas)
	require.Equal(t, obj.Meta.Revision, got.Meta.Revision)

	// Update writes Meta and Spec only: the stored status stays.
	got.Status = WidgetStatus{Ready: 5}
	_, err = alice.UpdateStatus(ctx, got)
	require.NoError(t, err)
	got.Status = WidgetStatus{Ready: 100}
	got.Spec.Image = "img:2"
	_, err = alice.Update(ctx, got)
	require.NoError(t, err)
	after, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, WidgetStatus{Ready: 5}, after.Status)
	require.Equal(t, "img:2", after.Spec.Image)

	// An update that changes nothing writes nothing.
	rev, err = alice.Update(ctx, after)
	require.NoError(t, err)
	require.Equal(t, after.Meta.Revision, rev)

	// The store owns identity and bookkeeping.
	after.Meta.UID, after.Meta.Generation, after.Meta.DeletionRequested = "forged", 99, true
	after.Spec.Replicas = 6
	_, err = alice.Update(ctx, after)
	require.NoError(t, err)
	require.Equal(t, created.Meta.UID, after.Meta.UID)
	require.EqualValues(t, 4, after.Meta.Generation)
	require.False(t, after.Meta.DeletionRequested)

	unread := typedWidget("web", 1)
	_, err = alice.Update(ctx, unread)
	require.ErrorIs(t, err, store.ErrInvalid, "an update needs the revision of a read")
	missing := typedWidget("missing", 1)
	missing.Meta.Revision = 1
	_, err = alice.Update(ctx, missing)
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testTypedStatus(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx := t.Context()
	user, ctrl := st.As("user"), st.As("controller")
	typedCreate(t, user, typedWidget("web", 1))

	// The controller reads generation 1 and computes a status from it...
	read, err := st.Get(ctx, "web")
	require.NoError(t, err)
	// ...meanwhile the user changes only labels: no conflict.
	meta, err := st.Get(ctx, "web")
	require.NoError(t, err)
	meta.Meta.Labels = map[string]string{"team": "a"}
	_, err = user.Update(ctx, meta)
	require.NoError(t, err)

	read.Status = WidgetStatus{Ready: 1}
	read.Spec.Replicas = 42 // ignored by a status write
	read.Conditions = []store.Condition{{Type: "Ready", Status: store.ConditionTrue, ObservedGeneration: 1}}
	rev, err := ctrl.UpdateStatus(ctx, read, store.WithGeneration(1))
	require.NoError(t, err, "a metadata-only write by someone else does not conflict")
	require.Equal(t, rev, read.Meta.Revision)
	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, WidgetStatus{Ready: 1}, got.Status)
	require.Equal(t, 1, got.Spec.Replicas, "a status write leaves the spec alone")
	require.Equal(t, map[string]string{"team": "a"}, got.Meta.Labels, "and the metadata")
	require.EqualValues(t, 1, got.Meta.Generation, "and never bumps the generation")
	require.Equal(t, store.LastWrite{Manager: "controller", Op: ownership.OpUpdateStatus}, got.Meta.LastWrite)
	require.Equal(t, "Ready", got.Conditions[0].Type)

	// The user changes the spec: a status computed from generation 1 is now
	// refused, with or without an explicit WithGeneration.
	got.Spec.Replicas = 2
	_, err = user.Update(ctx, got)
	require.NoError(t, err)
	read.Status = WidgetStatus{Ready: 7}
	_, err = ctrl.UpdateStatus(ctx, read, store.WithGeneration(1))
	require.ErrorIs(t, err, store.ErrConflict)
	_, err = ctrl.UpdateStatus(ctx, read) // read.Meta.Generation is 1
	require.ErrorIs(t, err, store.ErrConflict)
	now, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, WidgetStatus{Ready: 1}, now.Status, "a refused status write writes nothing")
	_, err = ctrl.UpdateStatus(ctx, read, store.WithGeneration(2))
	require.NoError(t, err)

	// Writing the same status again writes nothing.
	same, err := st.Get(ctx, "web")
	require.NoError(t, err)
	rev, err = ctrl.UpdateStatus(ctx, same)
	require.NoError(t, err)
	require.Equal(t, same.Meta.Revision, rev)

	// A status computed for an object that was since replaced is refused.
	replaced := *same
	replaced.Meta.UID = "another-uid"
	replaced.Status.Ready = 3
	_, err = ctrl.UpdateStatus(ctx, &replaced)
	require.ErrorIs(t, err, store.ErrConflict)

	bad := *same
	bad.Conditions = []store.Condition{{Type: "Ready", Status: "Maybe"}}
	_, err = ctrl.UpdateStatus(ctx, &bad)
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = ctrl.UpdateStatus(ctx, typedWidget("missing", 1))
	require.ErrorIs(t, err, store.ErrNotFound)

	// The spec side: a status write moves the revision, so an Update based on
	// a read from before it conflicts, and re-reading makes it succeed
	// without touching the status.
	stale, err := st.Get(ctx, "web")
	require.NoError(t, err)
	same.Status.Ready = 2
	_, err = ctrl.UpdateStatus(ctx, same)
	require.NoError(t, err)
	stale.Spec.Replicas = 3
	_, err = user.Update(ctx, stale)
	require.ErrorIs(t, err, store.ErrConflict)
}

func testTypedDelete(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx := t.Context()
	w := st.As("alice")

	plain := typedCreate(t, w, typedWidget("plain", 1))
	_, err := w.Delete(ctx, "plain", store.WithUID("someone-else"))
	require.ErrorIs(t, err, store.ErrConflict)
	_, err = w.Delete(ctx, "plain", store.WithRevision(plain.Meta.Revision+100))
	require.ErrorIs(t, err, store.ErrConflict)
	rev, err := w.Delete(ctx, "plain", store.WithRevision(plain.Meta.Revision), store.WithUID(plain.Meta.UID))
	require.NoError(t, err)
	require.Greater(t, rev, plain.Meta.Revision)
	_, err = st.Get(ctx, "plain")
	require.ErrorIs(t, err, store.ErrNotFound, "without finalizers Delete removes the object")
	_, err = w.Delete(ctx, "plain")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, store.IgnoreNotFound(err))

	held := typedWidget("held", 1)
	held.Meta.Finalizers = []string{"a", "b"}
	typedCreate(t, w, held)
	rev, err = st.As("bob").Delete(ctx, "held")
	require.NoError(t, err)
	got, err := st.Get(ctx, "held")
	require.NoError(t, err, "with finalizers the object stays")
	require.True(t, got.Meta.DeletionRequested)
	require.Equal(t, rev, got.Meta.Revision)
	require.Equal(t, store.LastWrite{Manager: "bob", Op: ownership.OpDeleteMark}, got.Meta.LastWrite)
	again, err := w.Delete(ctx, "held")
	require.NoError(t, err)
	require.Equal(t, rev, again, "deleting again writes nothing")

	got.Meta.Finalizers = []string{"b"}
	_, err = w.Update(ctx, got)
	require.NoError(t, err)
	got, err = st.Get(ctx, "held")
	require.NoError(t, err, "the object stays while a finalizer is left")
	require.True(t, got.Meta.DeletionRequested)

	got.Meta.Finalizers = nil
	rev, err = w.Update(ctx, got)
	require.NoError(t, err)
	require.Equal(t, rev, got.Meta.Revision)
	_, err = st.Get(ctx, "held")
	require.ErrorIs(t, err, store.ErrNotFound, "removing the last finalizer deletes the object")
}
