// Package gc collects garbage: it deletes the dependents whose controller
// owner is gone. It is itself a reconcile.Loop, built by New and run like any
// other, usually on the leader with the controllers' elector.
//
// # What is garbage
//
// A dependent is an object with an OwnerRef whose Controller is set. It is
// garbage when no object of that owner's Kind and Name with that UID exists.
// Matching is by UID, so an owner deleted and recreated under the same name
// does not adopt the old dependents: they point at the old UID, and they are
// deleted. Only the controller owner counts; other OwnerRefs are ignored.
// A dependent whose controller owner has no UID, or a Kind that New was not
// given an Owner for, is never deleted. An owner whose deletion was requested
// still exists, so its dependents stay until it is gone.
//
// # How it decides
//
// Nothing is remembered between passes. Each reconcile of a dependent
// re-derives the decision:
//
//  1. from the caches: the dependent's controller owner is looked up by name
//     in the owner kind's cache and compared by UID; a live owner ends the
//     pass at no store cost (the steady state);
//  2. from the store: otherwise the dependent and then its owner are read
//     afresh, so a lagging owner cache never causes a deletion;
//  3. the dependent is deleted with store.WithRevision of that fresh read, so
//     a dependent adopted or changed meanwhile is not, and the next pass
//     decides again.
//
// Hints come from the dependents' cache (every dependent, on every change,
// on every resync and at the start of every leadership term) and from each
// owner kind's cache: a deleted owner wakes the dependents filed under its UID
// in the cache.IndexOwnerUID index. A GC that crashes (or loses leadership)
// mid-pass therefore finishes the job after a restart, since every dependent
// is a key again.
//
// # Finalizers
//
// The GC only calls Delete. A dependent with finalizers is then marked
// (Meta.DeletionRequested) and goes when its last finalizer is removed by
// whoever owns it; the GC does not touch finalizers and does not delete a
// marked dependent again.
//
// # Failures and leadership
//
// A failed read or delete is returned to the Loop, which retries the key with
// its backoff (and reports it Stalled after repeated failures, if the Loop
// has a ConditionWriter; New gives it none). With reconcile.WithElector the GC
// works only while it leads, and its deletes carry the term's fence: a
// deposed GC's delete is rejected by the store (store.ErrFenced), whatever
// its caches say. When Run's ctx ends, the Loop stops as every Loop does.
//
// # Types
//
// New is generic over the dependent's Spec and Status types; owners are given
// as type-erased Owner views (OwnerKind), so one GC can serve dependents
// owned by several kinds.
package gc
