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
// members and the shard keys, and computes the owners from both
// (Rebalance): each member's share is floor(S/N) or ceil(S/N); a member
// keeps the shards it holds up to its share (its highest rendezvous scores
// first), and the rest go by decreasing rendezvous score to the members
// below their share. Replicas that see the same listing agree with no
// leader, and a handover half done computes the same target, so listings
// taken at different moments of one handover agree. A join moves only the
// shards the joiner gets (at most ceil(S/(N+1)), within 1.2·S/N for every
// N from 1 to 32 with S=256), a leave only the leaver's, and no replica owns
// more than its share plus one (TestRebalanceMovesOnlyWhatAJoinOrLeaveMust).
// The computation needs memory in N + S, not N × S (65,536 shards among 100
// members: about 5 MB).
// Computing owners from the members alone cannot do both: plain rendezvous
// hashing leaves the busiest replica 1.2–1.6 times its share, and
// rendezvous with bounded loads (this package's first version) moved many
// more shards than the joiner gets whenever its integer cap dropped (most
// joins beyond 10 replicas broke 1.2·S/N). A leader-elected assigner would
// add a second lease, a published assignment and a failure mode (a stuck
// assigner) for the same result. Replicas that briefly disagree cannot both
// own a shard: ownership itself is a store key.
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
// Cache: no backend filters keys by shard, so a replica's cache of the
// Loop's kind holds the whole kind unless it is given
// cache.WithKeep(s.Caches), which keeps the objects of the shards this
// replica holds. A taken shard opens (Owns, Enter) only after Hooks.Fill
// returned, in which the Loop lists that cache again
// (cache.Cache.Refilter), so no reconcile reads the cache before it holds
// the shard's objects and takes one for deleted; a released shard's
// objects leave it from memory, with no listing (Hooks.Released,
// cache.Cache.Prune).
//
// A Sharder serves one Loop: reconcile.WithSharding, or
// manager.WithSharding, which gives each Loop of a Manager its own. It
// works on any kv.Backend that several processes share (etcdstore);
// memstore for tests with replicas in one process. boltstore is one process's file.
package shard
