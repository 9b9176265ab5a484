package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/lease"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ElectionKeyPrefix starts every election key, relative to the Backend's
// prefix. Before it was "_leases/", election keys were "leases/" + name,
// inside the key space of a Store of kind "leases".
const ElectionKeyPrefix = "_leases/"

// ErrTermEnded is wrapped by the cause of a term context that ended while
// its campaign ctx lived: the etcd lease could not be renewed in time, or
// the election key was deleted or overwritten by someone else. It wraps
// lease.ErrLost, as every Elector's lost term does.
var ErrTermEnded error = termEndedError{}

type termEndedError struct{}

func (termEndedError) Error() string { return "etcdstore: leadership term ended" }
func (termEndedError) Unwrap() error { return lease.ErrLost }

// Elector is a lease.Elector on etcd. A candidate leads while it holds the
// election key, which it creates attached to an etcd lease of TTL seconds;
// etcd deletes the key when the lease expires, and the next candidate's
// create then succeeds. The Fence is the election key's CreateRevision, so a
// deposed leader's writes fail inside the same etcd transaction.
//
// The term context ends when the campaign ctx ends (the lease is then
// revoked, so a successor does not wait out the TTL), when keep-alives stop,
// or 2/3 of the TTL after the last acknowledged keep-alive, whichever is
// first: a leader stops working before etcd can hand the key to anyone else.
// It also ends when the election key is deleted or overwritten (an
// operator's etcdctl, say), since the key no longer says who leads.
type Elector struct {
	b        *Backend
	key      string // relative to the Backend's prefix
	identity string
	ttl      time.Duration

	mu    sync.Mutex
	terms map[*heldTerm]struct{} // the terms begun and not yet released

	// beforeRelease, if set (by tests), runs after a term ended, before its
	// lease is revoked.
	beforeRelease func()
}

// heldTerm is a term as Wait sees it: the ctx given to Campaign, and a
// channel closed once the term has ended and its lease was revoked.
type heldTerm struct {
	ctx  context.Context
	done chan struct{}
}

// NewElector returns an Elector for the election named name on behalf of
// identity. The election key is ElectionKeyPrefix + name under the
// Backend's prefix; it starts with "_", like no object key (store.New
// rejects key prefixes that do), so no Store ever lists or watches it. A
// name must not be empty or contain "/". ttl must be at least 2s; etcd
// leases have whole-second TTLs.
func NewElector(b *Backend, name, identity string, ttl time.Duration) (*Elector, error) {
	switch {
	case b == nil:
		return nil, errors.New("etcdstore: nil backend")
	case name == "":
		return nil, errors.New("etcdstore: empty election name")
	case strings.Contains(name, "/"):
		return nil, fmt.Errorf("etcdstore: election name %.64q contains \"/\"", name)
	case identity == "":
		return nil, errors.New("etcdstore: empty identity")
	case ttl < 2*time.Second:
		return nil, fmt.Errorf("etcdstore: lease TTL %v is under the 2s minimum", ttl)
	}
	return &Elector{b: b, key: ElectionKeyPrefix + name, identity: identity, ttl: ttl.Truncate(time.Second)}, nil
}

// Wait blocks until every term this Elector began before the call, whose
// campaign ctx has ended, has ended and released its lease (a revoke takes
// at most a second). A term whose campaign ctx lives is not waited for, so
// one Loop stopping does not wait for another's term on a shared Elector.
// Cancel the campaign ctx, then call Wait before closing the etcd client: a
// client closed while the lease revoke is in flight leaves the election key
// to expire with the TTL, and the next leader waits that long. Wait is safe
// to call from any goroutine, while Campaign runs too.
func (e *Elector) Wait() {
	e.mu.Lock()
	var ended []chan struct{}
	for t := range e.terms {
		if t.ctx.Err() != nil {
			ended = append(ended, t.done)
		}
	}
	e.mu.Unlock()
	for _, done := range ended {
		<-done
	}
}

// Key returns the election key, relative to the Backend's prefix.
func (e *Elector) Key() string { return e.key }

var _ lease.Elector = (*Elector)(nil)

// Campaign implements lease.Elector.
func (e *Elector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	cli := e.b.cli
	full := e.b.prefix + e.key
	for {
		if err := ctx.Err(); err != nil {
			return nil, store.Fence{}, err
		}
		// Each call is bounded like the Backend's (WithCallTimeout): without
		// quorum a campaign fails, loudly, instead of waiting silently.
		cctx, cancel := e.b.call(ctx)
		grant, err := cli.Grant(cctx, int64(e.ttl/time.Second))
		cancel()
		if err != nil {
			return nil, store.Fence{}, e.b.mapCallErr(ctx, cctx, err)
		}
		cctx, cancel = e.b.call(ctx)
		resp, err := cli.Txn(cctx).
			If(clientv3.Compare(clientv3.CreateRevision(full), "=", 0)).
			Then(clientv3.OpPut(full, e.identity, clientv3.WithLease(grant.ID))).
			Else(clientv3.OpGet(full)).
			Commit()
		cancel()
		if err != nil {
			e.revoke(grant.ID)
			return nil, store.Fence{}, e.b.mapCallErr(ctx, cctx, err)
		}
		if resp.Succeeded {
			return e.lead(ctx, grant.ID, resp.Header.Revision)
		}
		e.revoke(grant.ID)
		// Someone leads: wait for the key to go, then try again.
		var rev int64
		if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
			rev = kvs[0].ModRevision
		}
		if err := e.waitGone(ctx, full, rev); err != nil {
			return nil, store.Fence{}, err
		}
	}
}

