package goroutines_test

import (
	"testing"

	"github.com/steady-go/steady/internal/goroutines"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func parked(ready chan<- struct{}, stop <-chan struct{}) {
	ready <- struct{}{}
	<-stop
}

func TestCountFindsEachGoroutineOnce(t *testing.T) {
	const n = 3
	stop := make(chan struct{})
	ready := make(chan struct{})
	for range n {
		go parked(ready, stop)
	}
	for range n {
		<-ready
	}
	require := func(want, got int, what string) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: got %d, want %d", what, got, want)
		}
	}
	require(n, goroutines.Count("goroutines_test.parked("), "one substring")
	require(n, goroutines.Count("goroutines_test.parked(", "chanrecv"), "a goroutine matching two substrings counts once")
	require(0, goroutines.Count("no such function("), "no match")
	close(stop)
}

func TestStacksHoldsALongDumpWhole(t *testing.T) {
	// Enough goroutines for a dump over the first 1 MiB buffer.
	const n = 5000
	stop := make(chan struct{})
	ready := make(chan struct{})
	for range n {
		go parked(ready, stop)
	}
	for range n {
		<-ready
	}
	if got := goroutines.Count("goroutines_test.parked("); got != n {
		t.Errorf("got %d, want %d", got, n)
	}
	close(stop)
}
