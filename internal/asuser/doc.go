// Package asuser holds tests written the way a user's own module writes
// them: a separate Go module that sees steady only through its public API
// (a replace directive points it at this checkout). It proves what only code
// outside steady's module can prove: that a user can implement clock.Clock
// and drive steady's timed behaviour with it, and that a cache in a user's
// test binary does not run steady's mutation detector unless asked to.
package asuser
