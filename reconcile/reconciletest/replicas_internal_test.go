package reconciletest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

type mspec struct {
	N int `json:"n"`
}

type mstatus struct {
	N int `json:"n"`
}

func mutantReplicas(off int) Replicas[mspec, mstatus] {
	return Replicas[mspec, mstatus]{
		Objects: 40,
		Object: func(int, *rand.Rand) *store.Object[mspec, mstatus] {
			return &store.Object[mspec, mstatus]{Spec: mspec{N: 1}}
		},
		Change: func(_ string, rng *rand.Rand) any { return map[string]any{"n": 1 + rng.IntN(9)} },
		Setup: func(st *store.Store[mspec, mstatus], c *cache.Cache[mspec, mstatus]) (reconcile.Reconciler[string], error) {
			return reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
				obj, ok := c.Get(key)
				if !ok {
					return reconcile.Result{}, nil
				}
				time.Sleep(20 * time.Millisecond)
				_, err := st.As("ctl").ApplyStatus(ctx, key, mstatus{N: obj.Spec.N + off}, nil)
				return reconcile.Result{}, store.IgnoreNotFound(err)
			}), nil
		},
		Converged: func(o *store.Object[mspec, mstatus]) error {
			if o.Status.N != o.Spec.N {
				return fmt.Errorf("spec %d status %d", o.Spec.N, o.Status.N)
			}
			return nil
		},
	}
}

// Each of RunReplicas's checks fails on a mutant: a reconciler that never
// converges, and replicas run without sharding (every replica works on every
// key, holding no shard).
func TestRunReplicasChecksCanFail(t *testing.T) {
	var wrong, unsharded replicasResult
	synctest.Test(t, func(t *testing.T) { wrong = simulateReplicas(t, mutantReplicas(1), 1) })
	if len(wrong.unconverged) == 0 {
		t.Error("a reconciler that writes the wrong status converged")
	}
	cfg := mutantReplicas(0)
	cfg.unsharded = true
	synctest.Test(t, func(t *testing.T) { unsharded = simulateReplicas(t, cfg, 1) })
	if len(unsharded.overlaps) == 0 {
		t.Error("unsharded replicas reconciled no key at the same time")
	}
	if len(unsharded.stale) == 0 {
		t.Error("unsharded replicas made no write the store accepted without the shard")
	}
}

// A write held by a cut link reaches the store after its caller's Txn
// returned, and a Backend retains neither the conds nor a value not
// handed over (kv.Backend): the late write is the one the caller made,
// whatever the caller did with its slices since.
func TestLinkLateWriteCopiesItsArguments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New()
		ctx := t.Context()
		rev, err := mem.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v0")})
		if err != nil {
			t.Fatal(err)
		}
		ln := &link{Backend: mem, note: func(string, kv.Write, int64, error) {}, id: "r1"}
		ln.setCut(true)
		conds := []kv.Cond{{Key: "k", Target: kv.ModRevision, Revision: rev}}
		val := []byte("v1")
		cctx, cancel := context.WithCancel(ctx)
		go cancel()
		if _, err := ln.Txn(cctx, conds, kv.Write{Kind: kv.WritePut, Key: "k", Value: val}); err == nil {
			t.Fatal("a write over a cut link returned before the link healed")
		}
		// The caller reuses its slices, as a Store reuses its conds.
		conds[0] = kv.Cond{Key: "other", Target: kv.ModRevision, Revision: 99}
		copy(val, "xx")
		ln.setCut(false)
		ln.late.Wait()
		got, err := mem.Get(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Value) != "v1" {
			t.Errorf("the late write stored %q, want %q (the conds and value the caller passed)", got.Value, "v1")
		}
	})
}
