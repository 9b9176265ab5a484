//go:build linux

package main

import (
	"errors"
	"fmt"

	"github.com/steady-go/steady/store"
)

// The two kinds of the example. A ProcessSet is what the user wants: N
// copies of a command. The set controller turns it into N Instance objects,
// each controlled by the set (OwnerRef with Controller set), and the instance
// controller makes each Instance a running OS process.
type (
	ProcessSetSpec struct {
		Command  []string `json:"command"`
		Replicas int      `json:"replicas"`
	}
	ProcessSetStatus struct {
		// Running is the number of instances with a live process.
		Running int `json:"running"`
	}
	InstanceSpec struct {
		Set     string   `json:"set"`
		Index   int      `json:"index"`
		Command []string `json:"command"`
	}
	InstanceStatus struct {
		// PID is the instance's process, as last observed.
		PID int `json:"pid,omitempty"`
	}

	ProcessSet = store.Object[ProcessSetSpec, ProcessSetStatus]
	Instance   = store.Object[InstanceSpec, InstanceStatus]
)

const (
	setKind      = "ProcessSet"
	instanceKind = "Instance"
	// stopFinalizer keeps an Instance until its process is gone.
	stopFinalizer = "processes.example/stop"
	// maxReplicas bounds a ProcessSet: this is a demo on someone's machine.
	maxReplicas = 50
)

// validate reports a spec no reconcile can fix.
func (s ProcessSetSpec) validate() error {
	if len(s.Command) == 0 || s.Command[0] == "" {
		return errors.New("empty command")
	}
	if s.Replicas < 0 || s.Replicas > maxReplicas {
		return fmt.Errorf("replicas %d: want 0 to %d", s.Replicas, maxReplicas)
	}
	return nil
}

// instanceName is the deterministic name of a set's i-th instance.
func instanceName(set string, i int) string { return fmt.Sprintf("%s-%d", set, i) }
