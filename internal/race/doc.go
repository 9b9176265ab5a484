// Package race lets a property test run a fraction of its iterations under
// the race detector. The detector needs each code path run concurrently
// once, not every random input, and it makes each iteration several times
// slower; scripts/test.sh runs the same tests in full without -race.
package race

// Sweep is the number of iterations a sweep of n runs: n, or n/div under
// the race detector, but at least 1 if n is. div must be positive.
func Sweep(n, div int) int {
	if !Enabled {
		return n
	}
	return max(min(n, 1), n/div)
}
