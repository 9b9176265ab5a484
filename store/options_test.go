package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// Every per-call option is a store.WriteOption built by a With function; a
// write given one it does not take refuses it with ErrInvalid and writes
// nothing, rather than ignoring what the caller asked for.
func TestWriteOptionsAWriteDoesNotTake(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	w := st.As("m")
	res, err := w.Apply(ctx, "web", applySpec{Image: "a"})
	require.NoError(t, err)

	_, err = w.Delete(ctx, "web", store.WithForce())
	require.ErrorIs(t, err, store.ErrInvalid)
	require.ErrorContains(t, err, "Delete does not take [WithForce]")
	_, err = w.Apply(ctx, "web", applySpec{Image: "b"}, store.WithUID("x"))
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = w.ApplyStatus(ctx, "web", applyStatus{Phase: "up"}, nil, store.WithRevision(res.Revision))
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = w.ApplyStatus(ctx, "web", applyStatus{Phase: "up"}, nil, store.WithMeta(store.ApplyMeta{}))
	require.ErrorIs(t, err, store.ErrInvalid)
	// Create and Update take DryRun only: a precondition given to them
	// would otherwise be silently ignored.
	cur, err := st.Get(ctx, "web")
	require.NoError(t, err)
	_, err = w.Update(ctx, cur, store.WithRevision(1))
	require.ErrorIs(t, err, store.ErrInvalid)
	require.ErrorContains(t, err, "Update does not take [WithRevision]")
	_, err = w.Create(ctx, &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: "other"}}, store.WithForce())
	require.ErrorIs(t, err, store.ErrInvalid)
	var dry store.DryRunResult
	_, err = w.Create(ctx, &store.Object[applySpec, applyStatus]{Meta: store.Meta{Name: "other"}}, store.DryRun(&dry))
	require.NoError(t, err)
	require.True(t, dry.Write, "a dry run is an option Create takes")

	got, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, res.Revision, got.Meta.Revision, "a refused write wrote")

	// The options a write takes work as before, and so do their
	// deprecated names.
	opts := []store.WriteOption{store.WithObserved(got.Meta), store.WithUID(got.Meta.UID), store.WithForce()}
	_, err = w.ApplyStatus(ctx, "web", applyStatus{Phase: "up"}, nil, opts...)
	require.NoError(t, err)
	_, err = w.Delete(ctx, "web", store.WithRevision(got.Meta.Revision))
	require.ErrorIs(t, err, store.ErrConflict)
	_, err = w.Delete(ctx, "web", store.WithUID(got.Meta.UID))
	require.NoError(t, err)
}
