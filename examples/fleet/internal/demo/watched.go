package demo

import (
	"context"
	"sync"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/lease"
)

// WatchedElector is a shared store's lease.Elector, watched: it tells the
// demo whether this replica leads, since when, and notes every change of
// term. Set the exported fields before the first Campaign.
type WatchedElector struct {
	lease.Elector
	// Name is this replica's name in the election; LeaseTTL the election's
	// lease TTL.
	Name     string
	LeaseTTL time.Duration
	// Revision names what a fence's revision counts in the notes
	// ("etcd revision").
	Revision string
	// Note prints a timestamped event line.
	Note func(format string, args ...any)
	// Holder reads the name of the replica that holds the election.
	Holder func(ctx context.Context) (string, error)

	mu      sync.Mutex
	leading bool
	since   time.Time // when the current term began, or the last one ended
	terms   int
}

var _ Elector = (*WatchedElector)(nil)

// Campaign implements lease.Elector: it campaigns with the Elector, and
// notes the term's start and, in a goroutine that ends with the term, its
// end.
func (e *WatchedElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	term, fence, err := e.Elector.Campaign(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.Note("replica %s: campaign failed: %v", e.Name, err)
		}
		return term, fence, err
	}
	e.mu.Lock()
	e.leading, e.since = true, time.Now()
	e.terms++
	e.mu.Unlock()
	e.Note("replica %s leads: term fenced at %s %d; reconciling every group", e.Name, e.Revision, fence.Revision)
	go func() {
		<-term.Done()
		e.mu.Lock()
		e.leading, e.since = false, time.Now()
		e.mu.Unlock()
		if ctx.Err() == nil { // not a shutdown
			e.Note("replica %s's term ended (%v): its writes are fenced from now on", e.Name, context.Cause(term))
		}
	}()
	return term, fence, nil
}

// Replica implements Elector.
func (e *WatchedElector) Replica() string { return e.Name }

// TTL implements Elector.
func (e *WatchedElector) TTL() time.Duration { return e.LeaseTTL }

// State implements Elector: whether this replica leads, since when, and
// how many terms it has begun.
func (e *WatchedElector) State() (leading bool, since time.Time, terms int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading, e.since, e.terms
}

// Leader implements Elector: the replica that holds the election, or ""
// when none does or it cannot be read within a second.
func (e *WatchedElector) Leader(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	h, err := e.Holder(ctx)
	if err != nil {
		return ""
	}
	return h
}
