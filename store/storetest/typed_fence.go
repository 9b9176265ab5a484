package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// testTypedFence checks that writes made with a leadership fence in ctx
// succeed while the fence's key keeps its CreateRevision (renewals
// included), and fail with ErrFenced, writing nothing, once the key was
// deleted and recreated by a new leader.
func testTypedFence(t *testing.T, st *store.Store[WidgetSpec, WidgetStatus]) {
	ctx := t.Context()
	b := st.Backend()
	const leader = "storetest-fence/leader"
	take := func() store.Fence {
		_, err := b.Txn(ctx, []kv.Cond{{Key: leader, Target: kv.CreateRevision}},
			kv.Write{Kind: kv.WritePut, Key: leader, Value: []byte("me")})
		require.NoError(t, err)
		kv, err := b.Get(ctx, leader)
		require.NoError(t, err)
		return store.Fence{Key: leader, Revision: kv.CreateRevision}
	}
	fence := take()
	term := store.WithFence(ctx, fence)
	w := st.As("leader")

	obj := typedWidget("web", 1)
	_, err := w.Create(term, obj)
	require.NoError(t, err, "a write under a holding fence succeeds")
	// A renewal rewrites the leader key but keeps the fence.
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: leader, Value: []byte("me, renewed")})
	require.NoError(t, err)
	obj.Spec.Replicas = 2
	_, err = w.Update(term, obj)
	require.NoError(t, err)

	// The term ends: the key goes and a new leader takes it.
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: leader})
	require.NoError(t, err)
	take()

	before, err := st.Get(ctx, "web")
	require.NoError(t, err)
	stale := *before
	stale.Spec.Replicas = 3
	_, err = w.Update(term, &stale)
	require.ErrorIs(t, err, store.ErrFenced)
	stale.Status.Ready = 3
	_, err = w.UpdateStatus(term, &stale)
	require.ErrorIs(t, err, store.ErrFenced)
	_, err = w.Create(term, typedWidget("other", 1))
	require.ErrorIs(t, err, store.ErrFenced)
	_, err = w.Delete(term, "web")
	require.ErrorIs(t, err, store.ErrFenced)
	after, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, before.Meta.Revision, after.Meta.Revision, "a fenced write writes nothing")
	_, err = st.Get(ctx, "other")
	require.ErrorIs(t, err, store.ErrNotFound)

	// Without the fence in ctx the same writer is unaffected.
	_, err = w.Update(ctx, &stale)
	require.NoError(t, err)
}
