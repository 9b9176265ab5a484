package store_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// DeploySpec makes Replicas optional, so a manager that leaves it nil
// neither sets nor claims it.
type DeploySpec struct {
	Image    string `json:"image,omitempty"`
	Replicas *int   `json:"replicas,omitempty"`
}

type DeployStatus struct {
	Ready int `json:"ready"`
}

// Two managers apply the fields they care about; a third's attempt to change
// a field it does not own is reported, not silently applied.
func ExampleWriter_Apply() {
	ctx := context.Background()
	deploys, _ := store.New[DeploySpec, DeployStatus](memstore.New(), "Deploy")
	three, five := 3, 5

	res, _ := deploys.As("user").Apply(ctx, "web", DeploySpec{Image: "web:1"})
	fmt.Println("created:", res.Created, "generation:", res.Generation)
	res, _ = deploys.As("autoscaler").Apply(ctx, "web", DeploySpec{Replicas: &three})
	fmt.Println("generation:", res.Generation)

	_, err := deploys.As("ops").Apply(ctx, "web", DeploySpec{Replicas: &five})
	var conflict *ownership.ConflictError
	fmt.Println(errors.As(err, &conflict), errors.Is(err, store.ErrConflict))
	fmt.Println(conflict.Conflicts[0])

	// Applying the same configuration again writes nothing.
	again, _ := deploys.As("user").Apply(ctx, "web", DeploySpec{Image: "web:1"})
	fmt.Println("changed:", again.Changed)

	obj, _ := deploys.Get(ctx, "web")
	fmt.Println(obj.Spec.Image, *obj.Spec.Replicas)
	// Output:
	// created: true generation: 1
	// generation: 2
	// true false
	// .spec.replicas is managed by "autoscaler" (Apply)
	// changed: false
	// web:1 3
}

// The reconcile Loop owns the Stalled condition and the user's reconciler
// owns Ready: each applies only its own, and neither removes the other's.
func ExampleWriter_ApplyStatus() {
	ctx := context.Background()
	deploys, _ := store.New[DeploySpec, DeployStatus](memstore.New(), "Deploy")
	_, _ = deploys.As("user").Apply(ctx, "web", DeploySpec{Image: "web:1"})

	_, _ = deploys.As("reconciler").ApplyStatus(ctx, "web", DeployStatus{Ready: 3},
		[]store.Condition{{Type: "Ready", Status: store.ConditionTrue, Reason: "AllReplicasReady"}})
	_, _ = deploys.As("loop").ApplyStatus(ctx, "web", nil,
		[]store.Condition{{Type: "Stalled", Status: store.ConditionFalse, Reason: "Progressing"}})

	obj, _ := deploys.Get(ctx, "web")
	for _, c := range obj.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason)
	}
	fmt.Println("ready:", obj.Status.Ready, "generation:", obj.Meta.Generation)
	// Output:
	// Ready True AllReplicasReady
	// Stalled False Progressing
	// ready: 3 generation: 1
}
