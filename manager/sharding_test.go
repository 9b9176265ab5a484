package manager_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

const testShards = 16

func shardOpts() []shard.Option {
	return []shard.Option{shard.WithShards(testShards), shard.WithTTL(3 * time.Second), shard.WithRetryPeriod(500 * time.Millisecond)}
}

// replica is one process of a sharded controller: a Manager running the
// Loops "deployer" and "auditor" over the same keys.
type replica struct {
	id    string
	m     *manager.Manager
	loops map[string]*reconcile.Loop[string]
	stop  func() error
}

// reconciled records, per Loop and key, the replicas that reconciled it
// and the fence its reconcile carried.
type reconciled struct {
	mu     sync.Mutex
	by     map[string]map[string]bool // "loop/key" → replicas
	fences map[string]store.Fence     // "loop/key" → last fence
}

func startReplica(t *testing.T, b kv.Backend, id string, rec *reconciled, keys []string) *replica {
	t.Helper()
	rp := &replica{id: id, m: manager.New(manager.WithSharding(b, id, shardOpts()...)), loops: map[string]*reconcile.Loop[string]{}}
	for _, name := range []string{"deployer", "auditor"} {
		r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
			f, _ := store.FenceFrom(ctx)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			k := name + "/" + key
			if rec.by[k] == nil {
				rec.by[k] = map[string]bool{}
			}
			rec.by[k][id] = true
			rec.fences[k] = f
			return reconcile.Result{}, nil
		})
		l, err := reconcile.New(name, r, keySet(keys...))
		require.NoError(t, err)
		require.NoError(t, rp.m.AddLoop(l))
		rp.loops[name] = l
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rp.m.Run(ctx) }()
	rp.stop = func() error { cancel(); return <-done }
	return rp
}

// One option shards every Loop of a Manager: each Loop gets its own
// Sharder named after it, so the replicas split each Loop's keys, each
// reconcile carries its key's shard fence under that Loop's name, and a
// replica that stops hands its shards of every Loop to the others.
func TestManagerWithShardingShardsEveryLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		rec := &reconciled{by: map[string]map[string]bool{}, fences: map[string]store.Fence{}}
		keys := make([]string, 64)
		for i := range keys {
			keys[i] = fmt.Sprint("k", i)
		}
		a := startReplica(t, mem, "a", rec, keys)
		b := startReplica(t, mem, "b", rec, keys)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.NoError(t, a.m.Ready())
		require.NoError(t, b.m.Ready())
		// a held every shard before b joined; from now on each key is
		// reconciled only where its shard settled.
		rec.mu.Lock()
		clear(rec.by)
		rec.mu.Unlock()
		for _, rp := range []*replica{a, b} {
			for _, l := range rp.loops {
				for _, k := range keys {
					l.Add(k)
				}
			}
		}
		synctest.Wait()

		for _, name := range []string{"deployer", "auditor"} {
			owner := map[int]string{}
			for _, rp := range []*replica{a, b} {
				info := rp.loops[name].Info().Sharding
				require.NotNil(t, info, "%s on %s is sharded", name, rp.id)
				require.Equal(t, rp.id, info.Identity)
				require.NotEmpty(t, info.Owned, "%s on %s owns shards", name, rp.id)
				for _, i := range info.Owned {
					require.NotContains(t, owner, i, "shard %d of %s owned twice", i, name)
					owner[i] = rp.id
				}
			}
			require.Len(t, owner, testShards, "every shard of %s is owned", name)
			rec.mu.Lock()
			for _, k := range keys {
				i := shard.Of(k, testShards)
				require.Equal(t, map[string]bool{owner[i]: true}, rec.by[name+"/"+k], "%s/%s is reconciled by its shard's owner only", name, k)
				require.Equal(t, fmt.Sprintf("_shards/%s/shard/%d", name, i), rec.fences[name+"/"+k].Key, "%s/%s carries its shard's fence", name, k)
			}
			rec.mu.Unlock()
		}

		require.NoError(t, b.stop())
		time.Sleep(3 * time.Second)
		synctest.Wait()
		for _, name := range []string{"deployer", "auditor"} {
			require.Len(t, a.loops[name].Info().Sharding.Owned, testShards, "a took b's shards of %s", name)
		}
		require.NoError(t, a.stop())
	})
}

// WithSharding's misuse is an error from AddLoop and Run, never a panic
// and never a Loop running unsharded beside sharded replicas.
func TestManagerWithShardingRefusesMisuse(t *testing.T) {
	mem := memstore.New()
	newLoop := func(name string, opts ...reconcile.Option) *reconcile.Loop[string] {
		l, err := reconcile.New(name, nop, keySet("k"), opts...)
		require.NoError(t, err)
		return l
	}
	for _, tc := range []struct {
		name string
		m    *manager.Manager
		want string
	}{
		{"empty identity", manager.New(manager.WithSharding(mem, "")), "identity must be non-empty"},
		{"identity with a slash", manager.New(manager.WithSharding(mem, "ns/pod")), "identity must be non-empty without '/'"},
		{"no backend", manager.New(manager.WithSharding(nil, "a")), "backend must not be nil"},
		{"typed nil backend", manager.New(manager.WithSharding((*memstore.Store)(nil), "a")), "backend must not be nil"},
		{"bad shard option", manager.New(manager.WithSharding(mem, "a", shard.WithShards(0))), "shards must be between 1 and 65536"},
		{"with an elector", manager.New(manager.WithSharding(mem, "a"), manager.WithElector(&handElector{})), "WithSharding and WithElector exclude each other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.m.AddLoop(newLoop("deployer"))
			require.ErrorIs(t, err, reconcile.ErrInvalidOption)
			require.ErrorContains(t, err, tc.want)
			err = tc.m.Run(t.Context())
			require.ErrorIs(t, err, reconcile.ErrInvalidOption, "Run fails at once, even with no Loop added")
			require.ErrorContains(t, err, tc.want)
		})
	}

	t.Run("loops it cannot shard", func(t *testing.T) {
		m := manager.New(manager.WithSharding(mem, "a"))
		own, err := shard.New(mem, "deployer", "a")
		require.NoError(t, err)
		err = m.AddLoop(newLoop("deployer", reconcile.WithSharding(own)))
		require.ErrorIs(t, err, reconcile.ErrInvalidOption)
		require.ErrorContains(t, err, "already sharded")

		err = m.AddLoop(newLoop("deployer", reconcile.WithElector(m.Elector())))
		require.ErrorIs(t, err, reconcile.ErrInvalidOption, "a Loop still given the Manager's elector")
		require.ErrorContains(t, err, "remove WithElector")

		err = m.AddLoop(recLoop{newLoop("deployer"), &events{}})
		require.NoError(t, err, "a wrapper embedding a Loop is sharded")
		err = m.AddLoop(newLoop("deployer"))
		require.ErrorIs(t, err, reconcile.ErrInvalidOption)
		require.ErrorContains(t, err, `"deployer" added twice`)

		err = m.AddLoop(panickyRunner{})
		require.ErrorIs(t, err, reconcile.ErrInvalidOption)
		require.ErrorContains(t, err, "is not a *reconcile.Loop")
	})

	t.Run("a Loop already running", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			m := manager.New(manager.WithSharding(mem, "a"))
			l := newLoop("auditor")
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- l.Run(ctx) }()
			synctest.Wait()
			err := m.AddLoop(l)
			require.ErrorIs(t, err, reconcile.ErrAlreadyRunning)
			require.ErrorContains(t, err, `"auditor"`)
			cancel()
			require.NoError(t, <-done)
		})
	})
}
