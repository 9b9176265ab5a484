//go:build race

package memstore

// raceScale divides the runs of the heaviest tests under the race detector.
const raceScale = 4
