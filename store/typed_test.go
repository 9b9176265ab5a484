package store_test

import (
	"testing"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/store/storetest"
)

func newMemstore(*testing.T) kv.Backend { return memstore.New() }

// The typed semantics, specified once in storetest.RunTyped, hold over the
// in-memory backend.
func TestTypedOnMemstore(t *testing.T) { storetest.RunTyped(t, newMemstore) }
