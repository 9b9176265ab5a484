package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
)

func testTypedWatch(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	alice, bob := st.As("alice"), st.As("bob")
	typedCreate(t, alice, typedWidget("before", 1))
	list, err := st.List(ctx, store.ListOptions{})
	require.NoError(t, err)

	events, err := st.Watch(ctx, list.Revision)
	require.NoError(t, err)

	obj := typedWidget("web", 1)
	createRev, err := alice.Create(ctx, obj)
	require.NoError(t, err)
	obj.Spec.Replicas = 2
	updateRev, err := bob.Update(ctx, obj)
	require.NoError(t, err)
	obj.Status.Ready = 2
	statusRev, err := alice.UpdateStatus(ctx, obj)
	require.NoError(t, err)
	// A write to another kind under the same backend is not an event.
	others, err := store.New[WidgetSpec, WidgetStatus](st.Backend(), "Gadget", store.WithKeyPrefix("storetest/"))
	require.NoError(t, err)
	typedCreate(t, others.As("alice"), typedWidget("web", 1))
	deleteRev, err := bob.Delete(ctx, "web")
	require.NoError(t, err)
	// A last write, so that a backend that skips any of the events above is
	// caught by the next event's content rather than by a timeout.
	endRev, err := alice.Create(ctx, typedWidget("zz-end", 1))
	require.NoError(t, err)

	ev := nextTypedEvent(t, events)
	require.Equal(t, store.Added, ev.Type)
	require.Equal(t, createRev, ev.Revision)
	require.Nil(t, ev.Prev)
	require.Equal(t, "web", ev.Object.Meta.Name)
	require.Equal(t, createRev, ev.Object.Meta.Revision)
	require.Equal(t, store.LastWrite{Manager: "alice", Op: ownership.OpCreate}, ev.Object.Meta.LastWrite)

	ev = nextTypedEvent(t, events)
	require.Equal(t, store.Modified, ev.Type)
	require.Equal(t, updateRev, ev.Revision)
	require.Equal(t, 2, ev.Object.Spec.Replicas)
	require.Equal(t, 1, ev.Prev.Spec.Replicas)
	require.Equal(t, createRev, ev.Prev.Meta.Revision)
	require.Equal(t, store.LastWrite{Manager: "bob", Op: ownership.OpUpdate}, ev.Object.Meta.LastWrite)

	ev = nextTypedEvent(t, events)
	require.Equal(t, store.Modified, ev.Type)
	require.Equal(t, statusRev, ev.Revision)
	require.Equal(t, 2, ev.Object.Status.Ready)
	require.Equal(t, store.LastWrite{Manager: "alice", Op: ownership.OpUpdateStatus}, ev.Object.Meta.LastWrite)

	ev = nextTypedEvent(t, events)
	require.Equal(t, store.Deleted, ev.Type)
	require.Equal(t, deleteRev, ev.Revision)
	require.Equal(t, deleteRev, ev.Object.Meta.Revision)
	require.Equal(t, 2, ev.Object.Status.Ready, "a deletion carries the last state")
	require.Equal(t, statusRev, ev.Prev.Meta.Revision)

	ev = nextTypedEvent(t, events)
	require.Equal(t, store.Added, ev.Type)
	require.Equal(t, endRev, ev.Revision)

	cancel()
	for ev := range events {
		require.True(t, ev.Progress || ev.Err != nil || ev.Object != nil)
	}
}

// nextTypedEvent returns the next non-progress event, failing on a watch
// error, a closed channel or 30 seconds without one.
func nextTypedEvent(t *testing.T, events <-chan store.Event[WidgetSpec, WidgetStatus]) store.Event[WidgetSpec, WidgetStatus] {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-events:
			require.True(t, ok, "watch closed early")
			require.NoError(t, ev.Err)
			if ev.Progress {
				require.Nil(t, ev.Object)
				continue
			}
			return ev
		case <-timeout.C:
			require.FailNow(t, "no watch event within 30s")
		}
	}
}
