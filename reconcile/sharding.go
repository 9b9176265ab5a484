package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
)

// WithSharding makes the Loop one replica of a sharded Loop: it works only
// on the keys of the shards s assigns to it, each reconcile's ctx carries its
// key's shard fence (so a write made after the shard moved fails with
// store.ErrFenced), and the reconcile's ctx ends with cause shard.ErrMoved
// when the shard moves away. The Loop's term is s's membership: it joins
// when Run starts (after its sources synced), lists and reconciles the
// keys of each shard it takes, and releases its shards before Run returns
// (even when the drain timed out: Run then returns within twice the TTL).
//
// A key's shard is shard.Of of its text: the string itself, String() for a
// fmt.Stringer, else fmt.Sprint. Keys must print the same in every replica
// (no pointers). Keys added (Add, AddLow, hints) that another replica owns
// are dropped: that replica's sources see them. Give each replica a
// Sharder with its own identity, and the same name and shard count.
//
// To cache only this replica's shards' objects, give the cache of the
// Loop's kind cache.WithKeep(s.Caches): the Loop lists it again
// (cache.Cache.Refilter) whenever it takes shards, before reconciling any of
// their keys, and drops the objects of shards it lets go from memory
// (cache.Cache.Prune). Without it each replica caches the whole kind.
// WithSharding and WithElector exclude each other; s must not be nil.
func WithSharding(s *shard.Sharder) Option {
	return optionFunc(func(c *config) error {
		if s == nil {
			return invalid("nil sharder")
		}
		c.sharder = s
		return nil
	})
}

// SetSharding makes l, which has not run, one replica of a sharded Loop,
// as WithSharding(s) given to New would: manager.WithSharding shards every
// Loop it is given this way. It returns an error wrapping ErrInvalidOption
// for a nil s or a Loop already given a sharder or an elector (they exclude
// each other), and ErrAlreadyRunning once Run was called. Call it before
// Run: a Run called while it runs returns ErrAlreadyRunning.
func (l *Loop[K]) SetSharding(s *shard.Sharder) error {
	if s == nil {
		return invalid("loop %s: nil sharder", l.name)
	}
	// Holding started keeps Run from starting while cfg changes.
	if !l.started.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer l.started.Store(false)
	switch {
	case l.cfg.sharder != nil:
		return invalid("loop %s: already sharded (WithSharding): give it one sharder", l.name)
	case l.cfg.elector != nil:
		return invalid("loop %s: has an elector (WithElector): a sharded Loop's replicas all work, each on its shards; remove WithElector", l.name)
	}
	l.cfg.sharder = s
	return nil
}

// keyText is the text a key is sharded by.
func keyText[K comparable](k K) string {
	switch v := any(k).(type) {
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	default:
		return fmt.Sprint(k)
	}
}

// owns reports whether this replica works on key now: always, unless the
// Loop is sharded.
func (l *Loop[K]) owns(key K) bool {
	sh := l.cfg.sharder
	return sh == nil || sh.Owns(sh.Of(keyText(key)))
}

// join is runTerm's campaign for a sharded Loop: it waits for membership.
func (l *Loop[K]) join(runCtx context.Context) (context.Context, error) {
	return l.cfg.sharder.Join(runCtx)
}

// serveShards runs the sharder for term t: the caches of its sources
// follow the shards held (a cache filtered by shard.Sharder.Caches lists a
// taken shard's objects before any of its keys is reconciled, and drops a
// released shard's from memory), and each round's new shards have their keys listed
// into t's queue.
func (l *Loop[K]) serveShards(t *term[K]) {
	sh := l.cfg.sharder
	sh.Serve(t.ctx, shard.Hooks{
		Fill:     func([]int) { l.refilterCaches(t.ctx) },
		Released: func([]int) { l.pruneCaches(t.ctx) },
		Gained: func(gained []int) {
			set := make(map[int]bool, len(gained))
			for _, i := range gained {
				set[i] = true
			}
			l.log.LogAttrs(t.ctx, slog.LevelDebug, "shards taken", slog.String("controller", l.name), slog.Any("shards", gained))
			l.enqueueFiltered(t, true, func(k K) bool { return set[sh.Of(keyText(k))] })
		},
	})
}

// refilterCaches makes the caches of the Loop's cache sources hold what
// their WithKeep function accepts now (cache.Cache.Refilter; a cache
// without one does nothing). It waits for each until ctx ends: a shard
// whose objects are not cached yet must not open, or its reconciles would
// take them for deleted.
func (l *Loop[K]) refilterCaches(ctx context.Context) {
	for _, s := range l.sources {
		r, ok := s.(interface{ refilter(context.Context) error })
		if !ok {
			continue
		}
		if err := r.refilter(ctx); err != nil && ctx.Err() == nil {
			l.log.LogAttrs(ctx, slog.LevelWarn, "cache not refiltered for the shards moved", slog.String("controller", l.name),
				slog.String("source", fmt.Sprint(s)), slog.Any("error", err))
		}
	}
}

// pruneCaches drops from the caches of the Loop's cache sources the
// objects their WithKeep function rejects now (cache.Cache.Prune): shards
// let go need no listing, their objects are in memory.
func (l *Loop[K]) pruneCaches(ctx context.Context) {
	for _, s := range l.sources {
		p, ok := s.(interface{ prune(context.Context) error })
		if !ok {
			continue
		}
		if err := p.prune(ctx); err != nil && ctx.Err() == nil {
			l.log.LogAttrs(ctx, slog.LevelWarn, "cache not pruned of the shards let go", slog.String("controller", l.name),
				slog.String("source", fmt.Sprint(s)), slog.Any("error", err))
		}
	}
}

// processSharded runs process for key under its shard's claim: a key whose
// shard this replica does not own (any more) is dropped; otherwise the
// reconcile's ctx carries the shard's fence and ends when the shard moves.
func (l *Loop[K]) processSharded(t *term[K], ctx context.Context, rec *recorder, key K, start time.Duration) time.Duration {
	sh := l.cfg.sharder
	i := sh.Of(keyText(key))
	lost, fence, ok := sh.Enter(i)
	if !ok {
		return -1
	}
	defer sh.Exit(i)
	sctx, cancel := context.WithCancelCause(store.WithFence(ctx, fence))
	defer cancel(nil)
	stop := context.AfterFunc(lost, func() { cancel(shard.ErrMoved) })
	defer stop()
	return l.process(t, sctx, rec, key, start)
}

// shardMoved reports whether ctx ended because its shard moved.
func shardMoved(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), shard.ErrMoved)
}

// shardFenced returns ctx carrying key's shard fence, for the Loop's own
// writes (Stalled, Paused) in a sharded Loop.
func (l *Loop[K]) shardFenced(ctx context.Context, key K) context.Context {
	sh := l.cfg.sharder
	if sh == nil {
		return ctx
	}
	return store.WithFence(ctx, sh.Fence(sh.Of(keyText(key))))
}
