package ownership

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

var portsSchema = mustSchema(map[string]Strategy{
	".spec.ports": Keyed("port", "protocol"),
	".spec.tags":  AsSet(),
	".spec.sel":   Atomic(),
	".spec.items": Keyed("name"),
})

func mustSchema(r map[string]Strategy) *Schema {
	s, err := NewSchema(r)
	if err != nil {
		panic(err)
	}
	return s
}

// Rule 1: an apply replaces the manager's set with exactly the applied fields.
func TestRule1ApplySetsExactlyTheAppliedFields(t *testing.T) {
	r := applyOK(t, nil, obj(t, `{"spec":{"a":1,"b":{"c":"x"}}}`), "m", nil)
	require.Equal(t, sorted(".spec.a", ".spec.b.c"), ownedBy(r.Managed, "m", OpApply))
	r = applyOK(t, r.Object, obj(t, `{"spec":{"b":{"c":"x","d":true}}}`), "m", r.Managed)
	require.Equal(t, sorted(".spec.b.c", ".spec.b.d"), ownedBy(r.Managed, "m", OpApply))
	requireObject(t, `{"spec":{"b":{"c":"x","d":true}}}`, r.Object)
}

// Rule 2: changing another manager's field is a conflict; nothing is written.
func TestRule2ConflictListsOwnersAndWritesNothing(t *testing.T) {
	r := applyOK(t, nil, obj(t, `{"spec":{"replicas":3,"image":"a"}}`), "user", nil)
	live, managed := r.Object, r.Managed
	before := mustJSON(live)
	_, err := Apply(live, obj(t, `{"spec":{"replicas":5,"image":"b","extra":1}}`), "hpa", managed)
	var ce *ConflictError
	require.True(t, errors.As(err, &ce))
	require.Equal(t, []string{`user .spec.image`, `user .spec.replicas`}, conflictStrings(err))
	require.Contains(t, err.Error(), `.spec.replicas is managed by "user"`)
	require.Equal(t, before, mustJSON(live), "inputs untouched")
	require.Equal(t, sorted(".spec.image", ".spec.replicas"), ownedBy(managed, "user", OpApply))
}

// Rule 3: force takes only the conflicting fields; shared fields stay shared.
func TestRule3ForceTakesOnlyConflictingFields(t *testing.T) {
	r := applyOK(t, nil, obj(t, `{"spec":{"replicas":3,"image":"a","shared":1}}`), "user", nil)
	r = applyOK(t, r.Object, obj(t, `{"spec":{"shared":1}}`), "hpa", r.Managed)
	r = applyOK(t, r.Object, obj(t, `{"spec":{"replicas":5,"shared":1}}`), "hpa", r.Managed, Force())
	requireObject(t, `{"spec":{"replicas":5,"image":"a","shared":1}}`, r.Object)
	require.Equal(t, sorted(".spec.image", ".spec.shared"), ownedBy(r.Managed, "user", OpApply))
	require.Equal(t, sorted(".spec.replicas", ".spec.shared"), ownedBy(r.Managed, "hpa", OpApply))
}

// Rule 4: equal values applied by several managers are shared, numbers by value.
func TestRule4EqualValuesAreShared(t *testing.T) {
	r := applyOK(t, nil, obj(t, `{"spec":{"replicas":3}}`), "a", nil)
	r2, err := Apply(r.Object, map[string]any{"spec": map[string]any{"replicas": 3.0}}, "b", r.Managed)
	require.NoError(t, err)
	require.False(t, r2.ObjectChanged)
	require.True(t, r2.Changed, "ownership changed")
	require.Equal(t, []string{"a", "b"}, r2.Managed.Owners(p(".spec.replicas")))
	// Either can now change it only by conflicting with the other.
	_, err = Apply(r2.Object, obj(t, `{"spec":{"replicas":4}}`), "a", r2.Managed)
	require.Equal(t, []string{"b .spec.replicas"}, conflictStrings(err))
}

