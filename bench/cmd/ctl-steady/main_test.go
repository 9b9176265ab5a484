package main

import (
	"context"
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
