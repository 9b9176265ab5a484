package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// testTypedKeyIsolation checks that two Stores whose key spaces once
// overlapped as plain string prefixes see only their own objects: a prefix
// without its slash ("x" with kind "App" against kind "xApp"), and a prefix
// that nests under a kind ("team-a/" with kind "App" under the Store of kind
// "team-a").
func testTypedKeyIsolation(t *testing.T, newBackend func(t *testing.T) kv.Backend) {
	pairs := []struct {
		name           string
		aKind, aPrefix string
		bKind, bPrefix string
	}{
		{"PrefixWithoutSlash", "App", "storetest/x", "xApp", "storetest/"},
		{"PrefixNestedUnderKind", "team-a", "storetest/", "App", "storetest/team-a/"},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			b := newBackend(t)
			a, err := store.New[WidgetSpec, WidgetStatus](b, p.aKind, store.WithKeyPrefix(p.aPrefix))
			require.NoError(t, err)
			other, err := store.New[WidgetSpec, WidgetStatus](b, p.bKind, store.WithKeyPrefix(p.bPrefix))
			require.NoError(t, err)
			require.NotEqual(t, a.Prefix(), other.Prefix())

			// From the listing's revision: a watch from 0 replays the
			// backend's history, which on a shared etcd may be compacted.
			start, err := a.List(ctx, store.ListOptions{})
			require.NoError(t, err)
			events, err := a.Watch(ctx, start.Revision)
			require.NoError(t, err)
			typedCreate(t, a.As("alice"), typedWidget("web", 3))
			otherRev, err := other.As("mallory").Create(ctx, typedWidget("web", 9))
			require.NoError(t, err, "the other Store's key space is its own: its create does not collide")
			_, err = other.As("mallory").Apply(ctx, "web", WidgetSpec{Replicas: 9}, store.WithForce())
			require.NoError(t, err)
			endRev, err := a.As("alice").Create(ctx, typedWidget("zz-end", 1))
			require.NoError(t, err)

			got, err := a.Get(ctx, "web")
			require.NoError(t, err)
			require.Equal(t, 3, got.Spec.Replicas, "the other Store's writes never reach this one's object")
			list, err := a.List(ctx, store.ListOptions{})
			require.NoError(t, err)
			require.Equal(t, []string{"web", "zz-end"}, typedNames(list.Items))
			olist, err := other.List(ctx, store.ListOptions{})
			require.NoError(t, err)
			require.Equal(t, []string{"web"}, typedNames(olist.Items))

			ev := nextTypedEvent(t, events)
			require.Equal(t, "web", ev.Object.Meta.Name)
			require.Equal(t, 3, ev.Object.Spec.Replicas)
			ev = nextTypedEvent(t, events)
			require.Equal(t, endRev, ev.Revision, "the other Store's writes (the last at %d) are not events of this one", otherRev)
		})
	}
}