// Rule 5: a field no longer applied is removed unless another manager owns it.
func TestRule5UnappliedFieldsAreRemovedUnlessOwned(t *testing.T) {
	r := applyOK(t, nil, obj(t, `{"spec":{"a":1,"b":2}}`), "m", nil)
	r = applyOK(t, r.Object, obj(t, `{"spec":{"b":2}}`), "other", r.Managed)
	r = applyOK(t, r.Object, obj(t, `{}`), "m", r.Managed)
	requireObject(t, `{"spec":{"b":2}}`, r.Object)
	require.Nil(t, ownedBy(r.Managed, "m", OpApply), "m owns nothing now")
	require.Equal(t, []string{".spec.b"}, ownedBy(r.Managed, "other", OpApply))
}

// Rule 6: an update never conflicts, takes what it changed, releases what it
// removed, and does not claim what it sent unchanged.
func TestRule6UpdateNeverConflicts(t *testing.T) {
	r := applyOK(t, nil, obj(t, `{"spec":{"a":1,"b":2,"c":3}}`), "applier", nil)
	u, err := Update(r.Object, obj(t, `{"spec":{"a":1,"b":20,"d":4}}`), "editor", r.Managed)
	require.NoError(t, err)
	require.True(t, u.Changed)
	require.Equal(t, sorted(".spec.b", ".spec.d"), ownedBy(u.Managed, "editor", OpUpdate))
	require.Equal(t, []string{".spec.a"}, ownedBy(u.Managed, "applier", OpApply), "lost b (changed) and c (removed)")

	u2, err := Update(u.Object, obj(t, `{"spec":{"a":1,"b":20}}`), "editor", u.Managed)
	require.NoError(t, err)
	require.Equal(t, []string{".spec.b"}, ownedBy(u2.Managed, "editor", OpUpdate), "released removed .spec.d")

	u3, err := Update(u2.Object, obj(t, `{"spec":{"a":1,"b":20}}`), "editor", u2.Managed)
	require.NoError(t, err)
	require.False(t, u3.Changed)
}

// Rule 7: removing a keyed item or map key removes its subtree.
func TestRule7RemovingItemRemovesSubtree(t *testing.T) {
	cfg := `{"spec":{"items":[{"name":"x","v":{"deep":1}},{"name":"y","v":2}],"m":{"k":{"deep":true}}}}`
	r := applyOK(t, nil, obj(t, cfg), "m", nil, WithSchema(portsSchema))
	r = applyOK(t, r.Object, obj(t, `{"spec":{"items":[{"name":"y","v":2}]}}`), "m", r.Managed, WithSchema(portsSchema))
	requireObject(t, `{"spec":{"items":[{"name":"y","v":2}]}}`, r.Object)
	require.Equal(t, sorted(`.spec.items[name="y"]`, `.spec.items[name="y"].name`, `.spec.items[name="y"].v`),
		ownedBy(r.Managed, "m", OpApply))

	u, err := Update(r.Object, obj(t, `{"spec":{"items":[]}}`), "ed", r.Managed, WithSchema(portsSchema))
	require.NoError(t, err)
	require.Equal(t, []string{".spec"}, ownedBy(u.Managed, "m", OpApply),
		"the removed item's whole subtree is released; m keeps the map it held (issue 23)")
}

