// Package drain is how a watch's reader lets go of a channel it stopped
// following: it reads what is left until the sender closes the channel, so
// that a sender blocked on a send sees its ctx end and finishes, but for a
// bounded time, so that a sender that never closes (one that ignores its
// ctx) cannot keep the reader. Used by store's Watch over a kv.Backend and
// by store/cache's Run over a ListWatcher.
package drain

import (
	"time"

	"github.com/steady-go/steady/clock"
)

// Grace is how long a reader waits, after it stopped reading a watch channel
// and ended the watch's ctx, for the sender to close it.
const Grace = 5 * time.Second

// Within reads and discards ch's values until ch is closed, for at most d
// on clk. It reports whether ch was closed; when not, the caller leaves ch
// to its sender and says so in its log.
func Within[E any](ch <-chan E, clk clock.Clock, d time.Duration) (closed bool) {
	timer := clk.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case _, open := <-ch:
			if !open {
				return true
			}
		case <-timer.C():
			return false
		}
	}
}
