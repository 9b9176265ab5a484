package etcdstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/etcdstore"
)

type writeSpec struct {
	Image    string            `json:"image"`
	Replicas int               `json:"replicas"`
	Env      map[string]string `json:"env"`
}

type writeStatus struct {
	Ready   int    `json:"ready"`
	Message string `json:"message"`
}

type writeObject = store.Object[writeSpec, writeStatus]

// rpcCounter counts the unary gRPC calls (round trips) an etcd client makes,
// by method.
type rpcCounter struct {
	ranges, txns, others atomic.Int64
}

func (c *rpcCounter) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	switch {
	case strings.HasSuffix(method, "/Range"):
		c.ranges.Add(1)
	case strings.HasSuffix(method, "/Txn"):
		c.txns.Add(1)
	default:
		c.others.Add(1)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (c *rpcCounter) snapshot() [3]int64 {
	return [3]int64{c.ranges.Load(), c.txns.Load(), c.others.Load()}
}

// countedClient returns an etcd client to c whose round trips n counts.
func countedClient(tb testing.TB, c *cluster, n *rpcCounter) *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: c.clients, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(n.intercept)},
	})
	require.NoError(tb, err)
	tb.Cleanup(func() { cli.Close() })
	return cli
}

func writeTestObject(name string) *writeObject {
	env := map[string]string{}
	for i := range 8 {
		env[fmt.Sprintf("VARIABLE_%d", i)] = fmt.Sprintf("value-number-%d", i)
	}
	return &writeObject{
		Meta:   store.Meta{Name: name, Labels: map[string]string{"app": "bench", "tier": "backend"}},
		Spec:   writeSpec{Image: "registry.example.com/team/service:v1.2.3", Replicas: 1, Env: env},
		Status: writeStatus{Message: "all replicas are ready and serving traffic"},
	}
}

// On etcd, an Update or UpdateStatus based on the Store's last write, or on
// what the Store's Watch delivered (as a cache sees it), is one round trip:
// one Txn, and no Range before it.
func TestWriteIsOneRoundTrip(t *testing.T) {
	c := startCluster(t, 1)
	var rpcs rpcCounter
	eb, err := etcdstore.New(countedClient(t, c, &rpcs), etcdstore.WithPrefix("/roundtrip/"))
	require.NoError(t, err)
	st, err := store.New[writeSpec, writeStatus](eb, "Widget")
	require.NoError(t, err)
	ctx := t.Context()
	w := st.As("loop")
	obj := writeTestObject("a")
	_, err = w.Create(ctx, obj)
	require.NoError(t, err)

	before := rpcs.snapshot()
	for range 5 {
		obj.Spec.Replicas++
		_, err = w.Update(ctx, obj)
		require.NoError(t, err)
		obj.Status.Ready++
		_, err = w.UpdateStatus(ctx, obj)
		require.NoError(t, err)
	}
	after := rpcs.snapshot()
	require.Equal(t, [3]int64{0, 10, 0}, [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]},
		"ten writes: ranges, txns, other calls")

	// Another writer's change, seen through the Store's Watch.
	events, err := st.Watch(ctx, obj.Meta.Revision)
	require.NoError(t, err)
	other, err := store.New[writeSpec, writeStatus](eb, "Widget")
	require.NoError(t, err)
	theirs, err := other.Get(ctx, "a")
	require.NoError(t, err)
	theirs.Spec.Image += "-patched"
	_, err = other.As("user").Update(ctx, theirs)
	require.NoError(t, err)
	var seen *writeObject
	for seen == nil {
		if ev := <-events; ev.Type == store.Modified {
			seen = ev.Object
		}
	}
	before = rpcs.snapshot()
	seen.Spec.Replicas = 100
	_, err = w.Update(ctx, seen)
	require.NoError(t, err)
	after = rpcs.snapshot()
	require.Equal(t, [3]int64{0, 1, 0}, [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]},
		"a write based on a watched object: ranges, txns, other calls")

	// A write based on an object that moved on still conflicts.
	obj.Spec.Replicas = 7
	_, err = w.Update(ctx, obj)
	require.ErrorIs(t, err, store.ErrConflict)

	// ApplyStatus and Apply, after another writer's change seen through the
	// Watch: merged with the value the Store saw, written in one Txn.
	theirs, err = other.Get(ctx, "a")
	require.NoError(t, err)
	theirs.Status.Message = "patched"
	theirRev, err := other.As("user").UpdateStatus(ctx, theirs)
	require.NoError(t, err)
	for ev := range events {
		if ev.Object.Meta.Revision == theirRev {
			break
		}
	}
	before = rpcs.snapshot()
	ready := store.Condition{Type: "Ready", Status: store.ConditionTrue}
	res, err := w.ApplyStatus(ctx, "a", map[string]any{"ready": 3}, []store.Condition{ready})
	require.NoError(t, err)
	require.True(t, res.Changed)
	after = rpcs.snapshot()
	require.Equal(t, [3]int64{0, 1, 0}, [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]},
		"an ApplyStatus after a watched write: ranges, txns, other calls")
	before = rpcs.snapshot()
	res, err = w.Apply(ctx, "a", map[string]any{"replicas": 4}, store.WithForce())
	require.NoError(t, err)
	require.True(t, res.Changed)
	after = rpcs.snapshot()
	require.Equal(t, [3]int64{0, 1, 0}, [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]},
		"an Apply of a changed value after the Store's own write: ranges, txns, other calls")

	// An apply that the memory says changes nothing is confirmed by a read,
	// as someone the Store did not see may have written since.
	before = rpcs.snapshot()
	res, err = w.Apply(ctx, "a", map[string]any{"replicas": 4})
	require.NoError(t, err)
	require.False(t, res.Changed)
	after = rpcs.snapshot()
	require.Equal(t, [3]int64{1, 0, 0}, [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]},
		"an Apply that changes nothing: ranges, txns, other calls")
	got, err := other.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, 4, got.Spec.Replicas)
	require.Equal(t, 3, got.Status.Ready)
	require.Equal(t, "patched", got.Status.Message)
}

