package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

var listTests = []test{
	{"OrderAndPrefix", func(t *testing.T, b kv.Backend) {
		for _, k := range []string{"a/3", "b/1", "a/1", "a0", "a", "a/10", "a/sub/x", "a/2"} {
			put(t, b, k, "v-"+k)
		}
		head := currentRevision(t, b)
		for _, tc := range []struct {
			prefix string
			want   []string
		}{
			{"a/", []string{"a/1", "a/10", "a/2", "a/3", "a/sub/x"}},
			{"a/sub/", []string{"a/sub/x"}},
			{"a", []string{"a", "a/1", "a/10", "a/2", "a/3", "a/sub/x", "a0"}},
			{"", []string{"a", "a/1", "a/10", "a/2", "a/3", "a/sub/x", "a0", "b/1"}},
			{"c/", nil},
		} {
			res, err := b.List(t.Context(), tc.prefix, kv.ListOptions{})
			require.NoError(t, err)
			require.Equal(t, tc.want, keys(res.KVs), "List(%q) is in key order and under the prefix", tc.prefix)
			require.Equal(t, head, res.Revision, "List(%q) reflects the current revision", tc.prefix)
			require.Empty(t, res.Continue, "a complete listing has no Continue")
			for _, kv := range res.KVs {
				requireKV(t, get(t, b, kv.Key), kv, "List and Get agree")
			}
		}
	}},
	{"Pagination", func(t *testing.T, b kv.Backend) {
		var want []string
		for i := range 10 {
			k := fmt.Sprintf("p/%02d", i)
			want = append(want, k)
			put(t, b, k, "v")
		}
		put(t, b, "q/outside", "v")
		for _, limit := range []int{1, 3, 5, 9, 10, 11} {
			var got []string
			var rev int64
			pages := 0
			opts := kv.ListOptions{Limit: limit}
			for {
				res, err := b.List(t.Context(), "p/", opts)
				require.NoError(t, err)
				pages++
				require.LessOrEqual(t, len(res.KVs), limit, "a page holds at most Limit keys")
				if rev == 0 {
					rev = res.Revision
				}
				require.Equal(t, rev, res.Revision, "every page reflects the first page's revision")
				got = append(got, keys(res.KVs)...)
				if res.Continue == "" {
					break
				}
				require.Len(t, res.KVs, limit, "only the last page may be short")
				opts.Continue, opts.Revision = res.Continue, res.Revision
			}
			require.Equal(t, want, got, "limit %d: the pages concatenate to the whole listing", limit)
			require.Equal(t, (len(want)+limit-1)/limit, pages, "limit %d: no empty trailing page", limit)
		}
	}},
	{"RevisionPinned", func(t *testing.T, b kv.Backend) {
		for i := range 6 {
			put(t, b, fmt.Sprintf("k/%d", i), fmt.Sprintf("v%d", i))
		}
		first, err := b.List(t.Context(), "k/", kv.ListOptions{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"k/0", "k/1"}, keys(first.KVs))
		before, err := b.List(t.Context(), "k/", kv.ListOptions{Revision: first.Revision})
		require.NoError(t, err)

		// Change every kind of thing the remaining pages could see.
		put(t, b, "k/3", "changed")
		del(t, b, "k/4")
		put(t, b, "k/2a", "new")
		del(t, b, "k/0")
		del(t, b, "k/2")
		put(t, b, "k/2", "recreated")
		put(t, b, "k/9", "new")

		rest := pages(t, b, "k/", kv.ListOptions{Limit: 2, Continue: first.Continue, Revision: first.Revision})
		got := append(slices.Clone(first.KVs), rest...)
		require.Len(t, got, len(before.KVs), "pinned pages show the keys as they were")
		for i := range got {
			requireKV(t, before.KVs[i], got[i], "pinned page")
		}

		now, err := b.List(t.Context(), "k/", kv.ListOptions{})
		require.NoError(t, err)
		require.Greater(t, now.Revision, first.Revision)
		require.Equal(t, []string{"k/1", "k/2", "k/2a", "k/3", "k/5", "k/9"}, keys(now.KVs), "a fresh listing shows the changes")
		require.Equal(t, "recreated", string(now.KVs[1].Value))
	}},
	{"PinnedToOlderRevision", func(t *testing.T, b kv.Backend) {
		r1 := put(t, b, "k/a", "1")
		put(t, b, "k/b", "1")
		put(t, b, "k/a", "2")
		res, err := b.List(t.Context(), "k/", kv.ListOptions{Revision: r1})
		require.NoError(t, err)
		require.Equal(t, r1, res.Revision)
		require.Len(t, res.KVs, 1, "at r1 only k/a existed")
		requireKV(t, kv.KeyValue{Key: "k/a", Value: []byte("1"), CreateRevision: r1, ModRevision: r1}, res.KVs[0], "k/a at r1")
	}},
	{"ContinueOutsidePrefix", func(t *testing.T, b kv.Backend) {
		for _, k := range []string{"a", "b", "b/1", "b/2", "c"} {
			put(t, b, k, "v")
		}
		rev := put(t, b, "b/3", "v")
		for _, opts := range []kv.ListOptions{
			{Continue: "a"}, {Continue: "z"}, {Continue: "b"}, {Continue: "c/1"},
			{Continue: "a", Limit: 1}, {Continue: "z", Revision: rev - 1},
		} {
			_, err := b.List(t.Context(), "b/", opts)
			require.ErrorIs(t, err, store.ErrInvalid, "List(%q, %+v): a Continue not under the prefix", "b/", opts)
		}
		res, err := b.List(t.Context(), "b/", kv.ListOptions{Continue: "b/1"})
		require.NoError(t, err)
		require.Equal(t, []string{"b/2", "b/3"}, keys(res.KVs), "a Continue under the prefix")
		res, err = b.List(t.Context(), "", kv.ListOptions{Continue: "b/3"})
		require.NoError(t, err)
		require.Equal(t, []string{"c"}, keys(res.KVs), "every key is under the empty prefix")
	}},
	{"FutureRevision", func(t *testing.T, b kv.Backend) {
		r := put(t, b, "k", "v")
		_, err := b.List(t.Context(), "", kv.ListOptions{Revision: r + 1000})
		require.ErrorIs(t, err, store.ErrInvalid)
	}},
	{"CompactedRevision", func(t *testing.T, b kv.Backend) {
		c := compactor(t, b)
		put(t, b, "k/a", "1")
		old := put(t, b, "k/b", "1")
		put(t, b, "k/a", "2")
		mid := put(t, b, "k/c", "1")
		put(t, b, "k/d", "1")
		require.NoError(t, c.Compact(t.Context(), mid))
		_, err := b.List(t.Context(), "k/", kv.ListOptions{Revision: old})
		require.ErrorIs(t, err, store.ErrExpired, "a listing pinned to compacted history")
		res, err := b.List(t.Context(), "k/", kv.ListOptions{Revision: mid})
		require.NoError(t, err, "the compaction revision itself stays readable")
		require.Equal(t, []string{"k/a", "k/b", "k/c"}, keys(res.KVs), "the state at the compaction revision")
	}},
}

// pages follows a listing to its end and returns its keys.
func pages(t *testing.T, b kv.Backend, prefix string, opts kv.ListOptions) []kv.KeyValue {
	t.Helper()
	var all []kv.KeyValue
	for {
		res, err := b.List(t.Context(), prefix, opts)
		require.NoError(t, err)
		if opts.Revision != 0 {
			require.Equal(t, opts.Revision, res.Revision, "a pinned page reflects its pinned revision")
		}
		all = append(all, res.KVs...)
		if res.Continue == "" {
			return all
		}
		opts.Continue, opts.Revision = res.Continue, res.Revision
	}
}

func keys(kvs []kv.KeyValue) []string {
	var ks []string
	for _, kv := range kvs {
		ks = append(ks, kv.Key)
	}
	return ks
}

func compactor(t *testing.T, b kv.Backend) Compactor {
	t.Helper()
	c, ok := b.(Compactor)
	if !ok {
		t.Skipf("%T does not implement storetest.Compactor", b)
	}
	return c
}
