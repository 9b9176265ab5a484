package reconciletest

import (
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// procBackend is a process's view of the store: the faultBackend. Every
// write of the controller (its reconciler's and the Loop's) waits at a gate
// for the scheduler, which may make it conflict, fail, lose its reply or
// crash the process right after it; every watch is a stream the scheduler
// delivers, drops, duplicates, delays and expires. Once the process is dead
// every call fails with store.ErrUnavailable.
//
// The elector's view (elector true) only dies with the process: leases are
// taken away by the harness's rival, not by write faults.
type procBackend struct {
	w       *world
	p       *Process
	prefix  string // the primary kind's key prefix, to attribute writes
	sp      *space // the store it views
	elector bool
}

var _ kv.Backend = (*procBackend)(nil)

func (v *procBackend) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if v.p.isDead() {
		return kv.KeyValue{}, errDead
	}
	if v.elector {
		return v.w.mem.Get(ctx, key)
	}
	return v.sp.mem.Get(ctx, key)
}

func (v *procBackend) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	if v.p.isDead() {
		return kv.List{}, errDead
	}
	if !v.elector {
		// A listing waits for the scheduler too: a cache's first listing
		// then never races the Loop's start, nor a relist anything else.
		if _, err := v.w.wait(ctx, &gate{p: v.p, list: true, key: "list " + prefix}); err != nil {
			return kv.List{}, err
		}
		if opts.Revision == 0 && opts.Continue == "" {
			v.w.mu.Lock()
			pin, travel := v.p.travel[v.sp.tag+prefix]
			if travel {
				delete(v.p.travel, prefix)
				if v.p.lagged == nil {
					v.p.lagged = map[string]bool{}
				}
				v.p.lagged[v.sp.tag+prefix] = true
			}
			v.w.mu.Unlock()
			if !travel {
				pin = v.w.listPin(v.p, v.sp, prefix)
			}
			opts.Revision = pin
		}
		return v.sp.mem.List(ctx, prefix, opts)
	}
	return v.w.mem.List(ctx, prefix, opts)
}

func (v *procBackend) Watch(ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
	if v.p.isDead() {
		return nil, errDead
	}
	if v.elector {
		return v.w.mem.Watch(ctx, prefix, from)
	}
	return v.w.watch(ctx, v.p, v.sp, prefix, from)
}

func (v *procBackend) Txn(ctx context.Context, conds []kv.Cond, wr kv.Write) (int64, error) {
	if v.p.isDead() {
		return 0, errDead
	}
	if v.elector {
		return v.w.raw.Txn(ctx, conds, wr)
	}
	obj, marked := reconcileKey(ctx)
	if !marked {
		obj = primaryName(v.prefix, wr.Key)
	}
	nth := 0
	if rec := recordOf(ctx); rec != nil {
		nth = rec.attempt()
	}
	g := &gate{p: v.p, write: true, key: v.sp.tag + wr.Key, object: obj, faulty: marked, nth: nth,
		canConf: len(conds) > 0 && conds[0].Target == kv.ModRevision && conds[0].Revision > 0}
	r, err := v.w.wait(ctx, g)
	if err != nil {
		return 0, err
	}
	return v.w.commit(ctx, v.p, v.sp, conds, wr, r.v, obj, marked)
}

// commit carries out a released write to space sp and its verdict, and
// checks it.
func (w *world) commit(ctx context.Context, p *Process, sp *space, conds []kv.Cond, wr kv.Write, vd verdict, obj string, marked bool) (int64, error) {
	w.txnMu.Lock()
	defer w.txnMu.Unlock()
	if p.isDead() {
		return 0, errDead
	}
	// tw is wr as the harness names it: its key tagged with its space.
	tw := wr
	tw.Key = sp.tag + wr.Key
	info := writtenInfo(tw)
	switch vd {
	case unavailable:
		w.trace("  %s not made: unavailable (injected)", opOf(tw, info))
		return 0, fmt.Errorf("%w: %w: write of %q not made", store.ErrUnavailable, errInjected, wr.Key)
	case conflict:
		// A real conflict: someone rewrites the object, unchanged, first.
		if kvp, err := sp.mem.Get(ctx, wr.Key); err == nil {
			if rev, err := sp.mem.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: wr.Key, Value: kvp.Value}); err == nil {
				w.rewritten(tw.Key, kvp.ModRevision, rev)
			}
		}
	}
	prev, gerr := sp.mem.Get(ctx, wr.Key)
	rev, err := sp.mem.Txn(ctx, conds, wr)
	w.traceWrite(p, tw, info, vd, rev, err)
	if err == nil {
		w.recordWrite(prev, gerr == nil, tw, info, rev, true, marked)
	}
	w.check(ctx, p, sp, conds, tw, rev, err, obj, marked)
	if rec := recordOf(ctx); rec != nil && err == nil {
		rec.wrote(sp, tw.Key, rev)
	}
	switch vd {
	case lostReply:
		if err == nil {
			return 0, fmt.Errorf("%w: %w: write of %q committed at revision %d but the reply was lost",
				store.ErrUnavailable, errInjected, wr.Key, rev)
		}
	case crashAfter:
		w.mu.Lock()
		w.crashed = true
		w.mu.Unlock()
		p.kill()
		w.poke()
		return 0, errDead
	}
	return rev, err
}

