package pgstore_test

import (
	"testing"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/storetest"
)

// TestConformance runs the backend and typed suites against the test
// server, each subtest on a schema of its own.
func TestConformance(t *testing.T) {
	pool := newPool(t)
	storetest.Run(t, func(t *testing.T) kv.Backend { return newBackend(t, pool) })
}
