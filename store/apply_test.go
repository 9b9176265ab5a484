package store_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

type (
	applyPort struct {
		Port int    `json:"port"`
		Name string `json:"name,omitempty"`
	}
	applySpec struct {
		Image    string      `json:"image,omitempty"`
		Replicas *int        `json:"replicas,omitempty"`
		Ports    []applyPort `json:"ports,omitempty" steady:"keys=port"`
	}
	applyStatus struct {
		Ready *int   `json:"ready,omitempty"`
		Phase string `json:"phase,omitempty"`
	}
)

func ptr[V any](v V) *V { return &v }

func newApplyStore(t *testing.T) *store.Store[applySpec, applyStatus] {
	t.Helper()
	st, err := store.New[applySpec, applyStatus](memstore.New(), "App")
	require.NoError(t, err)
	return st
}

func requireFieldConflict(t *testing.T, err error, manager, path string) {
	t.Helper()
	var ce *ownership.ConflictError
	require.True(t, errors.As(err, &ce), "want *ownership.ConflictError, got %v", err)
	require.NotErrorIs(t, err, store.ErrConflict, "a field conflict is not a revision conflict")
	var got []string
	for _, c := range ce.Conflicts {
		got = append(got, c.Manager+" "+c.Path.String())
	}
	require.Contains(t, got, manager+" "+path)
}

func TestApplyCreatesMergesAndWritesOnlyChanges(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	user, scaler := st.As("user"), st.As("autoscaler")

	res, err := user.Apply(ctx, "web", applySpec{Image: "web:1", Replicas: ptr(3)})
	require.NoError(t, err)
	require.True(t, res.Created)
	require.True(t, res.Changed)
	require.EqualValues(t, 1, res.Generation)
	obj, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, res.Revision, obj.Meta.Revision)
	require.Equal(t, res.UID, obj.Meta.UID)
	require.Equal(t, store.LastWrite{Manager: "user", Op: ownership.OpApply}, obj.Meta.LastWrite)
	require.Equal(t, 3, *obj.Spec.Replicas)

	again, err := user.Apply(ctx, "web", applySpec{Image: "web:1", Replicas: ptr(3)})
	require.NoError(t, err)
	require.False(t, again.Changed, "re-applying the same configuration writes nothing")
	require.Equal(t, res.Revision, again.Revision)

	_, err = scaler.Apply(ctx, "web", map[string]any{"replicas": 5})
	requireFieldConflict(t, err, "user", ".spec.replicas")
	obj, err = st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, res.Revision, obj.Meta.Revision, "a conflicting apply writes nothing")

	forced, err := scaler.Apply(ctx, "web", map[string]any{"replicas": 5}, store.WithForce())
	require.NoError(t, err)
	require.EqualValues(t, 2, forced.Generation, "a spec change bumps the generation")
	obj, err = st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, 5, *obj.Spec.Replicas)
	require.Equal(t, "web:1", obj.Spec.Image, "force takes only the conflicting field")

	// Force took replicas out of the user's set, so the user leaving it
	// out changes nothing, and the autoscaler keeps it.
	res, err = user.Apply(ctx, "web", applySpec{Image: "web:1"})
	require.NoError(t, err)
	require.False(t, res.Changed)
	require.EqualValues(t, 2, res.Generation)
	obj, err = st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, 5, *obj.Spec.Replicas)

	// A field applied before and no longer is removed.
	_, err = user.Apply(ctx, "web", applySpec{Ports: []applyPort{{Port: 80}}})
	require.NoError(t, err)
	obj, err = st.Get(ctx, "web")
	require.NoError(t, err)
	require.Empty(t, obj.Spec.Image)
	require.Equal(t, []applyPort{{Port: 80}}, obj.Spec.Ports)
	require.EqualValues(t, 3, obj.Meta.Generation)
}

