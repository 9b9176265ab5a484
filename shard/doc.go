// Package shard splits one Loop's keys among replicas, with a store-enforced
// fence per shard.
//
// # Design
//
// Keys map to S shards (Of: FNV-1a of the key, modulo S). S is fixed per
// Loop (WithShards, default DefaultShards) and every replica must use the
// same S: each member records its S, and a replica that sees another S
// holds no shards and logs at Error until the fleet agrees.
//
// Membership is a lease per replica: the key _shards/NAME/members/ID,
// created by the replica, renewed by rewriting it (conditioned on its
// ModRevision), and judged expired by the others when its ModRevision has
// not changed for the TTL it declares, timed on their own clocks. The member
// key's CreateRevision is the replica's epoch. A replica stops all work at
// 2/3 of the TTL after its last successful renewal began, before any other
// may consider it gone, exactly like store/lease's leader.
//
// Assignment is computed, not coordinated: every replica lists the live
// members and assigns the shards by rendezvous hashing with bounded loads
// (Assign: pairs (member, shard) by decreasing hash, each member capped at
// ceil(1.1·S/N) shards). Replicas that see the same member list agree with
// no leader. A join or a leave moves about S/(N+1) shards (within 1.2·S/N
// per change in 98% of member sets up to N=9 with S=256, 85% at N=10:
// TestAssignMovesFewShardsAndBalances), and no replica owns more than 10%
// over its share, which plain rendezvous hashing exceeds by 20–60%. A
// leader-elected assigner would add a second lease, a published assignment
// and a failure mode (a stuck assigner) for the same result; a hash ring
// needs virtual nodes to balance as well. Replicas that briefly disagree on
// the member list cannot both own a shard: ownership itself is a store key.
//
// A shard is owned through its key _shards/NAME/shard/I, created by the
// owner (conditioned on its absence and on the owner's member key still
// being at its epoch) and never renewed: it names its holder and the holder's
// epoch, and it is live while that member key is. The shard key's
// CreateRevision is the shard's fence (store.Fence): each reconcile of a key
// in the shard runs with a ctx carrying it, so once another replica has
// recreated the key, every late write of the old owner fails with
// store.ErrFenced. One renewal per replica keeps all its shards, whatever S.
//
// Handover: a replica that is no longer assigned a shard cancels the
// reconciles of its keys, waits for them to return (at most the TTL), then
// deletes the shard key. The new owner creates the key only once it is gone
// (released, or deleted by anyone once its holder's member key expired), and
// then lists the shard's keys and reconciles them. After a crash, its shards
// move between the TTL and the TTL plus two retry periods after the crashed
// replica's last renewal (TestCrashedReplicaShardsMoveWithinTTLPlusTwoRetries):
// WithRetryPeriod(500*time.Millisecond) bounds it by the TTL plus 1s. So no key is reconciled
// by two replicas at once unless a reconcile outlives its replica's lease
// (a partition), and then its writes are fenced.
//
// A Sharder serves one Loop: reconcile.WithSharding. It works on any
// store.Backend that several processes share (etcdstore); memstore for
// tests with replicas in one process. boltstore is one process's file.
package shard
