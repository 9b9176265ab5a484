package main

import (
	"context"
	"flag"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/bench/internal/ctlbench"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// statusManagers counts, per manager, the objects whose status it holds a record of.
func statusManagers(t *testing.T, st *store.Store[appSpec, appStatus], objects int) map[string]int {
	t.Helper()
	held := map[string]int{}
	for i := range objects {
		o, err := st.Get(context.Background(), ctlbench.Name(i))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range o.Meta.Managed {
			if m.Subresource == "status" {
				held[m.Manager]++
			}
		}
	}
	return held
}

func TestSetUpReconciledRecordsTheControllersStatus(t *testing.T) {
	for _, reconciled := range []bool{false, true} {
		st, err := store.New[appSpec, appStatus](memstore.New(), "App")
		if err != nil {
			t.Fatal(err)
		}
		const objects = 50
		if err := setUp(context.Background(), objects, st.As("user"), st.As("app-controller"), reconciled); err != nil {
			t.Fatal(err)
		}
		held := statusManagers(t, st, objects)
		want := 0
		if reconciled {
			want = objects
		}
		if held["app-controller"] != want || len(held) > 1 {
			t.Errorf("reconciled=%v: status records by manager %v, want app-controller on %d objects and no other", reconciled, held, want)
		}
		o, err := st.Get(context.Background(), ctlbench.Name(objects-1))
		if err != nil {
			t.Fatal(err)
		}
		if o.Spec.Replicas != 0 || o.Status.ReadyReplicas != 0 || o.Spec.Image != ctlbench.Image {
			t.Errorf("reconciled=%v: set-up left %+v %+v, want 0 replicas, ready 0, the benchmark's image", reconciled, o.Spec, o.Status)
		}
	}
}

func TestHoldIdleKeepsTheObjectsCachedUntilTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	const objects = 40
	c, err := holdIdle(ctx, &wg, objects)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != objects {
		t.Errorf("the idle cache holds %d objects, want %d", c.Len(), objects)
	}
	if o, ok := c.Get(ctlbench.Name(objects - 1)); !ok || o.Spec.Image != ctlbench.Image {
		t.Errorf("the idle cache's last object: %+v, %v; want the workload's", o, ok)
	}
	held := 0
	for _, name := range c.Keys() {
		o, _ := c.Get(name)
		for _, m := range o.Meta.Managed {
			if m.Manager == "app-controller" && m.Subresource == "status" {
				held++
			}
		}
	}
	if held != objects {
		t.Errorf("the controller holds the status of %d idle objects, want all %d (written once, as a reconciled object's)", held, objects)
	}
	cancel()
	wg.Wait() // goleak (TestMain) then finds no goroutine of the cache left
}

func TestRunRejectsANegativeIdle(t *testing.T) {
	cfg := ctlbench.Flags(flag.NewFlagSet("ctl-steady", flag.ContinueOnError))
	if err := run(cfg, historyFlags{bytes: -1}, -1, false, -1, 0); err == nil {
		t.Error("run with -idle -1: no error")
	}
}

func TestRunRejectsNegativeAllocBytes(t *testing.T) {
	cfg := ctlbench.Flags(flag.NewFlagSet("ctl-steady", flag.ContinueOnError))
	if err := run(cfg, historyFlags{bytes: -1}, -1, false, 0, -1); err == nil {
		t.Error("run with -alloc-bytes -1: no error")
	}
}

// -alloc-bytes allocates on the heap what it says, in 128-byte objects,
// rounded up: the compiler does not keep them on the stack.
func TestGarbageAllocatesOnTheHeap(t *testing.T) {
	for _, tc := range []struct{ n, objects int }{{0, 0}, {1, 1}, {128, 1}, {2048, 16}, {2049, 17}} {
		g := &garbage{n: tc.n}
		if got := testing.AllocsPerRun(100, g.alloc); got != float64(tc.objects) {
			t.Errorf("-alloc-bytes %d: %v heap allocations per reconcile, want %d", tc.n, got, tc.objects)
		}
	}
}
