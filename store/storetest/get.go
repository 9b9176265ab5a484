package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

var getTests = []test{
	{"Missing", func(t *testing.T, b kv.Backend) {
		_, err := b.Get(t.Context(), "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	}},
	{"CreateUpdateDelete", func(t *testing.T, b kv.Backend) {
		r1 := put(t, b, "k", "v1")
		requireKV(t, kv.KeyValue{Key: "k", Value: []byte("v1"), CreateRevision: r1, ModRevision: r1}, get(t, b, "k"), "after create")

		r2 := put(t, b, "k", "v2")
		requireKV(t, kv.KeyValue{Key: "k", Value: []byte("v2"), CreateRevision: r1, ModRevision: r2}, get(t, b, "k"),
			"an update keeps CreateRevision")

		del(t, b, "k")
		_, err := b.Get(t.Context(), "k")
		require.ErrorIs(t, err, store.ErrNotFound, "after delete")

		r4 := put(t, b, "k", "v3")
		requireKV(t, kv.KeyValue{Key: "k", Value: []byte("v3"), CreateRevision: r4, ModRevision: r4}, get(t, b, "k"),
			"a re-created key has a new CreateRevision")
	}},
	{"EmptyValue", func(t *testing.T, b kv.Backend) {
		r := put(t, b, "k", "")
		requireKV(t, kv.KeyValue{Key: "k", CreateRevision: r, ModRevision: r}, get(t, b, "k"), "empty value")
	}},
	{"ValueNotRetained", func(t *testing.T, b kv.Backend) {
		buf := []byte("abc")
		_, err := b.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: buf})
		require.NoError(t, err)
		copy(buf, "XYZ")
		require.Equal(t, "abc", string(get(t, b, "k").Value), "Txn must not keep the caller's buffer")
	}},
	{"ValuesReturnedStay", func(t *testing.T, b kv.Backend) {
		ctx := t.Context()
		events := watch(t, b, "", currentRevision(t, b))
		put(t, b, "k", "first")
		got := get(t, b, "k")
		list, err := b.List(ctx, "", kv.ListOptions{})
		require.NoError(t, err)
		require.Len(t, list.KVs, 1)
		ev := nextChange(t, events)
		put(t, b, "k", "after")
		del(t, b, "k")
		put(t, b, "k", "again")
		for what, v := range map[string][]byte{"Get": got.Value, "List": list.KVs[0].Value, "Watch": ev.KV.Value} {
			require.Equal(t, "first", string(v), "a value %s returned must stay as it was after later writes of its key (the Store keeps some)", what)
		}
	}},
	{"KeysAreExact", func(t *testing.T, b kv.Backend) {
		put(t, b, "a/b", "1")
		for _, k := range []string{"a", "a/", "a/b/", "a/bc", "A/b"} {
			_, err := b.Get(t.Context(), k)
			require.ErrorIs(t, err, store.ErrNotFound, "Get(%q) must not match key a/b", k)
		}
	}},
}
