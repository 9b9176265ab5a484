package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// A dry-run Purge of a quarantined value reports the deletion and deletes
// nothing; a wrong revision, a missing key and an option Purge does not
// take fail it as they fail the Purge. A ctx from WithDryRun covers Purge.
func TestDryRunPurgeDeletesNothing(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	st, err := store.New[applySpec, applyStatus](b, "App")
	require.NoError(t, err)
	bad, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "App/bad", Value: []byte(`{"version":"v9"`)})
	require.NoError(t, err)
	_, err = st.Get(ctx, "bad")
	var de *store.DecodeError
	require.ErrorAs(t, err, &de, "a quarantined value")
	admin := st.As("admin")

	var res store.DryRunResult
	rev, err := admin.Purge(ctx, "bad", 0, store.DryRun(&res))
	require.NoError(t, err)
	require.Equal(t, bad, rev, "the key's current revision")
	require.Equal(t, store.DryRunResult{Kind: "App", Name: "bad", Manager: "admin", Op: "Purge", Write: true, Deleted: true}, res)
	_, err = b.Get(ctx, "App/bad")
	require.NoError(t, err, "nothing deleted")
	require.Equal(t, bad, b.Revision(), "nothing written")

	rev, err = admin.Purge(ctx, "bad", de.Revision, store.DryRun(&res))
	require.NoError(t, err)
	require.Equal(t, bad, rev)
	_, err = admin.Purge(ctx, "bad", de.Revision+1, store.DryRun(&res))
	require.ErrorIs(t, err, store.ErrConflict)
	require.ErrorIs(t, res.Err, store.ErrConflict)
	require.False(t, res.Deleted)
	_, err = admin.Purge(ctx, "gone", 0, store.DryRun(&res))
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, res.Err, store.ErrNotFound)
	_, err = admin.Purge(ctx, "bad", 0, store.WithForce())
	require.ErrorIs(t, err, store.ErrInvalid, "Purge takes no other option")

	var reported []store.DryRunResult
	dctx := store.WithDryRun(ctx, func(r store.DryRunResult) { reported = append(reported, r) })
	_, err = admin.Purge(dctx, "bad", 0)
	require.NoError(t, err)
	require.Len(t, reported, 1)
	require.True(t, reported[0].Deleted)
	require.Equal(t, bad, b.Revision(), "nothing written")

	_, err = admin.Purge(ctx, "bad", 0)
	require.NoError(t, err, "the real Purge")
	_, err = b.Get(ctx, "App/bad")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// A dry-run Migrate reports each value it would rewrite, with its stored
// version, and counts them as a run would, writing nothing: no value, no
// checkpoint. It goes through every key whatever a checkpoint says. The
// real run then rewrites exactly those.
func TestDryRunMigrateWritesNothing(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	seedV1(t, b, 250)
	_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "Widget/zz", Value: []byte(`{"version":"v9","metadata":{}}`)})
	require.NoError(t, err)
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "_migrations/Widget", Value: []byte(`{"storage":"v2","after":"w100"}`)})
	require.NoError(t, err)
	rev := b.Revision()
	_, s2 := versionedStores(t, b, "v2")

	would := map[string]string{}
	var pages int
	p, err := s2.Migrate(ctx, store.MigrateOptions{PageSize: 100, PerSecond: 1,
		Progress: func(store.MigrateProgress) { pages++ },
		DryRun:   func(name, version string) { would[name] = version }})
	require.NoError(t, err)
	require.Equal(t, store.MigrateProgress{Scanned: 251, Migrated: 250, Undecodable: 1, Done: true}, p)
	require.Len(t, would, 250, "every key, from the first, whatever the checkpoint")
	require.Equal(t, "v1", would["w000"])
	require.Equal(t, 3, pages)
	require.Equal(t, rev, b.Revision(), "nothing written")
	require.Equal(t, map[any]int{"v1": 250, "v9": 1}, versionsIn(t, b))
	kvp, err := b.Get(ctx, "_migrations/Widget")
	require.NoError(t, err)
	require.JSONEq(t, `{"storage":"v2","after":"w100"}`, string(kvp.Value), "the checkpoint is as it was")

	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "_migrations/Widget"})
	require.NoError(t, err)
	p, err = s2.Migrate(ctx, store.MigrateOptions{})
	require.NoError(t, err)
	require.Equal(t, 250, p.Migrated, "the real run rewrites what the dry run reported")
}
