package memstore_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// TestListMatchesModel drives a Store with random puts and deletes over
// enough keys to split and empty the key index's chunks many times, and
// checks every kind of List against a plain map: current and pinned,
// whole and paged, across prefixes.
func TestListMatchesModel(t *testing.T) {
	t.Run("recent values", func(t *testing.T) { testListMatchesModel(t) })
	t.Run("old values as deltas", func(t *testing.T) { testListMatchesModel(t, memstore.WithAgingLag(1), memstore.WithHistoryBytes(0)) })
}

func testListMatchesModel(t *testing.T, opts ...memstore.Option) {
	const keys, steps = 1500, 6000
	rng := rand.New(rand.NewPCG(1, 2))
	s := memstore.New(append(opts, memstore.WithHistorySize(steps))...)
	model := map[string]kv.KeyValue{}
	snapshots := map[int64]map[string]kv.KeyValue{}
	prefixes := []string{"", "k/", "k/1", "k/25", "k/149", "z/"}

	for step := range steps {
		key := fmt.Sprintf("k/%d", rng.IntN(keys))
		// Grow the key space for the first half, then churn it.
		if _, ok := model[key]; ok && (step > steps/2 && rng.IntN(2) == 0) {
			rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WriteDelete, Key: key})
			require.NoError(t, err)
			require.EqualValues(t, step+1, rev)
			delete(model, key)
		} else {
			value := fmt.Sprint(step)
			rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
			require.NoError(t, err)
			kv := kv.KeyValue{Key: key, Value: []byte(value), CreateRevision: rev, ModRevision: rev}
			if old, ok := model[key]; ok {
				kv.CreateRevision = old.CreateRevision
			}
			model[key] = kv
		}
		if step%1000 == 0 {
			snapshots[s.Revision()] = maps.Clone(model)
		}
		if step%997 == 0 {
			for _, p := range prefixes {
				requireListing(t, s, model, p, 0, rng)
			}
		}
	}
	for rev, snap := range snapshots {
		for _, p := range prefixes {
			requireListing(t, s, snap, p, rev, rng)
		}
	}
}

// requireListing lists prefix at rev (0: current), whole and in pages of a
// random size, and compares with the model.
func requireListing(t *testing.T, s *memstore.Store, model map[string]kv.KeyValue, prefix string, rev int64, rng *rand.Rand) {
	t.Helper()
	var want []kv.KeyValue
	for _, k := range slices.Sorted(maps.Keys(model)) {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			want = append(want, model[k])
		}
	}
	whole, err := s.List(t.Context(), prefix, kv.ListOptions{Revision: rev})
	require.NoError(t, err)
	require.Equal(t, want, whole.KVs, "List(%q) at %d", prefix, rev)

	opts := kv.ListOptions{Limit: 40 + rng.IntN(600), Revision: rev}
	var paged []kv.KeyValue
	for {
		res, err := s.List(t.Context(), prefix, opts)
		require.NoError(t, err)
		paged = append(paged, res.KVs...)
		if res.Continue == "" {
			break
		}
		opts.Continue, opts.Revision = res.Continue, res.Revision
	}
	require.Equal(t, want, paged, "List(%q) at %d in pages of %d", prefix, rev, opts.Limit)
}

// TestPinnedPagesWithWritesBetween lists, in pages pinned to the first
// page's revision, while random puts and deletes land between the pages,
// as a Cache's relist does while writers go on, and checks the listing
// against the model at that revision: the pages of one listing share the
// state of the past, extended by each page with the writes since the last.
func TestPinnedPagesWithWritesBetween(t *testing.T) {
	t.Run("recent values", func(t *testing.T) { testPinnedPagesWithWritesBetween(t) })
	t.Run("old values as deltas", func(t *testing.T) {
		testPinnedPagesWithWritesBetween(t, memstore.WithAgingLag(1), memstore.WithHistoryBytes(0))
	})
}

func testPinnedPagesWithWritesBetween(t *testing.T, opts ...memstore.Option) {
	const keys = 800
	rng := rand.New(rand.NewPCG(3, 4))
	s := memstore.New(append(opts, memstore.WithHistorySize(100_000))...)
	model := map[string]kv.KeyValue{}
	write := func() {
		key := fmt.Sprintf("k/%d", rng.IntN(keys))
		if _, ok := model[key]; ok && rng.IntN(3) == 0 {
			_, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WriteDelete, Key: key})
			require.NoError(t, err)
			delete(model, key)
			return
		}
		value := []byte(fmt.Sprint(rng.Int()))
		rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: value})
		require.NoError(t, err)
		kv := kv.KeyValue{Key: key, Value: value, CreateRevision: rev, ModRevision: rev}
		if old, ok := model[key]; ok {
			kv.CreateRevision = old.CreateRevision
		}
		model[key] = kv
	}
	for range 2 * keys {
		write()
	}
	for round := range 20 {
		prefix := []string{"", "k/", "k/1", "k/3"}[round%4]
		rev := s.Revision()
		var want []kv.KeyValue
		for _, k := range slices.Sorted(maps.Keys(model)) {
			if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
				want = append(want, model[k])
			}
		}
		opts := kv.ListOptions{Limit: 10 + rng.IntN(100)}
		var paged []kv.KeyValue
		for {
			res, err := s.List(t.Context(), prefix, opts)
			require.NoError(t, err)
			paged = append(paged, res.KVs...)
			if res.Continue == "" {
				break
			}
			opts.Continue, opts.Revision = res.Continue, res.Revision
			for range rng.IntN(40) {
				write()
			}
		}
		require.Equal(t, want, paged, "round %d: List(%q) pinned to %d in pages of %d", round, prefix, rev, opts.Limit)
	}
}
