// Package cache is steady's informer: an in-memory copy of one kind's
// objects, kept current from a store.Store by listing and then watching, with
// indexes and change handlers. Controllers read from a Cache, are told of
// changes by its handlers, and write through the Store.
//
// # Contract
//
// A Cache lists in pages, then watches from the listing's revision. When the
// watch ends, for whatever reason (ErrExpired when history is gone or the
// cache fell behind, a failure, a closed channel), it relists after a
// backoff delay and reports every difference between what it held and the
// new listing to its handlers as a synthetic addition, modification or
// deletion, so nothing that happened while it was blind is lost. A watch can
// also lose events without ending (a bug, a proxy); to repair that, the
// Cache relists every relist period (WithRelistPeriod; on by default,
// DefaultRelistPeriod, jittered; the cost is one paginated List of the kind)
// and reports the differences the same way, counting them as drift
// (DriftRepairs). The reconcile Loop's resync
// re-queues keys from the Cache; the relist is what makes the Cache right.
// A relist decodes only the objects written since the Cache last saw them:
// one it holds at the stored revision keeps its cached value, so a watch
// that fell far behind a writer costs a listing, not a decode of the kind.
//
// A stored value that is not an object of the kind (a *store.DecodeError)
// is quarantined, never fatal: the Cache skips it, keeps serving the rest
// of the kind (and the last valid object it held for that key, so a bad
// write never looks like a deletion), lists it in Quarantined, logs it once
// per key and revision (WithLogger) and counts it (Undecodable).
// manager.Manager.Ready names it.
//
// Revision says which store revision the Cache reflects, and WaitFor(ctx,
// rev) waits until it reflects a write that returned rev (read-your-writes).
// Progress notifications count, so waiting on a write to another kind ends
// too.
//
// Objects served by Get, List, ByIndex and ByLabel, and passed to handlers,
// are shared and read-only: copy one before changing it. Successive objects
// of one name may share memory too (unless the Cache has a transform): the
// object after a write holds, of the one before, what the write left byte
// for byte as it was, which its event does not decode again (the Spec of
// a status write, the Status of a spec write, the ownership records,
// labels, annotations and conditions), and of another client's write the
// strings, lists of strings and maps of strings of the Spec and Status
// that decode to what the one before holds. Objects of different names
// share too: their equal ownership records, labels and annotations, and
// the equal lists and maps of strings of their Spec and Status. So a change
// to one would show in others. The mutation detector catches code
// that changes one. It is opt-in, with
// WithMutationDetector or, for every Cache of a process, the environment
// variable STEADY_CACHE_MUTATION_DETECTOR=1 (MutationDetectorEnv), which
// steady's own tests set. Production code never pays for it.
//
// # Selection and transforms
//
// A Cache can hold part of a kind (WithSelector: labels, and metadata
// fields; a name prefix is filtered by the Backend, the rest on arrival; an
// object that stops matching reaches handlers as a deletion) and hold less
// of each object (WithTransform strips fields once per change, before the
// object is stored and before the mutation detector copies it). Handlers
// can tell the changes a listing found from the watch's events (Listing),
// which is how reconcile's predicates let every relist repair through.
//
// # Sources
//
// A Cache reads from a ListWatcher, which *store.Store implements; tests and
// fault injectors wrap one. When the ListWatcher is a *store.Store itself,
// it calls the Store's ListReusing (the relist above) and WatchWithoutPrev (its
// handlers get the object it held, never Event.Prev, so the previous state
// is not decoded) in place of List and Watch; a Store offers those two
// only to the project's packages (internal/storeaccess). A wrapper gets
// List and Watch, and full events.
package cache
