package reconciletest_test

import (
	"flag"
	"os"
	"runtime/debug"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store/cache"
)

// -seed replays one schedule; -schedules sets how many TestSchedules runs.
func init() { reconciletest.RegisterFlags(flag.CommandLine) }

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	// The schedules make garbage fast over a small live heap, so at the
	// default GOGC the collector ran every few MB, each time scanning the
	// stacks of every schedule's goroutines: TestCorpus took 70 CPU-s at
	// GOGC 100, 54 at 200 (peak RSS 31 and 39 MB), and 48 at 400 but
	// with a peak RSS of 260 MB. An explicit GOGC still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	goleak.VerifyTestMain(m)
}
