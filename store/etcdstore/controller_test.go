package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The controller of these tests: every Group gets one Child with a name
// derived from the Group's (so a crash mid-create never duplicates it), and
// the Group's status records that its child exists. Reads come from caches.

type GroupSpec struct {
	Replicas int `json:"replicas"`
}

type GroupStatus struct {
	Children int `json:"children"`
}

type ChildSpec struct {
	Group string `json:"group"`
}

type (
	group = store.Object[GroupSpec, GroupStatus]
	child = store.Object[ChildSpec, struct{}]
)

// countingBackend counts what a controller asks of etcd, at the Backend.
type countingBackend struct {
	kv.Backend
	gets, lists, txns atomic.Int64
}

func (c *countingBackend) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	c.gets.Add(1)
	return c.Backend.Get(ctx, key)
}

func (c *countingBackend) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	c.lists.Add(1)
	return c.Backend.List(ctx, prefix, opts)
}

func (c *countingBackend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	c.txns.Add(1)
	return c.Backend.Txn(ctx, conds, w)
}

// acceptedWrite is a write the store acknowledged, with the term it was made in.
type acceptedWrite struct {
	replica string
	fence   int64
	rev     int64
}

// controller is one replica: its caches, its Loop, and what it wrote.
type controller struct {
	name     string
	backend  *countingBackend
	groups   *store.Store[GroupSpec, GroupStatus]
	children *store.Store[ChildSpec, struct{}]
	gcache   *cache.Cache[GroupSpec, GroupStatus]
	ccache   *cache.Cache[ChildSpec, struct{}]
	loop     *reconcile.Loop[string]

	reconciles atomic.Int64
	// statusWrites counts acknowledged status writes: a group's last step.
	statusWrites atomic.Int64

	mu       sync.Mutex
	accepted []acceptedWrite
	fences   []store.Fence
	// created records child creates etcd acknowledged.
	created map[string]bool
}

func (c *controller) record(ctx context.Context, rev int64) {
	f, _ := store.FenceFrom(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accepted = append(c.accepted, acceptedWrite{c.name, f.Revision, rev})
	if n := len(c.fences); n == 0 || c.fences[n-1] != f {
		c.fences = append(c.fences, f)
	}
}

func (c *controller) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	c.reconciles.Add(1)
	g, ok := c.gcache.Get(name)
	if !ok || g.Meta.DeletionRequested {
		return reconcile.Result{}, nil
	}
	childName := name + "-c"
	if _, ok := c.ccache.Get(childName); !ok {
		ch := &child{
			Meta: store.Meta{Name: childName, Owners: []store.OwnerRef{{Kind: "Group", Name: name, UID: g.Meta.UID, Controller: true}}},
			Spec: ChildSpec{Group: name},
		}
		rev, err := c.children.As(c.name).Create(ctx, ch)
		if err := store.IgnoreAlreadyExists(err); err != nil {
			return reconcile.Result{}, err
		}
		if err == nil {
			c.record(ctx, rev)
			c.mu.Lock()
			c.created[childName] = true
			c.mu.Unlock()
		}
	}
	if g.Status.Children != 1 {
		upd := *g
		upd.Status.Children = 1
		rev, err := c.groups.As(c.name).UpdateStatus(ctx, &upd, store.WithGeneration(g.Meta.Generation))
		if err != nil {
			return reconcile.Result{}, err
		}
		c.record(ctx, rev)
		c.statusWrites.Add(1)
	}
	return reconcile.Result{}, nil
}

type controllerOpts struct {
	workers int
	elector func(b *etcdstore.Backend) *etcdstore.Elector
	resync  time.Duration
}

// startController runs a replica on its own etcd client until the returned
// stop is called (or the test ends). prefix keeps tests apart in one cluster.
func startController(t *testing.T, endpoints []string, prefix, name string, o controllerOpts) (*controller, *clientv3.Client, func()) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	eb, err := etcdstore.New(cli, etcdstore.WithPrefix(prefix), etcdstore.WithProgressInterval(100*time.Millisecond))
	require.NoError(t, err)
	c := &controller{name: name, backend: &countingBackend{Backend: eb}, created: map[string]bool{}}
	c.groups, err = store.New[GroupSpec, GroupStatus](c.backend, "Group")
	require.NoError(t, err)
	c.children, err = store.New[ChildSpec, struct{}](c.backend, "Child")
	require.NoError(t, err)
	c.gcache = cache.New(c.groups)
	c.ccache = cache.New(c.children)

	opts := []reconcile.Option{reconcile.WithWorkers(o.workers)}
	if o.elector != nil {
		opts = append(opts, reconcile.WithElector(o.elector(eb)))
	}
	if o.resync > 0 {
		opts = append(opts, reconcile.WithResync(o.resync, 0.1))
	}
	c.loop, err = reconcile.New("groups", reconcile.Reconciler[string](c), reconcile.FromStore(c.gcache, c.groups), opts...)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{c.gcache.Run, c.ccache.Run, c.loop.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v", name, err)
			}
		}()
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			cli.Close()
		})
	}
	t.Cleanup(stop)
	return c, cli, stop
}

func createGroups(t *testing.T, st *store.Store[GroupSpec, GroupStatus], from, to int) {
	t.Helper()
	ctx := context.Background()
	for i := from; i < to; i++ {
		g := &group{Meta: store.Meta{Name: fmt.Sprintf("g-%05d", i)}, Spec: GroupSpec{Replicas: 1}}
		require.Eventually(t, func() bool {
			_, err := st.As("user").Create(ctx, g)
			return store.IgnoreAlreadyExists(err) == nil
		}, 30*time.Second, 10*time.Millisecond)
	}
}

