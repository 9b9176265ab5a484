package storeaccess

import (
	"context"

	"github.com/steady-go/steady/store/kv"
)

// A PartsGetter is a backend (memstore, through its Hooks) that reads a
// key given in two parts, a store.Store's prefix and an object's name,
// without its caller building the key: a string passed through
// kv.Backend's Get escapes, so each of a Store's reads allocated its key
// (~370 instructions, and an allocation, per Get and per read of a
// write).
type PartsGetter interface {
	// Backend is the kv.Backend whose Get GetIn is, so that a caller
	// given a wrapper of it (whose Get may mean something else) can tell.
	Backend() kv.Backend
	// GetIn is Backend().Get of the key prefix+name. The KeyValue's Key
	// is that key, the backend's own string of it, which the caller may
	// keep: the key of a write that follows the read need not be built
	// either.
	GetIn(ctx context.Context, prefix, name string) (kv.KeyValue, error)
}
