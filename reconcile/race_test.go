//go:build race

package reconcile

// raceEnabled reports whether the race detector is on (see sweepSize).
const raceEnabled = true
