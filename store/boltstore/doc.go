// Package boltstore is a durable kv.Backend in one file on one machine,
// built on bbolt (go.etcd.io/bbolt, etcd's own storage engine, pure Go). It
// is for desired state that must survive a restart of the process where
// there is no server to run: an edge box, a CI runner, a small internal
// service. It is not shared between machines: for more than one machine,
// leader election and failover, run on etcd (store/etcdstore).
// Sharded Loops (package shard, reconcile.WithSharding) split keys among
// replica processes that share one store: boltstore, locked by one process,
// cannot host them; use etcdstore.
//
// Open takes the file, locks it for the process (a second opener waits
// WithLockTimeout and gets ErrLocked), checks it whole, and continues at its
// last revision; Close releases it. A Store passes store/storetest.
//
// Durability. A Txn returns only after its write is committed and fsynced,
// so an acknowledged write survives kill -9 and a crash of the machine; a
// write whose Txn did not return is either wholly there after a restart or
// not at all. Concurrent Txns share one commit and one fsync (group commit):
// throughput grows with the number of writers while a lone writer waits
// for nothing but its own fsync.
//
// Revisions and history. The store revision is kept in the file: it
// continues across restarts and never repeats. The file also keeps the last
// WithHistorySize writes (10,000 by default), each with the key's value before
// it, so a Watch resumes from a revision seen before a restart, and a
// paginated List stays pinned to its first page's revision. A background
// goroutine compacts the history once it outgrows WithHistorySize by an eighth;
// a Watch from, or a List pinned to, a compacted revision gets
// store.ErrExpired, and so does a watch whose receiver fell so far behind
// that its backlog was compacted: it is never silently truncated.
//
// Damage. Every record carries a CRC-32C; Open checks both of bbolt's meta
// pages, the page tree, every record and the agreement of history and
// revision, and refuses a truncated, damaged or foreign file with an error
// wrapping ErrCorrupt, never a panic. This check reads the whole file, so
// Open takes time in proportion to its size. bbolt would open a file whose
// newest meta page is damaged at the transaction before it; boltstore
// refuses it instead, because that would silently lose the last write. A
// process killed at any point never leaves such a page (the kernel holds
// every write it made); a power failure during the meta page write of an
// unacknowledged transaction can, and then the file needs repair (bbolt's
// command-line tool, or restoring a copy) before it opens.
//
// Costs (bench_test.go compares them with memstore's): a write costs one
// fsync, shared with the writers committing at the same time; a Get or a
// List is a read transaction on the memory-mapped file, with the values
// copied out.
package boltstore
