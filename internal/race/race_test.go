package race_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/internal/race"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Without the race detector a sweep runs in full; with it, a fraction that
// never drops to zero iterations.
func TestSweep(t *testing.T) {
	want := map[bool][3]int{false: {2000, 3, 0}, true: {250, 1, 0}}[race.Enabled]
	for i, n := range []int{2000, 3, 0} {
		if got := race.Sweep(n, 8); got != want[i] {
			t.Errorf("Sweep(%d, 8) = %d with race.Enabled = %v, want %d", n, got, race.Enabled, want[i])
		}
	}
}
