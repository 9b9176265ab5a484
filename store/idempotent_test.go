package store_test

import (
	"context"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
	"github.com/stretchr/testify/require"
)

// The essay: "Creating an object that already exists must be treated as
// success ... Deleting an object that is already gone must be treated as
// success. Applying a patch that changes nothing must be a no-op." Each is
// one line with the store, and none of them writes.
func TestIdempotentOperationsAreOneLineAndWriteNothing(t *testing.T) {
	ctx := context.Background()
	b := memstore.New()
	apps, err := store.New[AppSpec, AppStatus](b, "App")
	require.NoError(t, err)
	w := apps.As("ctl")

	web := func() *store.Object[AppSpec, AppStatus] {
		return &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "web"}, Spec: AppSpec{Image: "nginx", Replicas: 2}}
	}
	_, err = w.Create(ctx, web())
	require.NoError(t, err)

	// Create of an existing object: ErrAlreadyExists, made success in one line.
	_, err = w.Create(ctx, web())
	require.ErrorIs(t, err, store.ErrAlreadyExists)
	_, err = w.Create(ctx, web())
	require.NoError(t, store.IgnoreAlreadyExists(err))

	// An apply that changes nothing writes nothing: the revision stays.
	_, err = w.Apply(ctx, "web", map[string]any{"image": "nginx", "replicas": 2})
	require.NoError(t, err)
	applied, err := apps.Get(ctx, "web")
	require.NoError(t, err)
	before := b.Stats()
	res, err := w.Apply(ctx, "web", map[string]any{"image": "nginx", "replicas": 2})
	require.NoError(t, err)
	require.False(t, res.Changed)
	require.Equal(t, applied.Meta.Revision, res.Revision, "a no-op apply keeps the revision")
	require.Zero(t, b.Stats().Sub(before).Txns, "a no-op apply writes nothing")

	// Delete of a missing object: ErrNotFound, made success in one line.
	_, err = w.Delete(ctx, "web")
	require.NoError(t, err)
	_, err = w.Delete(ctx, "web")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = w.Delete(ctx, "web")
	require.NoError(t, store.IgnoreNotFound(err))
}
