package etcdstore_test

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/stretchr/testify/require"
)

var (
	figuresN       = flag.Int("figures.objects", 10000, "objects for -figures")
	figuresWorkers = flag.Int("figures.workers", 8, "Loop workers for -figures")
	figuresSteady  = flag.Duration("figures.steady", time.Minute, "steady-state window for -figures")
)

var figures = flag.Bool("figures", false, "measure the etcd figures (10k objects: throughput, then a 1-minute steady state); takes about 2 minutes")

// TestFigures measures, against one real etcd member:
//   - throughput: reconcile 10k groups from empty, each creating one child,
//     in objects/s and etcd writes per object (goal ≤ 2);
//   - steady state: the same 10k converged groups, resync every 10s, for one
//     minute, counting etcd range reads and writes the controller makes
//     after its initial lists (goal 0 and 0: the cache serves every read).
//
// Run: go test -run TestFigures -figures -v ./   (in store/etcdstore)
func TestFigures(t *testing.T) {
	if !*figures {
		t.Skip("pass -figures to measure")
	}
	n := *figuresN
	c := startCluster(t, 1)
	eb, err := etcdstore.New(c.client(), etcdstore.WithPrefix("/figures/"))
	require.NoError(t, err)
	groups, err := store.New[GroupSpec, GroupStatus](eb, "Group")
	require.NoError(t, err)
	children, err := store.New[ChildSpec, struct{}](eb, "Child")
	require.NoError(t, err)

	// Desired state first, written by a "user" with 16 writers.
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			createGroups(t, groups, w*n/16, (w+1)*n/16)
		}()
	}
	wg.Wait()
	t.Logf("created %d groups in %v", n, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	ctl, _, _ := startController(t, c.clients, "/figures/", "ctl", controllerOpts{workers: *figuresWorkers, resync: 10 * time.Second})
	// Watch the controller's own acknowledged status writes (cheap), then
	// check the outcome once against etcd itself.
	require.Eventually(t, func() bool { return ctl.statusWrites.Load() >= int64(n) }, 5*time.Minute, 20*time.Millisecond)
	took := time.Since(start)
	done, err := converged(context.Background(), groups, children, n)
	require.NoError(t, err)
	require.Equal(t, n, done)
	writes := ctl.backend.txns.Load()
	fmt.Printf("throughput: %d objects converged in %v: %.0f objects/s, %.2f etcd writes/object, %d range reads (initial lists and status re-reads)\n",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), float64(writes)/float64(n), ctl.backend.gets.Load()+ctl.backend.lists.Load())

	// Steady state: nothing changes; six resyncs go by.
	gets0, lists0, txns0 := ctl.backend.gets.Load(), ctl.backend.lists.Load(), ctl.backend.txns.Load()
	reconciles0 := ctl.reconciles.Load()
	time.Sleep(*figuresSteady) // a real minute against a real etcd is the measurement itself
	fmt.Printf("steady state: %v, resync 10s, %d objects: %d reconciles, %d etcd range reads, %d etcd writes\n", *figuresSteady,
		n, ctl.reconciles.Load()-reconciles0, ctl.backend.gets.Load()-gets0+ctl.backend.lists.Load()-lists0, ctl.backend.txns.Load()-txns0)
}
