package etcdstore_test

import (
	"testing"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/storetest"
)

// TestConformance runs the same suite as memstore against one real etcd
// member. Each subtest gets its own key prefix, so the revision-counting
// checks see only their own writes.
func TestConformance(t *testing.T) {
	c := startCluster(t, 1)
	cli := c.client()
	newBackend := func(t *testing.T) kv.Backend { return newBackendOn(t, cli) }
	storetest.Run(t, newBackend)
}
