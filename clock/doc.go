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