// Rule 8: lists atomic by default, or sets, or keyed maps; maps granular or atomic.
func TestRule8ListAndMapStrategies(t *testing.T) {
	t.Run("atomic list by default", func(t *testing.T) {
		r := applyOK(t, nil, obj(t, `{"args":["a","b"]}`), "a", nil)
		require.Equal(t, []string{".args"}, ownedBy(r.Managed, "a", OpApply))
		_, err := Apply(r.Object, obj(t, `{"args":["a","b","c"]}`), "b", r.Managed)
		require.Equal(t, []string{"a .args"}, conflictStrings(err))
	})
	t.Run("set", func(t *testing.T) {
		r := applyOK(t, nil, obj(t, `{"spec":{"tags":["a","b"]}}`), "a", nil, WithSchema(portsSchema))
		r = applyOK(t, r.Object, obj(t, `{"spec":{"tags":["b","c"]}}`), "b", r.Managed, WithSchema(portsSchema))
		requireObject(t, `{"spec":{"tags":["a","b","c"]}}`, r.Object)
		require.Equal(t, sorted(`.spec.tags[="b"]`, `.spec.tags[="c"]`), ownedBy(r.Managed, "b", OpApply))
		r = applyOK(t, r.Object, obj(t, `{"spec":{"tags":[]}}`), "a", r.Managed, WithSchema(portsSchema))
		requireObject(t, `{"spec":{"tags":["b","c"]}}`, r.Object)
	})
	t.Run("keyed by two fields", func(t *testing.T) {
		r := applyOK(t, nil, obj(t, `{"spec":{"ports":[{"port":80,"protocol":"TCP","name":"http"}]}}`), "a", nil, WithSchema(portsSchema))
		r = applyOK(t, r.Object, obj(t, `{"spec":{"ports":[{"port":80,"protocol":"UDP","name":"dns"}]}}`), "b", r.Managed, WithSchema(portsSchema))
		requireObject(t, `{"spec":{"ports":[{"port":80,"protocol":"TCP","name":"http"},{"port":80,"protocol":"UDP","name":"dns"}]}}`, r.Object)
		require.Contains(t, ownedBy(r.Managed, "b", OpApply), `.spec.ports[port=80,protocol="UDP"].name`)
	})
	t.Run("granular map by default", func(t *testing.T) {
		r := applyOK(t, nil, obj(t, `{"labels":{"a":"1"}}`), "a", nil)
		r = applyOK(t, r.Object, obj(t, `{"labels":{"b":"2"}}`), "b", r.Managed)
		requireObject(t, `{"labels":{"a":"1","b":"2"}}`, r.Object)
	})
	t.Run("atomic map", func(t *testing.T) {
		r := applyOK(t, nil, obj(t, `{"spec":{"sel":{"a":"1"}}}`), "a", nil, WithSchema(portsSchema))
		require.Equal(t, []string{".spec.sel"}, ownedBy(r.Managed, "a", OpApply))
		_, err := Apply(r.Object, obj(t, `{"spec":{"sel":{"b":"2"}}}`), "b", r.Managed, WithSchema(portsSchema))
		require.Equal(t, []string{"a .spec.sel"}, conflictStrings(err))
	})
}

// Rule 9: a type change (map to scalar) conflicts, at the map, as in
// structured-merge-diff.
func TestRule9TypeChangeConflicts(t *testing.T) {
	r := applyOK(t, nil, obj(t, `{"spec":{"a":{"b":1,"c":2}}}`), "owner", nil)
	_, err := Apply(r.Object, obj(t, `{"spec":{"a":5}}`), "other", r.Managed)
	require.Equal(t, []string{"owner .spec.a"}, conflictStrings(err))
	f := applyOK(t, r.Object, obj(t, `{"spec":{"a":5}}`), "other", r.Managed, Force())
	requireObject(t, `{"spec":{"a":5}}`, f.Object)
	require.Equal(t, []string{".spec"}, ownedBy(f.Managed, "owner", OpApply), "owner keeps the map it applied fields in")
}

// Rule 10: re-applying the same config is unchanged.
func TestRule10ReapplyIsUnchanged(t *testing.T) {
	cfg := obj(t, `{"spec":{"ports":[{"port":80,"protocol":"TCP"}],"tags":["x"],"n":1.0,"m":{}}}`)
	r := applyOK(t, nil, cfg, "m", nil, WithSchema(portsSchema))
	require.True(t, r.Changed)
	again := applyOK(t, r.Object, cfg, "m", r.Managed, WithSchema(portsSchema))
	require.False(t, again.Changed)
	require.False(t, again.ObjectChanged)
	require.True(t, again.Managed.Equal(r.Managed))
}
