// Package store is steady's desired and observed state: an object model, a
// typed Store written once over a small Backend contract (package store/kv),
// and the errors both share.
//
// # Objects
//
// An Object[S, T] has Meta (identity and bookkeeping), a Spec S (what is
// wanted), a Status T (what was observed) and Conditions (framework-level
// observations keyed by type, so the reconcile Loop can own Stalled on any
// status type while a reconciler owns Ready).
//
// Kinds and names follow documented rules (New lists the kind rules, ValidateName the name rules: names
// are DNS-1123 subdomains). A name that breaks one is rejected with an
// error wrapping ErrInvalid whose text names the rule.
//
// # Storage layout
//
// An object is stored at the key prefix + kind + "/" + name (the prefix is ""
// unless WithKeyPrefix sets one, and always ends in "/") as the
// encoding/json encoding of its Object. Kinds and names contain no "/", and
// a Store reads only the keys directly under its prefix + kind + "/", so the
// key spaces of two Stores never overlap; keys that start with "_" belong to
// no Store (election keys live there). The value is
// {"metadata": Meta, "spec": S, "status": T, "conditions": [...]}. Values
// written before Meta's key was "metadata" hold it under "meta"; every
// decoder reads that too, and the object's next write stores the new form.
// A path naming a field of Meta is therefore .metadata.labels.app wherever
// steady shows one (diff.Diff of two objects, field ownership, change
// judges, oscillation reports).
// Meta.Revision is not encoded: it is the key's ModRevision, one store-wide
// monotonic counter, so revisions order all writes of a Backend.
//
// A value nests at most 10,000 JSON objects and arrays, the object's own
// included, as many as encoding/json decodes: a write of a Spec or Status
// nested deeper (9,999 levels of its own), or of an Apply configuration
// that is, fails with ErrInvalid before anything is encoded or stored, and
// so does one that holds itself. A stored value nested deeper (written by
// other means) does not decode: a *DecodeError, quarantined as any such
// value (see DecodeError).
//
// A versioned kind's value (see Versions) starts with "version" and may end
// with "preserved", the hub fields its version cannot hold:
// {"version": "v2", "metadata": ..., "spec": ..., "status": ...,
// "preserved": {"spec": ..., "status": ...}}. Its Meta.Managed is in the
// paths of its version. Store.Migrate rewrites values at the storage
// version and keeps its checkpoint under "_migrations/" + prefix + kind.
//
// # Reads and writes
//
// Store.Get, Store.List (label selector, pagination, and the revision the
// listing reflects) and Store.Watch (from a revision, ending in ErrExpired
// rather than skipping events) read. Writes go through a manager-bound handle,
// st.As(manager), and every write is a single Backend Txn guarded by a
// precondition on the object's key:
//
//   - Create: the key must not exist (else ErrAlreadyExists).
//   - Update: Meta and Spec, at the revision the caller read (else
//     ErrConflict). Generation moves only when the spec does.
//   - UpdateStatus: Status and Conditions, guarded by the UID and the spec
//     generation they were computed from and by the status they were read
//     with (Meta.StatusGeneration); writes that leave both spec and status
//     alone (labels, finalizers) do not conflict with it. This is
//     spec/status separation without lost status updates. A status
//     computed from an earlier read (a cached object) is written with
//     WithObserved of that read's Meta, for UpdateStatus and ApplyStatus
//     alike: it lands on that object at that spec, or nowhere.
//   - Delete: with finalizers it only marks the object (DeletionRequested);
//     removing the last finalizer deletes it.
//
// A write made with a ctx carrying a leadership Fence (WithFence; store/lease
// hands them out) adds the fence to the same Txn, so the backend itself
// rejects a deposed leader's write with ErrFenced. Every write stamps
// Meta.LastWrite with its manager and operation, so watchers can tell who
// wrote what. Writes that would change nothing write nothing.
//
// A stale read therefore produces a rejected write, never a lost update:
// re-read and retry on ErrConflict (and only on it). An Update or
// UpdateStatus based on an object the Store itself read or wrote last (a
// cache's, or the result of the previous write) is one conditional Txn, with
// no read before it, and so is an Apply, ApplyStatus or Delete of a key the
// Store remembers, when it changes something (see WithLastValues).
//
// # Field ownership and apply
//
// Writer.Apply and Writer.ApplyStatus are server-side apply, through package
// ownership: a manager declares the fields it wants and the store merges
// them with the fields other managers own, re-reading and merging again if
// another write lands first. Changing a field someone else owns is a
// *ownership.ConflictError listing who owns what (not ErrConflict: retrying
// it never helps), unless WithForce is given. An apply that changes nothing
// writes nothing.
//
// Meta.Managed records, per manager, the fields it owns, on two sides kept
// apart as in Kubernetes: the spec side (metadata labels, annotations,
// owners and finalizers, and the spec; paths like .spec.replicas or
// .metadata.labels.app) and the status side (.status... and conditions,
// keyed by type: .conditions[type="Ready"]). Every write maintains it:
// Create, Update and UpdateStatus record the fields they changed as owned by
// their manager (ownership.Update), so applies, and the reconcile Loop's
// own-write and oscillation checks, see who changed what. Merge strategies
// come from the `steady:"..."` struct tags of S and T (ownership.SchemaFor).
//
// # Backends
//
// A Store runs over a kv.Backend: a versioned key-value space with Get, a
// paginated List, a conditional single-key Txn whose conditions may name any
// key, and Watch. Package store/kv holds that contract and its raw-key
// names (kv.KeyValue, kv.List, kv.Event, kv.Cond, kv.Write); this package
// has the typed API controllers use (ListOptions and List[S, T] for
// Store.List, Event[S, T] with its EventType for Store.Watch).
// store/memstore is the embedded implementation; store/storetest is the
// conformance suite every implementation runs, including the typed
// semantics above (storetest.RunTyped). The sentinel errors a Backend
// returns are this package's: errors.Is(err, ErrNotFound) holds for both.
//
// The informer that keeps a typed copy of a kind in memory is package
// store/cache.
package store
