// Package etcdstore runs steady on etcd, the store Kubernetes itself
// reconciles against, for controllers that outgrow one process.
//
// Backend implements kv.Backend over an etcd client: keys live under a
// configurable prefix, a Txn is one etcd transaction (creates compare
// create_revision == 0, updates and deletes compare mod_revision, and a
// leadership fence is one more compare on the election key), List pages are
// range reads pinned to one revision, and Watch resumes from a revision with
// previous values and progress notifications. A compaction surfaces as
// store.ErrExpired, which makes the informer cache relist. Values over
// kv.MaxValueSize are refused before they reach etcd. Every call to etcd
// is bounded by a call timeout (WithCallTimeout, DefaultCallTimeout 15 s)
// even when the caller's ctx has no deadline: without quorum, or with no
// member reachable, it fails with store.ErrUnavailable instead of waiting
// inside the etcd client's retries for ever.
//
// Elector implements lease.Elector on an etcd lease: the leader holds the
// election key while its lease lives, its Fence is that key's create
// revision, and its term ends at 2/3 of the TTL without an acknowledged
// keep-alive, before etcd can hand the key to another candidate, or when
// the election key is deleted or overwritten. Its Wait waits for the terms
// whose campaign ctx ended to revoke their leases, never for a live term.
//
// A closed etcd client gives store.ErrClosed: calls fail with it, and
// running watches end with it.
//
// This is a separate Go module so that users of the root module do not
// inherit etcd's and gRPC's dependencies.
package etcdstore
