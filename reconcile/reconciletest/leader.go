package reconciletest

import (
	"context"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
)

// rival is another candidate that has taken the lease from the controller.
type rival struct {
	until  time.Time
	cancel context.CancelFunc
	done   chan struct{}
}

// stop makes the rival resign (releasing the leader key) and waits until
// the release has landed. It runs on the scheduler's goroutine.
func (r *rival) stop() {
	r.cancel()
	<-r.done
	synctest.Wait()
}

// loseLeadership takes the lease from the controller: the leader key is
// deleted, as when a lease expires during a partition, and a rival elector
// takes it at once and holds it for a seeded while. The controller's term
// ends when its next renewal fails; until then its writes carry a fence
// the store no longer honours.
func (w *world) loseLeadership(now time.Time) *rival {
	ctx := context.Background()
	if kvp, err := w.raw.Get(ctx, leaseKey); err == nil {
		_, _ = w.raw.Txn(ctx, []kv.Cond{{Key: leaseKey, Target: kv.ModRevision, Revision: kvp.ModRevision}},
			kv.Write{Kind: kv.WriteDelete, Key: leaseKey})
	}
	el, err := lease.New(w.raw, leaseKey, "rival",
		lease.WithTTL(leaseTTL), lease.WithRenewInterval(leaseRenew), lease.WithRetryPeriod(leaseRetry))
	if err != nil {
		w.violate(HarmContract, "reconciletest: rival elector: %v", err)
		return nil
	}
	hold := time.Duration(1 + w.rng.Int64N(int64(w.f.MaxDelay)))
	rctx, cancel := context.WithCancel(ctx)
	r := &rival{until: now.Add(hold), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		term, _, err := el.Campaign(rctx)
		if err != nil {
			return
		}
		<-term.Done()
	}()
	w.mu.Lock()
	w.rep.Faults["leadership-loss"]++
	w.disturbLocked("")
	w.traceLocked("fault leadership-loss: rival holds the lease for %v", hold)
	w.mu.Unlock()
	return r
}

// gatedElector makes the start of every term of the Loop a step of the
// scheduler: Campaign first waits at a gate, so the term's queue is built
// (every key, in name order) only once what the caches' listings set off
// has settled. Without simulated leadership (inner nil) the term then lasts
// as long as the process and its writes carry no fence.
type gatedElector struct {
	w     *world
	p     *Process
	inner lease.Elector
}

func (e *gatedElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	if _, err := e.w.wait(ctx, &gate{p: e.p, elect: true, key: "~campaign"}); err != nil {
		return nil, store.Fence{}, err
	}
	if e.inner == nil {
		if e.p.follow != nil {
			e.p.follow.publish(ctx, store.Fence{})
		}
		return ctx, store.Fence{}, nil
	}
	tctx, f, err := e.inner.Campaign(ctx)
	if err == nil {
		e.w.mu.Lock()
		e.p.fence = f.Revision
		e.w.mu.Unlock()
		if e.p.follow != nil {
			e.p.follow.publish(tctx, f)
		}
	}
	return tctx, f, err
}
