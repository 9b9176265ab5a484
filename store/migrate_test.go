package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// seedV1 stores n Widgets at v1 (storage v1), named w000...
func seedV1(t *testing.T, b kv.Backend, n int) {
	t.Helper()
	s1, _ := versionedStores(t, b, "v1")
	for i := range n {
		_, err := s1.As("old").Create(t.Context(), &store.Object[specV1, statusV1]{
			Meta: store.Meta{Name: fmt.Sprintf("w%03d", i)}, Spec: specV1{Image: fmt.Sprintf("img:%d", i)}})
		require.NoError(t, err)
	}
}

// versionsIn counts the stored values of Widget per version.
func versionsIn(t *testing.T, b kv.Backend) map[any]int {
	t.Helper()
	l, err := b.List(t.Context(), "Widget/", kv.ListOptions{})
	require.NoError(t, err)
	out := map[any]int{}
	for _, kv := range l.KVs {
		out[storedEnvelope(t, b, kv.Key[len("Widget/"):])["version"]]++
	}
	return out
}

func TestMigrateRewritesAtTheStorageVersionIdempotently(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	seedV1(t, b, 250)
	_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "Widget/zz", Value: []byte(`{"version":"v9","metadata":{}}`)})
	require.NoError(t, err)
	before, err := b.Get(ctx, "Widget/w007")
	require.NoError(t, err)

	_, s2 := versionedStores(t, b, "v2")
	var reports []store.MigrateProgress
	p, err := s2.Migrate(ctx, store.MigrateOptions{PageSize: 100, Progress: func(p store.MigrateProgress) { reports = append(reports, p) }})
	require.NoError(t, err)
	require.Equal(t, store.MigrateProgress{Scanned: 251, Migrated: 250, Undecodable: 1, Done: true}, p)
	require.Len(t, reports, 3, "a report per page and one at the end")
	require.Equal(t, 100, reports[0].Scanned)
	require.Equal(t, map[any]int{"v2": 250, "v9": 1}, versionsIn(t, b))

	got, err := s2.Get(ctx, "w007")
	require.NoError(t, err)
	require.Equal(t, "img:7", got.Spec.ContainerImage)
	require.Equal(t, int64(1), got.Meta.Generation, "a migration is no spec change")
	was, _, err := store.DecodeMeta(before.Value)
	require.NoError(t, err)
	require.Equal(t, was.LastWrite, got.Meta.LastWrite, "nor a write of anyone's")

	_, err = s2.As("new").Apply(ctx, "w007", map[string]any{"containerImage": "img:new"})
	require.Equal(t, []string{"old .spec.containerImage"}, conflictPaths(t, err), "ownership migrated to v2's paths")

	p, err = s2.Migrate(ctx, store.MigrateOptions{})
	require.NoError(t, err)
	require.Equal(t, store.MigrateProgress{Scanned: 251, Current: 250, Undecodable: 1, Done: true}, p, "a rerun rewrites nothing")
	_, err = b.Get(ctx, "_migrations/Widget")
	require.ErrorIs(t, err, store.ErrNotFound, "a finished migration leaves no checkpoint")
}

// A migration stopped halfway resumes after the last page it finished.
func TestMigrateResumesFromItsCheckpoint(t *testing.T) {
	b := memstore.New()
	seedV1(t, b, 250)
	_, s2 := versionedStores(t, b, "v2")
	ctx, cancel := context.WithCancel(t.Context())
	_, err := s2.Migrate(ctx, store.MigrateOptions{PageSize: 100, Progress: func(store.MigrateProgress) { cancel() }})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, map[any]int{"v2": 100, "v1": 150}, versionsIn(t, b))

	p, err := s2.Migrate(t.Context(), store.MigrateOptions{PageSize: 100})
	require.NoError(t, err)
	require.Equal(t, "w099", p.Resumed)
	require.Equal(t, store.MigrateProgress{Scanned: 150, Migrated: 150, Resumed: "w099", Done: true}, p)
	require.Equal(t, map[any]int{"v2": 250}, versionsIn(t, b))
}

// interposer runs before once, just before the first Txn on key.
type interposer struct {
	kv.Backend
	key    string
	once   sync.Once
	before func()
}

func (i *interposer) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if w.Key == i.key {
		i.once.Do(i.before)
	}
	return i.Backend.Txn(ctx, conds, w)
}

// A controller's write between the migration's read and its rewrite is not
// lost: the rewrite fails its condition, reads again and migrates the new
// value.
func TestMigrateBesideAWriterLosesNoUpdate(t *testing.T) {
	ctx := t.Context()
	mem := memstore.New()
	seedV1(t, mem, 3)
	s1, _ := versionedStores(t, mem, "v1")
	b := &interposer{Backend: mem, key: "Widget/w001", before: func() {
		o, err := s1.Get(ctx, "w001")
		require.NoError(t, err)
		o.Spec.Image = "img:controller"
		_, err = s1.As("controller").Update(ctx, o)
		require.NoError(t, err)
	}}
	_, s2 := versionedStores(t, b, "v2")
	p, err := s2.Migrate(ctx, store.MigrateOptions{})
	require.NoError(t, err)
	require.Equal(t, store.MigrateProgress{Scanned: 3, Migrated: 3, Retried: 1, Done: true}, p)
	got, err := s2.Get(ctx, "w001")
	require.NoError(t, err)
	require.Equal(t, "img:controller", got.Spec.ContainerImage)
	require.Equal(t, map[any]int{"v2": 3}, versionsIn(t, mem))
}

// PerSecond paces the rewrites (on the Store's clock; synctest's fake time).
func TestMigrateIsRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memstore.New()
		seedV1(t, b, 21)
		_, s2 := versionedStores(t, b, "v2")
		start := time.Now()
		p, err := s2.Migrate(t.Context(), store.MigrateOptions{PerSecond: 10})
		require.NoError(t, err)
		require.Equal(t, 21, p.Migrated)
		require.Equal(t, 2*time.Second, time.Since(start), "21 rewrites at 10 per second take 2s")
	})
}

func TestMigrateOfAKindWithoutVersionsIsInvalid(t *testing.T) {
	st := newTypedStore(t, memstore.New())
	_, err := st.Migrate(t.Context(), store.MigrateOptions{})
	require.ErrorIs(t, err, store.ErrInvalid)
}
