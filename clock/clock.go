// Package clock is the time source that steady's time-dependent code takes
// (queue, backoff, store caches, leases, reconcile Loops), through a
// WithClock option in each of those packages.
//
// Most tests need no clock of their own: inside a testing/synctest bubble the
// real clock is already virtual, and that is how steady's own tests drive
// time. Implement Clock when time must be driven step by step from outside,
// for example by a simulation that owns its own notion of time. An
// implementation must be safe for concurrent use, and a Timer's channel must
// deliver at most one value per Reset, as *time.Timer's does.
package clock

import "time"

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a stopped-or-running timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is the subset of *time.Timer that steady uses.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was active.
	Stop() bool
	// Reset changes the timer to fire after d; it reports whether it was active.
	Reset(d time.Duration) bool
}

// Real is the wall clock (virtual inside a synctest bubble).
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer returns a timer backed by time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
