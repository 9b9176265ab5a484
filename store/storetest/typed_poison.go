package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// poisonValues are stored values that are not Widgets of the key they sit
// at: each must be quarantined (left out, reported), never fatal to the
// kind.
var poisonValues = []struct{ name, value string }{
	{"not-json", `not json`},
	{"array", `[1,2,3]`},
	{"wrong-type", `{"metadata":{"kind":"Widget","name":"wrong-type","uid":"u","generation":1},"spec":{"replicas":"three"},"status":null}`},
	{"null", `null`},
	{"other-kind", `{"metadata":{"kind":"Gadget","name":"other-kind","uid":"u","generation":1},"spec":{},"status":{}}`},
	{"impostor", ""},   // a valid Widget value that claims the name "real"
	{"empty-name", ""}, // a valid Widget value that claims the name ""
	{"traversal", ""},  // a valid Widget value that claims "../../etc/passwd"
}

// testTypedPoison checks that values which are not objects of the kind
// (bad JSON, a wrong field type, null, another kind, or a name other than
// the key's) are skipped by Get, List and Watch and reported, while the
// valid objects beside them are served; that the key becomes an object
// again when a valid value is written; and that Purge removes one.
func testTypedPoison(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	b, alice := st.Backend(), st.As("alice")
	real := typedCreate(t, alice, typedWidget("real", 3))
	start, err := st.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	events, err := st.Watch(ctx, start.Revision)
	require.NoError(t, err)

	claim := func(name string) string {
		v, err := json.Marshal(&Widget{Meta: store.Meta{Kind: "Widget", Name: name, UID: "forged", Generation: 1}, Spec: WidgetSpec{Replicas: 99}})
		require.NoError(t, err)
		return string(v)
	}
	revs := map[string]int64{}
	for _, p := range poisonValues {
		v := p.value
		switch p.name {
		case "impostor":
			v = claim("real")
		case "empty-name":
			v = claim("")
		case "traversal":
			v = claim("../../etc/passwd")
		}
		revs[p.name] = put(t, b, st.Prefix()+p.name, v)
	}
	typedCreate(t, alice, typedWidget("zz-valid", 1))

	// Get serves the valid objects and reports each poison value.
	got, err := st.Get(ctx, "real")
	require.NoError(t, err)
	require.Equal(t, real.Meta.UID, got.Meta.UID, "an impostor never replaces the object called real")
	require.Equal(t, 3, got.Spec.Replicas)
	for _, p := range poisonValues {
		_, err := st.Get(ctx, p.name)
		var de *store.DecodeError
		require.ErrorAs(t, err, &de, "Get %s", p.name)
		require.ErrorIs(t, err, store.ErrInvalid)
		require.Equal(t, p.name, de.Name, "the name comes from the key")
		require.Equal(t, st.Prefix()+p.name, de.Key)
		require.Equal(t, revs[p.name], de.Revision)
	}

	// List serves the rest of the kind, paginated or not.
	for _, limit := range []int{0, 1, 2} {
		var names, bad []string
		opts := store.ListOptions{Limit: limit}
		for {
			page, err := st.List(ctx, opts)
			require.NoError(t, err, "a poison value never fails the List")
			names = append(names, typedNames(page.Items)...)
			for _, e := range page.Undecodable {
				require.Equal(t, revs[e.Name], e.Revision)
				bad = append(bad, e.Name)
			}
			if page.Continue == "" {
				break
			}
			opts.Continue = page.Continue
		}
		require.Equal(t, []string{"real", "zz-valid"}, names, "limit %d", limit)
		require.ElementsMatch(t, poisonNames(), bad, "limit %d: every poison value is reported once", limit)
	}

	// Watch reports each and goes on.
	for _, p := range poisonValues {
		ev := nextTypedEvent(t, events)
		require.NotNil(t, ev.Undecodable, "event for %s", p.name)
		require.Nil(t, ev.Object)
		require.Equal(t, p.name, ev.Undecodable.Name)
		require.Equal(t, revs[p.name], ev.Revision)
	}
	ev := nextTypedEvent(t, events)
	require.Equal(t, store.Added, ev.Type)
	require.Equal(t, "zz-valid", ev.Object.Meta.Name)

	// A valid value makes the key an object again; Purge removes another.
	fixed := typedWidget("null", 5)
	fixed.Meta.Kind, fixed.Meta.UID, fixed.Meta.Generation = "Widget", "fixed", 1
	v, err := json.Marshal(fixed)
	require.NoError(t, err)
	fixRev := put(t, b, st.Prefix()+"null", string(v))
	ev = nextTypedEvent(t, events)
	require.Equal(t, store.Added, ev.Type, "a valid value over a poison one is the object's appearance")
	require.Nil(t, ev.Prev)
	require.Equal(t, fixRev, ev.Object.Meta.Revision)
	obj, err := st.Get(ctx, "null")
	require.NoError(t, err)
	require.Equal(t, 5, obj.Spec.Replicas)

	_, err = alice.Delete(ctx, "array")
	require.ErrorIs(t, err, store.ErrInvalid, "Delete must decode (finalizers); Purge need not")
	_, err = alice.Purge(ctx, "array", revs["array"]-1)
	require.ErrorIs(t, err, store.ErrConflict)
	purgeRev, err := alice.Purge(ctx, "array", revs["array"])
	require.NoError(t, err)
	_, err = st.Get(ctx, "array")
	require.ErrorIs(t, err, store.ErrNotFound)
	ev = nextTypedEvent(t, events)
	require.Equal(t, store.Deleted, ev.Type)
	require.Equal(t, purgeRev, ev.Revision)
	require.Equal(t, "array", ev.Object.Meta.Name, "the deletion of a poison value names its key")
	require.Nil(t, ev.Prev)
	_, err = alice.Purge(ctx, "array", 0)
	require.ErrorIs(t, err, store.ErrNotFound)
}

func poisonNames() []string {
	var out []string
	for _, p := range poisonValues {
		out = append(out, p.name)
	}
	return out
}
