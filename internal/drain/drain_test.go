package drain_test

import (
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/drain"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A channel its sender closes after a backlog is read to its end, at once.
func TestWithinReadsToTheClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int)
		go func() {
			for i := range 100 {
				ch <- i // blocked until read: a sender waiting to see its ctx end
			}
			close(ch)
		}()
		start := time.Now()
		if !drain.Within(ch, clock.Real{}, drain.Grace) {
			t.Fatal("Within reported a closed channel as left open")
		}
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("Within waited %v for a channel closed at once", waited)
		}
	})
}

// A channel its sender never closes is left after the grace, not before.
func TestWithinLeavesAChannelNeverClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan int, 1)
		ch <- 1
		start := time.Now()
		if drain.Within(ch, clock.Real{}, drain.Grace) {
			t.Fatal("Within reported an open channel as closed")
		}
		if waited := time.Since(start); waited != drain.Grace {
			t.Fatalf("Within left the channel after %v, want %v", waited, drain.Grace)
		}
		if len(ch) != 0 {
			t.Fatal("Within left a value unread")
		}
	})
}
