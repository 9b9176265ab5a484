package clock_test

import (
	"fmt"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/queue"
)

// stopped is a clock that never moves: a key delayed on it never becomes
// ready. A real test clock would also fire its timers when advanced.
type stopped struct{ now time.Time }

func (c stopped) Now() time.Time                       { return c.now }
func (c stopped) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(time.Hour * 1e6) }

// Any type with Now and NewTimer can stand in for the wall clock.
func Example() {
	q := queue.New[string](queue.WithClock(stopped{now: time.Unix(0, 0)}))
	q.AddAfter("a", time.Second)
	q.Add("b")
	fmt.Println(q.Len())
	// Output: 1
}
