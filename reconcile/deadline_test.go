package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

type deadlineKey struct{}

// A reconcile's deadlineCtx answers as context.WithTimeoutCause(parent, 1s,
// ErrTimeout) with its cancel called when the reconcile ends, whatever is
// asked of it and when: every scenario runs against both, in the same
// virtual time, and their observations must be equal.
func TestDeadlineCtxAgreesWithWithTimeoutCause(t *testing.T) {
	errParent := errors.New("parent gone")
	type ctxs struct {
		ctx    context.Context
		end    func()
		parent context.CancelCauseFunc
	}
	// Each step acts on the context and returns what it saw.
	type step func(c ctxs) string
	at := func(d time.Duration) step {
		return func(ctxs) string { time.Sleep(d); return "" }
	}
	observe := func(c ctxs) string {
		done := "open"
		select {
		case <-c.ctx.Done():
			done = "closed"
		default:
		}
		d, ok := c.ctx.Deadline()
		return fmt.Sprintf("err=%v cause=%v done=%s deadline=%v,%v value=%v", c.ctx.Err(), context.Cause(c.ctx), done,
			d.Sub(time.Unix(946684800, 0)), ok, c.ctx.Value(deadlineKey{}))
	}
	errOnly := func(c ctxs) string { return fmt.Sprintf("err=%v", c.ctx.Err()) }
	causeOnly := func(c ctxs) string { return fmt.Sprintf("cause=%v", context.Cause(c.ctx)) }
	waitDone := func(c ctxs) string {
		<-c.ctx.Done()
		return fmt.Sprintf("woke at %v", time.Since(time.Unix(946684800, 0)))
	}
	child := func(c ctxs) string {
		ch, cancel := context.WithCancel(c.ctx)
		defer cancel()
		time.Sleep(2 * time.Second)
		return fmt.Sprintf("child err=%v cause=%v", ch.Err(), context.Cause(ch))
	}
	afterFunc := func(c ctxs) string {
		fired := make(chan time.Duration, 1)
		context.AfterFunc(c.ctx, func() { fired <- time.Since(time.Unix(946684800, 0)) })
		return fmt.Sprintf("after func at %v", <-fired)
	}
	end := func(c ctxs) string { c.end(); return "" }
	cancelParent := func(c ctxs) string { c.parent(errParent); return "" }

	scenarios := map[string][]step{
		"ends early, never asked":       {at(100 * time.Millisecond), end, observe},
		"asked while live, then ends":   {observe, at(500 * time.Millisecond), observe, end, observe},
		"Err polled past the deadline":  {at(1500 * time.Millisecond), errOnly, observe, end, observe},
		"Cause first past the deadline": {at(1500 * time.Millisecond), causeOnly, observe},
		"waits on Done":                 {waitDone, observe, end, observe},
		"derives a child":               {child, observe},
		"AfterFunc":                     {afterFunc, observe},
		"parent cancelled, not asked":   {cancelParent, errOnly, observe, end, observe},
		"parent cancelled while waited": {observe, cancelParent, observe},
		"ends, then waited on":          {end, waitDone, observe},
	}
	run := func(steps []step, mk func(parent context.Context) (context.Context, func())) []string {
		var out []string
		synctest.Test(t, func(t *testing.T) {
			// synctest's clock starts at 2000-01-01 00:00:00 UTC.
			parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), deadlineKey{}, "v"))
			defer cancel(nil)
			ctx, endFn := mk(parent)
			defer endFn()
			for _, s := range steps {
				if o := s(ctxs{ctx, endFn, cancel}); o != "" {
					out = append(out, o)
				}
			}
		})
		return out
	}
	for name, steps := range scenarios {
		t.Run(name, func(t *testing.T) {
			want := run(steps, func(p context.Context) (context.Context, func()) {
				ctx, cancel := context.WithTimeoutCause(p, time.Second, ErrTimeout)
				return ctx, cancel
			})
			got := run(steps, func(p context.Context) (context.Context, func()) {
				c := newDeadlineCtx(p, time.Second)
				return c, c.end
			})
			require.Equal(t, want, got)
			require.NotEmpty(t, got)
		})
	}
}

// Goroutines a reconcile leaves running may use its context while the
// reconcile ends: under -race, and every one of them sees it done.
func TestDeadlineCtxEndsUnderConcurrentUse(t *testing.T) {
	for range 50 {
		c := newDeadlineCtx(context.Background(), time.Minute)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				switch i {
				case 0:
					<-c.Done()
				case 1:
					for c.Err() == nil {
					}
				case 2:
					for context.Cause(c) == nil {
					}
				default:
					ch, cancel := context.WithCancel(c)
					<-ch.Done()
					cancel()
				}
			})
		}
		c.end()
		wg.Wait()
		require.ErrorIs(t, c.Err(), context.Canceled)
	}
}
