package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// ErrLost is the cause (see context.Cause) of a term that ended without its
// ctx ending: another candidate took the leader key over, or no renewal
// succeeded within 2/3 of the TTL. The leader must stop its work; the next
// Campaign may win again.
var ErrLost = errors.New("lease: leadership lost")

// StoreElector is an Elector that works on any kv.Backend. The leader
// holds one key whose value names it; the key's CreateRevision is the term's
// fence.
//
//   - Acquiring creates the key (a Txn conditioned on CreateRevision == 0).
//   - The leader renews every renew interval by rewriting the key,
//     conditioned on its ModRevision; CreateRevision, and so the fence, stays.
//   - A candidate that sees the key's ModRevision unchanged for the TTL the
//     leader recorded, timed on its own clock, deletes it (conditioned on that
//     ModRevision) and creates it anew: the new CreateRevision fails every
//     write still carrying the old fence.
//   - The leader's term context ends at 2/3 of the TTL after the start of its
//     last successful renewal, before any candidate can consider the lease
//     expired, so the leader stops before it is replaced.
//   - When the ctx given to Campaign ends, the key is deleted (unless
//     WithoutRelease), so another candidate can take over at once.
//
// A StoreElector runs one term at a time: Campaign waits for the previous
// term, including its release, to finish. It is safe for concurrent use,
// but concurrent Campaign calls on one StoreElector take turns.
type StoreElector struct {
	b   kv.Backend
	key string
	id  string
	cfg config

	turn chan struct{} // holds a token while a campaign or term is running

	mu   sync.Mutex
	last heldTerm // the latest term begun
}

// heldTerm is a term as Wait sees it: the ctx given to Campaign, and a
// channel closed once the term has ended and, if ctx ended, released.
type heldTerm struct {
	ctx  context.Context
	done chan struct{}
}

var _ Elector = (*StoreElector)(nil)