// check records a write's outcome and, under leader election, checks what
// a fence is for: that no write was accepted from a process whose term was
// over. A write that carried a fence the store honoured is fine; one that
// carried none is a stale write if the leader key is no longer the one of
// its process's term; the store rejecting a stale fenced write (attempted,
// not accepted) is counted in Report.FencedWrites. It runs under txnMu, so
// the leader key cannot move meanwhile. A write to the other space
// (Process.Other) cannot carry a fence (the lease is not there), so no
// fence is checked for it.
func (w *world) check(ctx context.Context, p *Process, sp *space, conds []kv.Cond, wr kv.Write, rev int64, err error, obj string, marked bool) {
	var cf *kv.CondFailedError
	if err != nil {
		if errors.As(err, &cf) && cf.Cond.Key == leaseKey && sp == w.main {
			w.mu.Lock()
			w.rep.FencedWrites++
			w.traceLocked("stale write of %s by process %d attempted and fenced off", wr.Key, p.Incarnation)
			w.mu.Unlock()
		}
		return
	}
	if w.leadership && sp == w.main {
		w.checkFence(ctx, p, conds, wr, rev)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rep.Writes++
	if obj == "" {
		for _, c := range w.objWrites {
			c.stale = true
		}
		return
	}
	c := w.counts(obj)
	c.stale = true
	if marked {
		c.reconciler++
	} else {
		c.loop++
	}
	if w.pastBound && c.convergedAtBound {
		c.afterBound++
	}
}

// checkFence flags an accepted write of p made under the fence of a term
// that is over, or made with no fence after p's term ended.
func (w *world) checkFence(ctx context.Context, p *Process, conds []kv.Cond, wr kv.Write, rev int64) {
	fenced := false
	for _, c := range conds {
		if c.Key != leaseKey {
			continue
		}
		fenced = true
		kvp, gerr := w.mem.Get(ctx, leaseKey)
		if gerr != nil || kvp.CreateRevision != c.Revision {
			w.violateOn(HarmLiveAction, wr.Key, "write of %q at revision %d was accepted under the fence of a term that is over (fence %d)", wr.Key, rev, c.Revision)
		}
	}
	w.mu.Lock()
	term := p.fence
	w.mu.Unlock()
	if kvp, gerr := w.mem.Get(ctx, leaseKey); !fenced && (gerr != nil || term == 0 || kvp.CreateRevision != term) {
		w.mu.Lock()
		w.rep.StaleWrites++
		w.mu.Unlock()
		w.violateOn(HarmLiveAction, wr.Key, "stale write accepted: process %d wrote %q at revision %d after its term had ended, and the write carried no leadership fence (is the reconcile's ctx passed to the store?)",
			p.Incarnation, wr.Key, rev)
	}
}

// lockedBackend is the store without faults, for the harness's own writers
// (creator, competitor, rival, electors): its writes take txnMu so that the
// fence check sees a still leader key.
type lockedBackend struct {
	w  *world
	sp *space
}

// OtherStore returns the second store of the schedule whose store b is
// (b as Converged, Fixtures and Compete get it): the store Process.Other
// views, without faults. It returns nil for any other b.
func OtherStore(b kv.Backend) kv.Backend {
	lb, ok := b.(*lockedBackend)
	if !ok {
		return nil
	}
	return lb.w.otherRaw
}

var _ kv.Backend = (*lockedBackend)(nil)

func (b *lockedBackend) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	return b.sp.mem.Get(ctx, key)
}

func (b *lockedBackend) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	return b.sp.mem.List(ctx, prefix, opts)
}

func (b *lockedBackend) Watch(ctx context.Context, prefix string, from int64) (<-chan kv.Event, error) {
	return b.sp.mem.Watch(ctx, prefix, from)
}

func (b *lockedBackend) Txn(ctx context.Context, conds []kv.Cond, wr kv.Write) (int64, error) {
	b.w.txnMu.Lock()
	defer b.w.txnMu.Unlock()
	prev, gerr := b.sp.mem.Get(ctx, wr.Key)
	rev, err := b.sp.mem.Txn(ctx, conds, wr)
	if wr.Key == leaseKey {
		return rev, err
	}
	tw := wr
	tw.Key = b.sp.tag + wr.Key
	info := writtenInfo(tw)
	if err == nil {
		b.w.recordWrite(prev, gerr == nil, tw, info, rev, false, false)
	}
	if b.w.actor != "" {
		if err != nil {
			b.w.trace("  %s: %s failed: %v", b.w.actor, opOf(tw, info), err)
		} else {
			b.w.trace("  %s: %s → revision %d", b.w.actor, opOf(tw, info), rev)
		}
	}
	return rev, err
}

// traceWrite records what came of a write of the controller.
func (w *world) traceWrite(p *Process, wr kv.Write, info *valueInfo, vd verdict, rev int64, err error) {
	op := opOf(wr, info)
	switch {
	case err != nil:
		w.trace("  %s by process %d rejected: %v", op, p.Incarnation, err)
	case vd == lostReply:
		w.trace("  %s by process %d committed at revision %d; the reply is lost", op, p.Incarnation, rev)
	case vd == crashAfter:
		w.trace("  %s by process %d committed at revision %d; the process crashes", op, p.Incarnation, rev)
	default:
		w.trace("  %s by process %d → revision %d", op, p.Incarnation, rev)
	}
}

// opOf names a write: put or delete of a key, and for a put the manager
// the store stamped (info is writtenInfo(wr)).
func opOf(wr kv.Write, info *valueInfo) string {
	if wr.Kind == kv.WriteDelete {
		return "delete " + wr.Key
	}
	if info != nil && info.ok && info.meta.LastWrite.Manager != "" {
		return "put " + wr.Key + " (as " + info.meta.LastWrite.Manager + ", " + string(info.meta.LastWrite.Op) + ")"
	}
	return "put " + wr.Key
}
