package memstore

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// A key of up to maxInlineKey bytes lives in its entry's own allocation,
// right after the kv.KeyValue, so that a key costs the GC one object to
// mark, not two; a longer one is kept as given. Either way the entry's
// Key reads as the key.
func TestEntryHoldsItsKey(t *testing.T) {
	for n := range maxInlineKey + 10 {
		key := strings.Repeat("k", n)
		e := newEntry(key, 7)
		require.Equal(t, key, e.Key, "key of %d bytes", n)
		require.EqualValues(t, 7, e.CreateRevision)
		if n == 0 {
			continue
		}
		at := uintptr(unsafe.Pointer(unsafe.StringData(e.Key))) - uintptr(unsafe.Pointer(e))
		if n <= maxInlineKey {
			require.Equal(t, unsafe.Sizeof(*e), at, "key of %d bytes: where its bytes are, from the entry's start", n)
		} else {
			require.Same(t, unsafe.StringData(key), unsafe.StringData(e.Key), "key of %d bytes", n)
		}
	}
}

// A deleted key's entry lets its last value go: the strings cut from the
// key (a watch event's, an object's name) may keep the entry alive long
// after, and the history keeps the value as it sees fit.
func TestDeletedEntryLetsItsValueGo(t *testing.T) {
	ctx := context.Background()
	s := New()
	_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "obj/a", Value: []byte("v1")})
	require.NoError(t, err)
	e := s.kvs.get("obj/a")
	require.NotNil(t, e)
	got, err := s.Get(ctx, "obj/a")
	require.NoError(t, err)
	require.Equal(t, "v1", string(got.Value))

	_, err = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "obj/a"})
	require.NoError(t, err)
	require.Nil(t, e.Value, "the deleted entry's value")
}