// BenchmarkWrite compares a typed Update, UpdateStatus, Apply and
// ApplyStatus of a ~0.5 KB object through etcdstore with what they come down
// to: a raw clientv3 Txn that compares the key's mod revision and puts the same bytes, on the same
// embedded etcd member. The target is typed ≤ 1.2× raw-txn; update-no-memory
// is the Update of a Store without its memory of values (WithLastValues(0)),
// which reads before it writes. Besides wall-clock ns/op, each reports
// cpu-ns/op, the process CPU time per write (etcd's server included, as it
// runs in the process), which a loaded machine distorts less.
//
//	cd store/etcdstore && GOWORK=off go test -run '^$' -bench Write -benchtime 2000x ./
func BenchmarkWrite(b *testing.B) {
	c := startCluster(b, 1)
	cli := c.client()
	ctx := b.Context()
	// A sub-benchmark runs more than once: each run writes its own object.
	var runs int
	create := func(b *testing.B, st *store.Store[writeSpec, writeStatus]) *writeObject {
		runs++
		obj := writeTestObject(fmt.Sprint("a", runs))
		_, err := st.As("bench").Create(ctx, obj)
		require.NoError(b, err)
		return obj
	}
	newStore := func(prefix string, opts ...store.Option) *store.Store[writeSpec, writeStatus] {
		eb, err := etcdstore.New(cli, etcdstore.WithPrefix(prefix))
		require.NoError(b, err)
		st, err := store.New[writeSpec, writeStatus](eb, "Widget", opts...)
		require.NoError(b, err)
		return st
	}

	b.Run("raw-txn", func(b *testing.B) {
		obj := create(b, newStore("/raw/"))
		key := "/raw/Widget/" + obj.Meta.Name
		resp, err := cli.Get(ctx, key)
		require.NoError(b, err)
		value, rev := string(resp.Kvs[0].Value), resp.Kvs[0].ModRevision
		b.Logf("stored value: %d bytes", len(value))
		b.ReportAllocs()
		defer reportCPU(b, processCPU())
		for b.Loop() {
			tr, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).Then(clientv3.OpPut(key, value)).Commit()
			if err != nil || !tr.Succeeded {
				b.Fatal(err, tr)
			}
			rev = tr.Header.Revision
		}
	})
	update := func(st *store.Store[writeSpec, writeStatus]) func(*testing.B) {
		return func(b *testing.B) {
			obj, w := create(b, st), st.As("bench")
			b.ReportAllocs()
			defer reportCPU(b, processCPU())
			for b.Loop() {
				obj.Spec.Replicas++
				if _, err := w.Update(ctx, obj); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("update", update(newStore("/update/")))
	b.Run("update-status", func(b *testing.B) {
		st := newStore("/status/")
		obj, w := create(b, st), st.As("bench")
		b.ReportAllocs()
		defer reportCPU(b, processCPU())
		for b.Loop() {
			obj.Status.Ready++
			if _, err := w.UpdateStatus(ctx, obj); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update-no-memory", update(newStore("/nomemory/", store.WithLastValues(0))))
	b.Run("apply", func(b *testing.B) {
		st := newStore("/apply/")
		obj, w := create(b, st), st.As("bench")
		cfg := obj.Spec
		b.ReportAllocs()
		defer reportCPU(b, processCPU())
		for b.Loop() {
			cfg.Replicas++
			if _, err := w.Apply(ctx, obj.Meta.Name, cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("apply-status", func(b *testing.B) {
		st := newStore("/applystatus/")
		obj, w := create(b, st), st.As("bench")
		status := obj.Status
		ready := []store.Condition{{Type: "Ready", Status: store.ConditionTrue}}
		b.ReportAllocs()
		defer reportCPU(b, processCPU())
		for b.Loop() {
			status.Ready++
			if _, err := w.ApplyStatus(ctx, obj.Meta.Name, status, ready); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// reportCPU adds a cpu-ns/op metric: process CPU time per iteration since
// start.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 && start > 0 {
		b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
	}
}
