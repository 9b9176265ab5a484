// Package objpath names the sections of a store.Object as diff.Path values,
// spelled as the object's JSON keys (store.Object's json tags): .metadata
// and its fields, .spec, .status and .conditions. store reports field
// changes with them and reconcile judges what a write touched with them, so
// the two name an object's parts alike.
//
// The paths are shared values: callers must not modify them (Path.Field and
// the other builders return new paths).
package objpath

import "github.com/steady-go/steady/diff"

// The object's top-level sections.
var (
	Metadata   = diff.Path{}.Field("metadata")
	Spec       = diff.Path{}.Field("spec")
	Status     = diff.Path{}.Field("status")
	Conditions = diff.Path{}.Field("conditions")
)

// The fields of .metadata that a write can change.
var (
	Labels            = Metadata.Field("labels")
	Annotations       = Metadata.Field("annotations")
	Owners            = Metadata.Field("owners")
	Finalizers        = Metadata.Field("finalizers")
	DeletionRequested = Metadata.Field("deletionRequested")
)

// StatusSide reports whether p is on the status side of an object (.status,
// .status.x, .conditions[...]): the part a status write changes.
func StatusSide(p diff.Path) bool { return p.HasPrefix(Status) || p.HasPrefix(Conditions) }
