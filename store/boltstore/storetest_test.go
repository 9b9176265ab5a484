package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/storetest"
)

// open opens a Store on a new file in a test directory, closed with the
// test.
func open(t *testing.T, opts ...boltstore.Option) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "steady.db"), append(opts, nil)...) // a nil option is skipped
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// TestConformance runs the backend and typed suites, each subtest on a
// file of its own.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) kv.Backend { return open(t) })
}
