// Package electwait waits, for a bounded time, for an elector to finish the
// work its terms do after they end (releasing the lease), so that a Run
// that returns leaves no release half done.
package electwait

import (
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/guard"
)

// Limit is how long Wait waits for an elector's Wait method.
const Limit = 30 * time.Second

// Wait calls e's Wait method (the optional method lease.Elector describes)
// if it has one, and returns once that returned, or after Limit on clk.
// It reports false if the method did not return in time; its goroutine
// then ends only when the method returns. A panic in the method is
// recovered and returned.
func Wait(e any, clk clock.Clock) (ok bool, p *guard.Panic) {
	w, has := e.(interface{ Wait() })
	if !has {
		return true, nil
	}
	done := make(chan *guard.Panic, 1)
	go func() { done <- guard.Call(w.Wait) }()
	t := clk.NewTimer(Limit)
	defer t.Stop()
	select {
	case p := <-done:
		return true, p
	case <-t.C():
		return false, nil
	}
}
