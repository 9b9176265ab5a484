// Package lease chooses one leader among candidates and fences the writes of
// a deposed one.
//
// An Elector's Campaign blocks until the caller leads and returns a term
// context and the term's store.Fence. The term context carries the fence
// (store.FenceFrom), so every write the typed store makes with it includes
// the fence as a compare in the same Txn: once another candidate has taken
// over, the store itself rejects the old leader's writes with
// store.ErrFenced, whatever the old leader believes.
//
// A fence can be checked only in the backend that holds the leader key. A
// term's write to a store over another backend fails with store.ErrFenced,
// whose text says so; write there with store.WithoutFence(ctx), knowing that
// such writes are not fenced.
//
// The term context ends when the ctx given to Campaign ends, when renewal
// fails, or at the latest 2/3 of the lease TTL after the last successful
// renewal began, so a leader stops its work before any other candidate may
// consider the lease expired. Its context.Cause says why: ctx's cause, or an
// error wrapping ErrLost.
//
// StoreElector implements Elector on any kv.Backend with one leader key:
// acquiring creates the key, renewing rewrites it (keeping its
// CreateRevision, which is the fence), and releasing deletes it. Candidates
// time an unchanged key on their own clocks, so no two machines' clocks are
// ever compared.
package lease
