package storetest_test

import (
	"testing"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/store/storetest"
)

// A backend's own tests run the suite from an ordinary test function, with a
// constructor that hands each subtest an empty key space.
func ExampleRun() {
	conformance := func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) kv.Backend {
			// Your backend here; memstore stands in for it.
			return memstore.New()
		})
	}
	_ = conformance // in a _test.go file: func TestConformance(t *testing.T) { ... }
}