func TestApplyMetadataAndKeyedLists(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	web, metrics := st.As("web"), st.As("metrics")
	_, err := web.Apply(ctx, "app", applySpec{Ports: []applyPort{{Port: 80, Name: "http"}}},
		store.WithMeta(store.ApplyMeta{Labels: map[string]string{"app": "web"}, Finalizers: []string{"web/cleanup"}}))
	require.NoError(t, err)
	res, err := metrics.Apply(ctx, "app", applySpec{Ports: []applyPort{{Port: 9090}}},
		store.WithMeta(store.ApplyMeta{Labels: map[string]string{"metrics": "on"}, Finalizers: []string{"metrics/cleanup"}}))
	require.NoError(t, err)
	require.EqualValues(t, 2, res.Generation)

	obj, err := st.Get(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []applyPort{{Port: 80, Name: "http"}, {Port: 9090}}, obj.Spec.Ports, "items of a keyed list are owned one by one")
	require.Equal(t, map[string]string{"app": "web", "metrics": "on"}, obj.Meta.Labels)
	require.ElementsMatch(t, []string{"web/cleanup", "metrics/cleanup"}, obj.Meta.Finalizers)

	// A label-only apply leaves the generation alone.
	res, err = metrics.Apply(ctx, "app", applySpec{Ports: []applyPort{{Port: 9090}}},
		store.WithMeta(store.ApplyMeta{Labels: map[string]string{"metrics": "off"}, Finalizers: []string{"metrics/cleanup"}}))
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.EqualValues(t, 2, res.Generation)

	// Deletion waits for both finalizers; each manager releases its own.
	_, err = web.Delete(ctx, "app")
	require.NoError(t, err)
	res, err = web.Apply(ctx, "app", applySpec{Ports: []applyPort{{Port: 80, Name: "http"}}})
	require.NoError(t, err)
	require.False(t, res.Deleted)
	res, err = metrics.Apply(ctx, "app", nil)
	require.NoError(t, err)
	require.True(t, res.Deleted, "the last finalizer gone, the object goes")
	_, err = st.Get(ctx, "app")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestApplyPreconditionsAndBadInput(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	w := st.As("user")
	_, err := w.Apply(ctx, "web", applySpec{Image: "a"}, store.WithRevision(7))
	require.ErrorIs(t, err, store.ErrConflict, "WithRevision on a missing object")
	res, err := w.Apply(ctx, "web", applySpec{Image: "a"})
	require.NoError(t, err)
	_, err = st.As("other").Apply(ctx, "web", map[string]any{"replicas": 2})
	require.NoError(t, err)
	_, err = w.Apply(ctx, "web", applySpec{Image: "b"}, store.WithRevision(res.Revision))
	require.ErrorIs(t, err, store.ErrConflict, "a configuration computed from a stale read")

	_, err = w.Apply(ctx, "web", map[string]any{"unknown": 1})
	require.ErrorIs(t, err, store.ErrInvalid, "a field the spec type lacks")
	_, err = w.Apply(ctx, "web", map[string]any{"image": 3})
	require.ErrorIs(t, err, store.ErrInvalid, "a value of the wrong type")
	_, err = w.Apply(ctx, "Bad", applySpec{})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = st.As("").Apply(ctx, "web", applySpec{})
	require.ErrorIs(t, err, store.ErrInvalid)
}

func TestApplyStatusConditionsOwnedByType(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	st, err := store.New[applySpec, applyStatus](memstore.New(), "App", store.WithClock(fixedClock{t: now}))
	require.NoError(t, err)
	user, loop := st.As("user"), st.As("loop")
	created, err := user.Apply(ctx, "web", applySpec{Image: "a"})
	require.NoError(t, err)

	ready := store.Condition{Type: "Ready", Status: store.ConditionTrue, Reason: "Up"}
	res, err := user.ApplyStatus(ctx, "web", applyStatus{Ready: ptr(1)}, []store.Condition{ready})
	require.NoError(t, err)
	require.True(t, res.Changed)
	stalled := store.Condition{Type: "Stalled", Status: store.ConditionTrue, Reason: "Oscillating", Message: "m"}
	res, err = loop.ApplyStatus(ctx, "web", nil, []store.Condition{stalled})
	require.NoError(t, err)

	obj, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Len(t, obj.Conditions, 2, "neither manager's condition removes the other's")
	require.Equal(t, "Ready", obj.Conditions[0].Type)
	require.Equal(t, "Stalled", obj.Conditions[1].Type)
	require.True(t, now.Equal(obj.Conditions[1].LastTransitionTime), "a new condition gets the clock's time")
	require.Equal(t, 1, *obj.Status.Ready)
	require.Equal(t, created.Generation, obj.Meta.Generation, "status applies never bump the generation")
	require.Equal(t, "a", obj.Spec.Image)
	require.Equal(t, store.LastWrite{Manager: "loop", Op: ownership.OpApplyStatus}, obj.Meta.LastWrite)

	// The same conditions again, with a later time: nothing to write, the
	// transition time stays.
	later := stalled
	later.LastTransitionTime = now.Add(time.Hour)
	again, err := loop.ApplyStatus(ctx, "web", nil, []store.Condition{later})
	require.NoError(t, err)
	require.False(t, again.Changed)
	require.Equal(t, res.Revision, again.Revision)

	// The loop may not write the user's condition...
	_, err = loop.ApplyStatus(ctx, "web", nil, []store.Condition{stalled, {Type: "Ready", Status: store.ConditionFalse}})
	requireFieldConflict(t, err, "user", `.conditions[type="Ready"].status`)

	// ...and clearing its own leaves the user's.
	_, err = loop.ApplyStatus(ctx, "web", nil, nil)
	require.NoError(t, err)
	obj, err = st.Get(ctx, "web")
	require.NoError(t, err)
	require.Len(t, obj.Conditions, 1)
	require.Equal(t, "Ready", obj.Conditions[0].Type)

	// A spec change since generation 1 refuses a status computed from it.
	_, err = user.Apply(ctx, "web", applySpec{Image: "b"})
	require.NoError(t, err)
	_, err = user.ApplyStatus(ctx, "web", applyStatus{Ready: ptr(2)}, []store.Condition{ready}, store.WithGeneration(1))
	require.ErrorIs(t, err, store.ErrConflict)

	_, err = user.ApplyStatus(ctx, "missing", nil, nil)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = user.ApplyStatus(ctx, "web", map[string]any{"nope": 1}, nil)
	require.ErrorIs(t, err, store.ErrInvalid)
}

// Update and UpdateStatus keep field ownership right, so that applies see
// who changed what: an ordinary write takes the fields it changed.
func TestUpdatesMaintainManagedFields(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	user, editor, ctrl := st.As("user"), st.As("editor"), st.As("controller")
	_, err := user.Apply(ctx, "web", applySpec{Image: "a", Replicas: ptr(1)},
		store.WithMeta(store.ApplyMeta{Labels: map[string]string{"app": "web"}}))
	require.NoError(t, err)

	obj, err := st.Get(ctx, "web")
	require.NoError(t, err)
	obj.Spec.Replicas = ptr(4)
	obj.Meta.Labels = map[string]string{"app": "web", "edited": "yes"}
	_, err = editor.Update(ctx, obj)
	require.NoError(t, err)
	require.NotEmpty(t, obj.Meta.Managed)

	// The user re-applying its old replicas now conflicts with the editor,
	// who changed them; its image, untouched by the editor, does not.
	_, err = user.Apply(ctx, "web", applySpec{Image: "a", Replicas: ptr(1)},
		store.WithMeta(store.ApplyMeta{Labels: map[string]string{"app": "web"}}))
	requireFieldConflict(t, err, "editor", ".spec.replicas")
	_, err = user.Apply(ctx, "web", applySpec{Image: "a2"},
		store.WithMeta(store.ApplyMeta{Labels: map[string]string{"app": "web"}}))
	require.NoError(t, err)

	obj, err = st.Get(ctx, "web")
	require.NoError(t, err)
	obj.Status.Phase = "Running"
	_, err = ctrl.UpdateStatus(ctx, obj)
	require.NoError(t, err)
	_, err = user.ApplyStatus(ctx, "web", applyStatus{Phase: "Pending"}, nil)
	requireFieldConflict(t, err, "controller", ".status.phase")

	// Managed survives a round trip through the stored value.
	meta, _, err := store.DecodeMeta(mustValue(t, st, "web"))
	require.NoError(t, err)
	var managers []string
	for _, m := range meta.Managed {
		managers = append(managers, fmt.Sprintf("%s/%s/%s", m.Manager, m.Operation, m.Subresource))
	}
	require.ElementsMatch(t, []string{"user/Apply/", "editor/Update/", "controller/Update/status"}, managers)
}

func mustValue(t *testing.T, st *store.Store[applySpec, applyStatus], name string) []byte {
	t.Helper()
	kv, err := st.Backend().Get(t.Context(), st.Prefix()+name)
	require.NoError(t, err)
	return kv.Value
}

// Managers applying disjoint fields of one object at a high rate, from
// several goroutines, all land: each apply merges with the stored object at
// the time of its write.
func TestConcurrentDisjointAppliesAllLand(t *testing.T) {
	ctx := t.Context()
	st, err := store.New[map[string]int, map[string]int](memstore.New(), "Counters")
	require.NoError(t, err)
	const managers = 8
	rounds := 200 / raceScale
	var g errgroup.Group
	for m := range managers {
		w := st.As(fmt.Sprintf("m%d", m))
		g.Go(func() error {
			// Apply retries revision conflicts itself, but a write racing
			// seven others can still lose every attempt; like any caller,
			// retry ErrConflict (never a field conflict, which would fail).
			retry := func(f func() error) error {
				for {
					if err := f(); !errors.Is(err, store.ErrConflict) {
						return err
					}
				}
			}
			for r := 1; r <= rounds; r++ {
				field := fmt.Sprintf("f%d", m)
				if err := retry(func() error {
					_, err := w.Apply(ctx, "c", map[string]any{field: r})
					return err
				}); err != nil {
					return err
				}
				if err := retry(func() error {
					_, err := w.ApplyStatus(ctx, "c", map[string]any{field: r}, nil)
					return err
				}); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	obj, err := st.Get(ctx, "c")
	require.NoError(t, err)
	require.Len(t, obj.Spec, managers)
	require.Len(t, obj.Status, managers)
	for m := range managers {
		require.Equal(t, rounds, obj.Spec[fmt.Sprintf("f%d", m)])
		require.Equal(t, rounds, obj.Status[fmt.Sprintf("f%d", m)])
	}
	require.Len(t, obj.Meta.Managed, 2*managers, "one spec and one status entry per manager")
}

// fixedClock is a clock.Clock that always tells the same time; the store
// only asks it the time.
type fixedClock struct {
	clock.Real
	t time.Time
}

func (c fixedClock) Now() time.Time { return c.t }

// The creator of an object does not own its initial status, so a
// controller's first status apply does not conflict with it.
func TestCreateLeavesStatusUnowned(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	obj := &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: "web"}, Status: applyStatus{Phase: "New"}}
	_, err := st.As("user").Create(ctx, obj)
	require.NoError(t, err)
	res, err := st.As("controller").ApplyStatus(ctx, "web", applyStatus{Phase: "Running"}, nil)
	require.NoError(t, err)
	require.True(t, res.Changed)
	_, err = st.As("user").Apply(ctx, "web", applySpec{Image: "x"})
	require.NoError(t, err, "the creator's spec fields are its own")
}
