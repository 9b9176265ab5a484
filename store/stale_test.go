package store_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/store"
)

// A write whose precondition failed against the stored object says where
// and at what revision that object is stored (wrote.Stale, which the
// reconcile Loop reads to tell a stale cache read from a conflict against
// what its cache holds); its text and errors.Is are those of the conflict.
// A precondition against an object that is not stored says nothing.
func TestPreconditionConflictSaysWhereTheObjectIsStored(t *testing.T) {
	ctx := t.Context()
	st := newApplyStore(t)
	w := st.As("m")
	_, err := w.Apply(ctx, "web", applySpec{Image: "a"})
	require.NoError(t, err)
	read, err := st.Get(ctx, "web")
	require.NoError(t, err)
	now, err := w.Apply(ctx, "web", applySpec{Image: "b"}) // a new generation
	require.NoError(t, err)
	for name, write := range map[string]func() error{
		"WithObserved": func() error {
			_, err := w.ApplyStatus(ctx, "web", applyStatus{Phase: "up"}, nil, store.WithObserved(read.Meta))
			return err
		},
		"WithGeneration": func() error {
			_, err := w.ApplyStatus(ctx, "web", applyStatus{Phase: "up"}, nil, store.WithGeneration(read.Meta.Generation+5))
			return err
		},
		"WithUID": func() error {
			_, err := w.Delete(ctx, "web", store.WithUID("another"))
			return err
		},
		"WithRevision": func() error {
			_, err := w.Apply(ctx, "web", applySpec{Image: "c"}, store.WithRevision(read.Meta.Revision))
			return err
		},
		"Update": func() error {
			_, err := w.Update(ctx, read)
			return err
		},
	} {
		err := write()
		require.ErrorIs(t, err, store.ErrConflict, name)
		s, ok := errors.AsType[*wrote.Stale](err)
		require.True(t, ok, "%s: %v", name, err)
		require.Equal(t, now.Revision, s.Revision, name)
		require.Equal(t, any(st.Backend()), s.Backend, name)
		require.Equal(t, s.Err.Error(), err.Error(), name)
	}
	cur, err := st.Get(ctx, "web")
	require.NoError(t, err)
	res, err := w.ApplyStatus(ctx, "web", applyStatus{Phase: "up"}, nil)
	require.NoError(t, err)
	_, err = w.UpdateStatus(ctx, cur) // read before the last status write
	require.ErrorIs(t, err, store.ErrConflict)
	s, ok := errors.AsType[*wrote.Stale](err)
	require.True(t, ok, "UpdateStatus: %v", err)
	require.Equal(t, res.Revision, s.Revision)

	_, err = w.Delete(ctx, "gone", store.WithRevision(3))
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = w.Apply(ctx, "gone", applySpec{Image: "c"}, store.WithRevision(3))
	require.ErrorIs(t, err, store.ErrConflict)
	_, ok = errors.AsType[*wrote.Stale](err)
	require.False(t, ok, "nothing is stored: %v", err)
}
