// Package goroutines reads the stacks of all running goroutines, for tests
// that check which goroutines a piece of code runs or leaves behind.
// runtime.NumGoroutine cannot tell them apart from goroutines of earlier
// tests that are still winding down.
package goroutines

import (
	"runtime"
	"strings"
)

// Stacks returns the stacks of all goroutines, as runtime.Stack prints them
// (one goroutine per paragraph), however long the dump.
func Stacks() string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Count returns how many goroutines have a stack that contains any of
// the substrings (a function's name, such as "kvwatch.Watch.Run(").
func Count(substrings ...string) int {
	n := 0
	for _, g := range strings.Split(Stacks(), "\n\n") {
		for _, s := range substrings {
			if strings.Contains(g, s) {
				n++
				break
			}
		}
	}
	return n
}
