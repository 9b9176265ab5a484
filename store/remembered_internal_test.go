package store

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// TestDecodeRememberedIsDecodeRaw checks that a write's decode of the
// value its Store remembers (decodeRemembered) gives what the general
// decode gives (decodeRaw), head and revision included, with its Spec and
// Status in the value itself, capped there; and that it leaves to
// decodeRaw every value it cannot read so: one of another kind or name,
// with a version or preserved fields, or not laid out as the store
// writes it.
func TestDecodeRememberedIsDecodeRaw(t *testing.T) {
	ctx := context.Background()
	b, st := newReadAsObjects(t)

	for _, name := range []string{"bare", "full", "escaped"} {
		stored, err := b.Get(ctx, st.keyOf(name))
		require.NoError(t, err)
		want, err := st.decodeRaw(stored, false)
		require.NoError(t, err)
		got, ok := st.decodeRemembered(name, stored.Value, stored.ModRevision)
		require.True(t, ok, name)
		requireSameRaw(t, want, got)
		require.Equal(t, stored.ModRevision, got.Meta.Revision)
		if name != "escaped" { // a head is cut only from metadata read as written
			require.NotEmpty(t, got.head.text, name)
		}
		require.Equal(t, string(want.head.text), string(got.head.text), name)
		for _, side := range [][]byte{got.Spec, got.Status} {
			require.True(t, inValue(side, stored.Value), "%s: a side of the value itself", name)
			require.Equal(t, len(side), cap(side), "%s: capped: no append writes into the value", name)
		}
	}

	stored, err := b.Get(ctx, st.keyOf("bare"))
	require.NoError(t, err)
	for _, c := range []struct{ why, name, value string }{
		{"another name", "other", string(stored.Value)},
		{"another kind", "bare", replaceOnce(stored.Value, `"kind":"Keep"`, `"kind":"Other"`)},
		{"a version", "bare", `{"version":"v1",` + string(stored.Value[1:])},
		{"preserved fields", "bare", string(stored.Value[:len(stored.Value)-1]) + `,"preserved":{}}`},
		{"not the store's layout", "bare", string(stored.Value[:len(stored.Value)-1]) + `,"extra":1}`},
		{"not JSON", "bare", string(stored.Value[:len(stored.Value)-1])},
	} {
		_, ok := st.decodeRemembered(c.name, []byte(c.value), stored.ModRevision)
		require.False(t, ok, c.why)
		if c.why == "not the store's layout" {
			// What decodeRaw reads the general way.
			_, err := st.decodeRaw(kv.KeyValue{Key: st.keyOf(c.name), Value: []byte(c.value), ModRevision: 1}, false)
			require.NoError(t, err)
		}
	}
}

// inValue reports whether side lies within value's bytes.
func inValue(side, value []byte) bool {
	if len(side) == 0 {
		return false
	}
	p, v := uintptr(unsafe.Pointer(unsafe.SliceData(side))), uintptr(unsafe.Pointer(unsafe.SliceData(value)))
	return v <= p && p+uintptr(len(side)) <= v+uintptr(len(value))
}