// New returns an elector for the leader key key, campaigning as identity.
// Every candidate for one leadership uses the same key and a distinct
// identity. Choose a key outside every Store's key space: one that starts
// with "_", such as "_leases/my-controller", which no object key does
// (store.New rejects key prefixes starting with "_"). A key such as
// "leader/my-controller" is the object "my-controller" of a Store of kind
// "leader", and that Store would report it as an undecodable value. It
// returns an error for a nil backend (a typed nil, such as a nil
// *memstore.Store, included; it wraps store.ErrInvalid), an empty key or
// identity, or invalid options.
func New(b kv.Backend, key, identity string, opts ...Option) (*StoreElector, error) {
	switch {
	case nilness.IsNil(b):
		return nil, fmt.Errorf("%w: lease: backend must not be nil (%T)", store.ErrInvalid, b)
	case key == "":
		return nil, errors.New("lease: key must not be empty")
	case identity == "":
		return nil, errors.New("lease: identity must not be empty")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	e := &StoreElector{b: b, key: key, id: identity, cfg: cfg, turn: make(chan struct{}, 1)}
	return e, nil
}

// Wait blocks until every term this elector began before the call, whose
// campaign ctx has ended, has ended and released the leader key (at most 5
// seconds after the term ended). The term context ends before the release
// is done: cancel the campaign ctx, then call Wait before the process
// exits or the backend closes, or the key may be left for the next leader
// to wait out its TTL. A term whose campaign ctx lives is not waited for, so
// one Loop stopping does not wait for another's term on a shared elector.
// reconcile.Loop and manager.Manager call Wait before their Run returns. It
// is safe to call from any goroutine, while Campaign runs too.
func (e *StoreElector) Wait() {
	// Terms run one at a time, each released before the next may begin, so
	// only the latest can still be releasing. (A sync.WaitGroup panicked
	// when a term began while a Wait was returning.)
	e.mu.Lock()
	last := e.last
	e.mu.Unlock()
	if last.done != nil && last.ctx.Err() != nil {
		<-last.done
	}
}

// Identity returns the identity the elector campaigns as.
func (e *StoreElector) Identity() string { return e.id }

// Holder returns the identity recorded in the leader key, or an error
// wrapping store.ErrNotFound when nobody holds it. The holder may have
// stopped already (its lease expired but not yet taken over).
func (e *StoreElector) Holder(ctx context.Context) (string, error) {
	kvp, err := e.b.Get(ctx, e.key)
	if err != nil {
		return "", err
	}
	return decodeRecord(kvp.Value).Holder, nil
}

// Campaign blocks until this elector leads or ctx ends; see Elector. The
// term context carries the fence (store.FenceFrom) and ends with cause
// context.Cause(ctx) when ctx ends, or with a cause wrapping ErrLost when
// leadership is lost. Backend errors while waiting are retried every retry
// period; Campaign returns only ctx's error.
func (e *StoreElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	select {
	case e.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, store.Fence{}, ctx.Err()
	}
	term, fence, err := e.campaign(ctx)
	if err != nil {
		<-e.turn
	}
	return term, fence, err
}

func (e *StoreElector) campaign(ctx context.Context) (context.Context, store.Fence, error) {
	var (
		seenRev int64     // the other holder's ModRevision we are timing
		seenAt  time.Time // when we first saw it
		wait    = e.cfg.clock.NewTimer(e.cfg.retry)
	)
	defer wait.Stop()
	for {
		kvp, err := e.b.Get(ctx, e.key)
		now := e.cfg.clock.Now()
		switch {
		case ctx.Err() != nil:
			return nil, store.Fence{}, ctx.Err()
		case errors.Is(err, store.ErrNotFound):
			term, fence, err := e.acquire(ctx)
			if err == nil {
				return term, fence, nil
			}
			if errors.Is(err, kv.ErrCondFailed) {
				continue // someone else created it first: look again
			}
		case err != nil:
			// Transient backend trouble: try again after the retry period.
		default:
			rec := decodeRecord(kvp.Value)
			expired := kvp.ModRevision == seenRev && now.Sub(seenAt) >= rec.ttl(e.cfg.ttl)
			if kvp.ModRevision != seenRev {
				seenRev, seenAt = kvp.ModRevision, now
			}
			// A key that names us is left over from an earlier term of ours
			// (whose context is over): no other candidate leads, take it.
			if rec.Holder != e.id && !expired {
				break
			}
			term, fence, err := e.takeOver(ctx, kvp.ModRevision)
			if err == nil {
				return term, fence, nil
			}
			if errors.Is(err, kv.ErrCondFailed) {
				seenRev = 0
				continue // the key moved under us: look again
			}
		}
		wait.Reset(e.cfg.retry)
		select {
		case <-wait.C():
		case <-ctx.Done():
			return nil, store.Fence{}, ctx.Err()
		}
	}
}

// takeOver removes the leader key if it is still at modRev, and acquires
// it.
func (e *StoreElector) takeOver(ctx context.Context, modRev int64) (context.Context, store.Fence, error) {
	if err := e.remove(ctx, modRev); err != nil {
		return nil, store.Fence{}, err
	}
	return e.acquire(ctx)
}

// remove deletes the leader key if it is still at modRev.
func (e *StoreElector) remove(ctx context.Context, modRev int64) error {
	_, err := e.b.Txn(ctx, []kv.Cond{{Key: e.key, Target: kv.ModRevision, Revision: modRev}},
		kv.Write{Kind: kv.WriteDelete, Key: e.key})
	return err
}

// acquire creates the leader key and, on success, starts the term.
func (e *StoreElector) acquire(ctx context.Context) (context.Context, store.Fence, error) {
	start := e.cfg.clock.Now()
	val, err := e.value(start)
	if err != nil {
		return nil, store.Fence{}, err
	}
	rev, err := e.b.Txn(ctx, []kv.Cond{{Key: e.key, Target: kv.CreateRevision, Revision: 0}},
		kv.Write{Kind: kv.WritePut, Key: e.key, Value: val})
	if err != nil {
		return nil, store.Fence{}, err
	}
	fence := store.Fence{Key: e.key, Revision: rev}
	termCtx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	e.mu.Lock()
	e.last = heldTerm{ctx, done}
	e.mu.Unlock()
	go e.hold(ctx, cancel, rev, start, done)
	return store.WithFence(termCtx, fence), fence, nil
}

func (e *StoreElector) value(now time.Time) ([]byte, error) {
	return record{Holder: e.id, TTLMillis: ttlMillis(e.cfg.ttl), Renewed: now}.encode()
}

// stopAfter is how long after the start of its last successful renewal a
// leader keeps working: 2/3 of the TTL.
func (e *StoreElector) stopAfter() time.Duration { return twoThirds(e.cfg.ttl) }

// twoThirds is d*2/3 rounded down, without overflowing for any d.
func twoThirds(d time.Duration) time.Duration { return d/3*2 + d%3*2/3 }

type renewResult struct {
	rev int64
	err error
}

// hold renews the lease until the term ends, then ends the term context
// with its cause and, if ctx ended, releases the key. When it returns it
// closes done and then gives the elector's turn back, so a term has ended
// for Wait before the next one may begin.
func (e *StoreElector) hold(ctx context.Context, end context.CancelCauseFunc, modRev int64, renewed time.Time, done chan struct{}) {
	defer func() {
		close(done)
		<-e.turn
	}()
	clk := e.cfg.clock
	deadline := clk.NewTimer(renewed.Add(e.stopAfter()).Sub(clk.Now()))
	defer deadline.Stop()
	// Each renewal is due one renew interval after the start of the last
	// successful one, as the deadline is timed, not after it returned: on
	// a slow store it then has the whole interval to land.
	tick := clk.NewTimer(renewed.Add(e.cfg.renew).Sub(clk.Now()))
	defer tick.Stop()

	lost := func(why string) { end(fmt.Errorf("%w: %s", ErrLost, why)) }
	for {
		select {
		case <-ctx.Done():
			end(context.Cause(ctx))
			e.release(ctx, modRev)
			return
		case <-deadline.C():
			lost("no successful renewal within 2/3 of the lease TTL")
			return
		case <-tick.C():
		}

		start := clk.Now()
		val, err := e.value(start)
		if err != nil {
			lost("encoding the lease record: " + err.Error())
			return
		}
		rctx, cancel := context.WithCancel(ctx)
		res := make(chan renewResult, 1)
		go func() {
			rev, err := e.b.Txn(rctx, []kv.Cond{{Key: e.key, Target: kv.ModRevision, Revision: modRev}},
				kv.Write{Kind: kv.WritePut, Key: e.key, Value: val})
			res <- renewResult{rev, err}
		}()
		var r renewResult
		select {
		case r = <-res:
		case <-deadline.C():
			cancel()
			<-res
			lost("no successful renewal within 2/3 of the lease TTL")
			return
		case <-ctx.Done():
			cancel()
			if r = <-res; r.err == nil {
				modRev = r.rev
			}
			end(context.Cause(ctx))
			e.release(ctx, modRev)
			return
		}
		cancel()
		switch {
		case r.err == nil:
			modRev = r.rev
			deadline.Reset(start.Add(e.stopAfter()).Sub(clk.Now()))
			tick.Reset(start.Add(e.cfg.renew).Sub(clk.Now()))
		case errors.Is(r.err, kv.ErrCondFailed):
			lost("the leader key was taken over")
			return
		default:
			// Transient: retry soon, while the deadline still allows.
			tick.Reset(min(e.cfg.retry, e.cfg.renew))
		}
	}
}

// release deletes the leader key if it is still ours, so the next leader
// need not wait for the TTL. It runs after ctx ended, so it uses a detached
// context bounded by a few seconds.
func (e *StoreElector) release(ctx context.Context, modRev int64) {
	if e.cfg.noRelease {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.releaseWait)
	defer cancel()
	_ = e.remove(rctx, modRev) // if it fails, the key expires after the TTL
}
