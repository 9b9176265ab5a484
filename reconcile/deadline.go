package reconcile

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineCtx is the context of one reconcile under WithTimeout: what
// context.WithTimeoutCause(parent, timeout, ErrTimeout) gives, built only
// when someone needs it.
//
// context.WithTimeoutCause costs a timer, three more allocations and a
// registration with the parent per reconcile: about 1.4 µs, more than all
// the rest of a cheap reconcile (BenchmarkLoopBareResync100k/timeout=on). A
// reconcile that never waits on its context needs none of it: its Deadline
// and Err can be answered from the deadline and the clock. So a deadlineCtx
// is one allocation, and it builds the real context (materialize) the first
// time a caller asks for Done, or for Err or Value once the deadline has
// passed, the parent is done or the reconcile has ended. Every answer is the
// real context's from then on. A reconcile that calls a client which derives
// a context, or selects on Done, pays what it paid before, once.
//
// The contract is the real one throughout: Err is DeadlineExceeded once the
// deadline passes, context.Cause is ErrTimeout, the parent's cancellation
// (and cause) propagates, and the context is cancelled when the reconcile
// ends (end), for anything the reconciler left running.
type deadlineCtx struct {
	parent   context.Context
	deadline time.Time
	real     atomic.Pointer[context.Context]
	ended    atomic.Bool

	mu     sync.Mutex
	cancel context.CancelFunc
}

func newDeadlineCtx(parent context.Context, timeout time.Duration) *deadlineCtx {
	return &deadlineCtx{parent: parent, deadline: time.Now().Add(timeout)}
}

// Deadline is the earlier of the reconcile's deadline and its parent's.
func (c *deadlineCtx) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *deadlineCtx) Done() <-chan struct{} { return c.materialize().Done() }

func (c *deadlineCtx) Err() error {
	if r := c.real.Load(); r != nil {
		return (*r).Err()
	}
	if c.live() {
		return nil
	}
	return c.materialize().Err()
}

// Value answers from the parent while the context is live and was never
// built: context.Cause and context.WithCancel find the cancellation state
// through Value, so once the context can be done they get the real one.
func (c *deadlineCtx) Value(key any) any {
	if r := c.real.Load(); r != nil {
		return (*r).Value(key)
	}
	if c.live() {
		return c.parent.Value(key)
	}
	return c.materialize().Value(key)
}

// live reports whether the context, not yet built, is certainly not done:
// the reconcile is running, the parent is not done and the deadline has not
// passed.
func (c *deadlineCtx) live() bool {
	return !c.ended.Load() && c.parent.Err() == nil && time.Now().Before(c.deadline)
}

// materialize builds the real context once: a timeout context, or after
// end a cancelled one, as context.WithTimeoutCause's would be.
func (c *deadlineCtx) materialize() context.Context {
	if r := c.real.Load(); r != nil {
		return *r
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.real.Load(); r != nil {
		return *r
	}
	ctx, cancel := context.WithDeadlineCause(c.parent, c.deadline, ErrTimeout)
	if c.ended.Load() {
		cancel()
	} else {
		c.cancel = cancel
	}
	c.real.Store(&ctx)
	return ctx
}

// end is the cancel of context.WithTimeoutCause: the reconcile is over.
func (c *deadlineCtx) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ended.Store(true)
	if c.cancel != nil {
		c.cancel()
	}
}
