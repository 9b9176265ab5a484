//go:build race

package cache_test

// raceScale divides the sizes of the heaviest tests under the race detector.
const raceScale = 20