// converged reads the truth from etcd (not from any cache): every group has
// its child and a status saying so.
func converged(ctx context.Context, gs *store.Store[GroupSpec, GroupStatus], cs *store.Store[ChildSpec, struct{}], n int) (int, error) {
	groups, err := gs.List(ctx, store.ListOptions{})
	if err != nil {
		return 0, err
	}
	children, err := cs.List(ctx, store.ListOptions{})
	if err != nil {
		return 0, err
	}
	have := map[string]bool{}
	for _, c := range children.Items {
		have[c.Meta.Name] = true
	}
	done := 0
	for _, g := range groups.Items {
		if have[g.Meta.Name+"-c"] && g.Status.Children == 1 {
			done++
		}
	}
	if len(groups.Items) != n {
		return done, fmt.Errorf("have %d groups, want %d", len(groups.Items), n)
	}
	return done, nil
}

func waitConverged(t *testing.T, gs *store.Store[GroupSpec, GroupStatus], cs *store.Store[ChildSpec, struct{}], n int, within time.Duration) {
	t.Helper()
	// Not require.Eventually: its message's arguments are taken when it is
	// called, so a failure would always say 0 converged.
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		last, err := converged(ctx, gs, cs, n)
		cancel()
		if err == nil && last == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("converged %d/%d within %v (last error %v)", last, n, within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A reconcile storm on a 3-member cluster loses etcd's raft leader midway:
// the controller carries on through the election, converges, and every child
// create etcd acknowledged is there at the end.
func TestControllerConvergesThroughEtcdLeaderLoss(t *testing.T) {
	c := startCluster(t, 3)
	const n = 300
	ctl, _, stop := startController(t, c.clients, "/storm/", "ctl", controllerOpts{workers: 4})
	createGroups(t, ctl.groups, 0, n)

	// Kill the raft leader once the storm is well under way.
	require.Eventually(t, func() bool { return ctl.backend.txns.Load() > n/2 }, 60*time.Second, 5*time.Millisecond)
	leader := c.leader()
	require.GreaterOrEqual(t, leader, 0)
	c.kill(leader)

	waitConverged(t, ctl.groups, ctl.children, n, 90*time.Second)
	stop()

	// No acknowledged write is lost: read every acknowledged child back,
	// through a client of its own, from the surviving members.
	ctx := context.Background()
	eb, err := etcdstore.New(c.client(), etcdstore.WithPrefix("/storm/"))
	require.NoError(t, err)
	children, err := store.New[ChildSpec, struct{}](eb, "Child")
	require.NoError(t, err)
	ctl.mu.Lock()
	created := ctl.created
	ctl.mu.Unlock()
	require.NotEmpty(t, created)
	for name := range created {
		_, err := children.Get(ctx, name)
		require.NoError(t, err, "acknowledged create of %s", name)
	}
}

// Two replicas elect one leader. The active one is killed (its connection
// cut, so it cannot even resign); the other takes over within the lease TTL
// plus 2s, and no write from the dead replica's term is accepted after the
// new term begins.
func TestReplicaFailoverFencesTheOldTerm(t *testing.T) {
	c := startCluster(t, 1)
	const ttl = 2 * time.Second
	elector := func(id string) func(b *etcdstore.Backend) *etcdstore.Elector {
		return func(b *etcdstore.Backend) *etcdstore.Elector {
			e, err := etcdstore.NewElector(b, "groups", id, ttl)
			require.NoError(t, err)
			return e
		}
	}
	a, aCli, stopA := startController(t, c.clients, "/failover/", "a", controllerOpts{workers: 2, elector: elector("a")})
	require.Eventually(t, a.loop.Leading, 10*time.Second, 10*time.Millisecond)
	b, _, _ := startController(t, c.clients, "/failover/", "b", controllerOpts{workers: 2, elector: elector("b")})
	createGroups(t, a.groups, 0, 50)
	waitConverged(t, a.groups, a.children, 50, 30*time.Second)
	require.False(t, b.loop.Leading(), "only one replica leads")

	// Kill a: cut its connection first, so nothing it does reaches etcd.
	killed := time.Now()
	require.NoError(t, aCli.Close())
	stopA()
	require.Eventually(t, b.loop.Leading, ttl+2*time.Second, 10*time.Millisecond, "b takes over within TTL+2s")
	t.Logf("takeover after %v (TTL %v)", time.Since(killed).Round(time.Millisecond), ttl)

	createGroups(t, b.groups, 50, 80)
	waitConverged(t, b.groups, b.children, 80, 30*time.Second)

	// A zombie write with a's last fence is refused by etcd itself.
	a.mu.Lock()
	require.NotEmpty(t, a.fences)
	fenceA := a.fences[len(a.fences)-1]
	acceptedA := append([]acceptedWrite(nil), a.accepted...)
	a.mu.Unlock()
	b.mu.Lock()
	require.NotEmpty(t, b.fences)
	fenceB := b.fences[0]
	b.mu.Unlock()
	require.NotEqual(t, fenceA, fenceB)
	zombie := &group{Meta: store.Meta{Name: "zombie"}}
	_, err := b.groups.As("a").Create(store.WithFence(context.Background(), fenceA), zombie)
	require.ErrorIs(t, err, store.ErrFenced)

	// Every write a made was accepted before b's term began.
	for _, w := range acceptedA {
		require.Less(t, w.rev, fenceB.Revision, "write of term %d accepted at %d, after the new term began", w.fence, w.rev)
	}
}