func (e *Elector) waitGone(ctx context.Context, full string, rev int64) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for resp := range e.b.cli.Watch(wctx, full, clientv3.WithRev(rev+1)) {
		if resp.Err() != nil || resp.CompactRevision != 0 {
			return nil // re-check by trying to acquire
		}
		for _, ev := range resp.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return nil
			}
		}
	}
	return ctx.Err()
}

func (e *Elector) revoke(id clientv3.LeaseID) {
	// Bounded by the client's own lifetime: a closed client cannot revoke.
	ctx, cancel := context.WithTimeout(e.b.cli.Ctx(), time.Second)
	defer cancel()
	_, _ = e.b.cli.Revoke(ctx, id) // best effort: the lease expires anyway
}

func (e *Elector) lead(ctx context.Context, id clientv3.LeaseID, createRev int64) (context.Context, store.Fence, error) {
	fence := store.Fence{Key: e.key, Revision: createRev}
	term, cancel := context.WithCancelCause(store.WithFence(ctx, fence))
	kctx, stopKeep := context.WithCancel(context.Background())
	ka, err := e.b.cli.KeepAlive(kctx, id)
	if err != nil {
		stopKeep()
		cancel(err)
		e.revoke(id)
		return nil, store.Fence{}, mapErr(ctx, err)
	}
	full := e.b.prefix + e.key
	// Every change of the key after its creation ends the term: this
	// Elector never writes it again (keep-alives renew the lease only).
	keyChanges := e.b.cli.Watch(kctx, full, clientv3.WithRev(createRev+1))
	held := &heldTerm{ctx: ctx, done: make(chan struct{})}
	e.mu.Lock()
	if e.terms == nil {
		e.terms = make(map[*heldTerm]struct{})
	}
	e.terms[held] = struct{}{}
	e.mu.Unlock()
	go func() {
		defer func() {
			e.mu.Lock()
			delete(e.terms, held)
			e.mu.Unlock()
			close(held.done)
		}()
		defer e.revoke(id)
		if e.beforeRelease != nil {
			defer e.beforeRelease()
		}
		defer stopKeep()
		deadline := time.NewTimer(e.ttl * 2 / 3)
		defer deadline.Stop()
		for {
			select {
			case <-term.Done():
				return
			case <-deadline.C:
				cancel(fmt.Errorf("%w: lease not renewed", ErrTermEnded))
				return
			case r, ok := <-ka:
				if !ok || r == nil {
					cancel(fmt.Errorf("%w: lease not renewed", ErrTermEnded))
					return
				}
				deadline.Reset(e.ttl * 2 / 3)
			case resp, ok := <-keyChanges:
				var why string
				why, keyChanges = e.keyChanged(kctx, full, createRev, keyChanges, resp, ok)
				if why != "" {
					cancel(fmt.Errorf("%w: the election key was %s", ErrTermEnded, why))
					return
				}
			}
		}
	}()
	return term, fence, nil
}

// keyChanged reads a response of cur, the watch of the election key full,
// created at createRev (ok false: the watch channel closed). It returns
// how the key changed ("deleted", "overwritten") or "" when it did not,
// and the watch to read next: the same one, a new one after a watch error
// or a compaction (once a Get has found the key unchanged), or nil to stop
// watching (the client closed: the keep-alives end the term then).
func (e *Elector) keyChanged(kctx context.Context, full string, createRev int64, cur clientv3.WatchChan, resp clientv3.WatchResponse, ok bool) (string, clientv3.WatchChan) {
	if !ok || kctx.Err() != nil {
		return "", nil
	}
	if resp.Err() == nil && resp.CompactRevision == 0 {
		switch {
		case len(resp.Events) == 0: // a notification of progress
			return "", cur
		case resp.Events[0].Type == clientv3.EventTypeDelete:
			return "deleted", nil
		}
		return "overwritten", nil
	}
	// The watch failed or fell behind a compaction: read the key instead,
	// and watch again from there.
	cctx, cancel := e.b.call(kctx)
	got, err := e.b.cli.Get(cctx, full)
	cancel()
	if err != nil {
		return "", nil // stop watching; the keep-alives still end the term if etcd is gone
	}
	switch {
	case len(got.Kvs) == 0 || got.Kvs[0].CreateRevision != createRev:
		return "deleted", nil
	case got.Kvs[0].ModRevision != createRev:
		return "overwritten", nil
	}
	return "", e.b.cli.Watch(kctx, full, clientv3.WithRev(got.Header.Revision+1))
}
