package memstore

import (
	"unsafe"

	"github.com/steady-go/steady/store/kv"
)

// newEntry returns a live key's entry, created at revision rev, for the
// Store's map and index. A key of up to maxInlineKey bytes is copied into
// the entry's own allocation, rather than kept as the caller's string:
// every key then costs the GC one heap object to mark, not two, in the
// same bytes or fewer (a 14-byte key and its entry took a 16-byte and a
// 64-byte object, and take one of 80). The key's bytes never change, so
// the strings read from it (kv.KeyValue.Key of a Get, a List or a watch
// event, and the object names a store cuts from them) may outlive the
// entry: they keep its allocation alive, which is why Txn clears a
// deleted entry's value.
func newEntry(key string, rev int64) *kv.KeyValue {
	var e *kv.KeyValue
	switch n := len(key); {
	case n == 0:
		e = new(kv.KeyValue)
	case n <= 8:
		e = withKey[[8]byte](key)
	case n <= 24:
		e = withKey[[24]byte](key)
	case n <= 40:
		e = withKey[[40]byte](key)
	case n <= 56:
		e = withKey[[56]byte](key)
	case n <= maxInlineKey:
		e = withKey[[maxInlineKey]byte](key)
	default:
		e = &kv.KeyValue{Key: key}
	}
	e.CreateRevision = rev
	return e
}

// maxInlineKey is the longest key newEntry copies into its entry. The
// array sizes above fill the allocator's size classes after the 56 bytes
// of a kv.KeyValue (64, 80, 96, 112 and 128 bytes).
const maxInlineKey = 72

// keyed is a kv.KeyValue with the bytes of its key after it.
type keyed[B any] struct {
	kv  kv.KeyValue
	key B
}

// withKey returns a new entry whose Key is a copy of key, held in the
// entry's allocation; B is a byte array at least as long as key.
func withKey[B any](key string) *kv.KeyValue {
	e := new(keyed[B])
	b := unsafe.Slice((*byte)(unsafe.Pointer(&e.key)), unsafe.Sizeof(e.key))
	e.kv.Key = unsafe.String(&b[0], copy(b, key))
	return &e.kv
}
