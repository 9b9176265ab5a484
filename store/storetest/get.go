package storetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

var getTests = []test{
	{"Missing", func(t *testing.T, b store.Backend) {
		_, err := b.Get(t.Context(), "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	}},
	{"CreateUpdateDelete", func(t *testing.T, b store.Backend) {
		r1 := put(t, b, "k", "v1")
		requireKV(t, store.KV{Key: "k", Value: []byte("v1"), CreateRevision: r1, ModRevision: r1}, get(t, b, "k"), "after create")

		r2 := put(t, b, "k", "v2")
		requireKV(t, store.KV{Key: "k", Value: []byte("v2"), CreateRevision: r1, ModRevision: r2}, get(t, b, "k"),
			"an update keeps CreateRevision")

		del(t, b, "k")
		_, err := b.Get(t.Context(), "k")
		require.ErrorIs(t, err, store.ErrNotFound, "after delete")

		r4 := put(t, b, "k", "v3")
		requireKV(t, store.KV{Key: "k", Value: []byte("v3"), CreateRevision: r4, ModRevision: r4}, get(t, b, "k"),
			"a re-created key has a new CreateRevision")
	}},
	{"EmptyValue", func(t *testing.T, b store.Backend) {
		r := put(t, b, "k", "")
		requireKV(t, store.KV{Key: "k", CreateRevision: r, ModRevision: r}, get(t, b, "k"), "empty value")
	}},
	{"ValueNotRetained", func(t *testing.T, b store.Backend) {
		buf := []byte("abc")
		_, err := b.Txn(t.Context(), nil, store.Write{Kind: store.WritePut, Key: "k", Value: buf})
		require.NoError(t, err)
		copy(buf, "XYZ")
		require.Equal(t, "abc", string(get(t, b, "k").Value), "Txn must not keep the caller's buffer")
	}},
	{"KeysAreExact", func(t *testing.T, b store.Backend) {
		put(t, b, "a/b", "1")
		for _, k := range []string{"a", "a/", "a/b/", "a/bc", "A/b"} {
			_, err := b.Get(t.Context(), k)
			require.ErrorIs(t, err, store.ErrNotFound, "Get(%q) must not match key a/b", k)
		}
	}},
}
