// Package kstatuscheck is a test-only module: it runs reconcile Loops on
// objects into the states an operator meets (converged, a spec not yet
// reconciled, Ready=False, failing until Stalled, a Terminal error,
// recovered, paused, deletion requested), and one object through every
// phase of its life (its first reconcile and a later one in flight, each
// reconciled, a new generation failing, then Stalled, fixed, Ready=False,
// Terminal, fixed, deletion requested); it reads each object as a
// Kubernetes resource (metadata.generation, metadata.deletionTimestamp,
// status.conditions, and status.observedGeneration as the highest
// ObservedGeneration of the conditions), computes its status with
// sigs.k8s.io/cli-utils' kstatus, and checks that it is the status
// expected and the one debugpage.Kstatus computes. It is a module of its
// own so that the root module does not depend on Kubernetes' libraries.
package kstatuscheck
