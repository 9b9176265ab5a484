package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/store"
)

func TestFieldChangesSplitsByOwner(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	user, scaler, loop, editor := st.As("user"), st.As("autoscaler"), st.As("loop"), st.As("editor")
	_, err := user.Apply(ctx, "web", applySpec{Image: "a", Ports: []applyPort{{Port: 80}}})
	require.NoError(t, err)

	step := func(write func()) (old, new *store.Object[applySpec, applyStatus]) {
		t.Helper()
		old, err := st.Get(ctx, "web")
		require.NoError(t, err)
		write()
		new, err = st.Get(ctx, "web")
		require.NoError(t, err)
		return old, new
	}
	// split shows the paths in their notation.
	type split struct{ owned, foreign []string }
	judge := func(old, new *store.Object[applySpec, applyStatus], manager string) split {
		o, f := st.FieldChanges(old, new, manager)
		return split{pathStrings(o), pathStrings(f)}
	}

	old, new := step(func() {
		_, err := scaler.Apply(ctx, "web", applySpec{Replicas: ptr(3)})
		require.NoError(t, err)
	})
	require.Equal(t, split{[]string{".spec.replicas"}, nil}, judge(old, new, "autoscaler"))
	require.Equal(t, split{nil, []string{".spec.replicas"}}, judge(old, new, "user"))

	old, new = step(func() {
		_, err := loop.ApplyStatus(ctx, "web", nil, []store.Condition{{Type: "Stalled", Status: store.ConditionTrue}})
		require.NoError(t, err)
	})
	require.Equal(t, split{[]string{`.conditions[type="Stalled"]`}, nil}, judge(old, new, "loop"))

	old, new = step(func() {
		obj, err := st.Get(ctx, "web")
		require.NoError(t, err)
		obj.Meta.Labels = map[string]string{"edited": "yes"}
		obj.Spec.Ports = append(obj.Spec.Ports, applyPort{Port: 443})
		_, err = editor.Update(ctx, obj)
		require.NoError(t, err)
	})
	require.Equal(t, split{[]string{".metadata.labels.edited", ".spec.ports[port=443]"}, nil}, judge(old, new, "editor"))

	// A field its owner stops applying is removed; the removal is its own.
	old, new = step(func() {
		_, err := user.Apply(ctx, "web", applySpec{Ports: []applyPort{{Port: 80}}})
		require.NoError(t, err)
	})
	require.Equal(t, split{[]string{".spec.image"}, nil}, judge(old, new, "user"))

	old, new = step(func() {
		obj, err := st.Get(ctx, "web")
		require.NoError(t, err)
		obj.Meta.Finalizers = []string{"x"}
		_, err = editor.Update(ctx, obj)
		require.NoError(t, err)
		_, err = editor.Delete(ctx, "web")
		require.NoError(t, err)
	})
	require.Equal(t, split{[]string{`.metadata.finalizers[="x"]`}, []string{".metadata.deletionRequested"}}, judge(old, new, "editor"))
}

// A change that merges two managers' writes (what a cache shows after a
// relist) is split path by path: the user's spec and the controller's
// status are each their own, whichever wrote last.
func TestChangedBySplitsAMergedChange(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	user, ctrl := st.As("user"), st.As("ctrl")
	_, err := user.Apply(ctx, "web", applySpec{Image: "a", Replicas: ptr(1)})
	require.NoError(t, err)
	old, err := st.Get(ctx, "web")
	require.NoError(t, err)

	_, err = user.Apply(ctx, "web", applySpec{Image: "a", Replicas: ptr(2)})
	require.NoError(t, err)
	_, err = ctrl.ApplyStatus(ctx, "web", applyStatus{Ready: ptr(2)}, nil)
	require.NoError(t, err)
	new, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, "ctrl", new.Meta.LastWrite.Manager)

	owned, foreign := st.FieldChanges(old, new, "ctrl")
	require.Equal(t, []string{".status.ready"}, pathStrings(owned))
	require.Equal(t, []string{".spec.replicas"}, pathStrings(foreign))
	changed := append(owned, foreign...)
	for _, tt := range []struct{ manager, mine, others string }{
		{"ctrl", ".status.ready", ".spec.replicas"},
		{"user", ".spec.replicas", ".status.ready"},
	} {
		mine, others := st.Lean().ChangedBy(new, tt.manager, changed)
		require.Equal(t, []string{tt.mine}, pathStrings(mine), tt.manager)
		require.Equal(t, []string{tt.others}, pathStrings(others), tt.manager)
	}

	// A removal has no owner after it: it is the last writer's.
	old = new
	_, err = user.Apply(ctx, "web", applySpec{Replicas: ptr(2)})
	require.NoError(t, err)
	new, err = st.Get(ctx, "web")
	require.NoError(t, err)
	mine, others := st.Lean().ChangedBy(new, "user", []diff.Path{diff.MustParsePath(".spec.image")})
	require.Equal(t, []string{".spec.image"}, pathStrings(mine))
	require.Empty(t, others)
}

func pathStrings(ps []diff.Path) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}
