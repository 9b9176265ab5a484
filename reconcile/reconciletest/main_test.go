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
	// A schedule allocates about 4 MB, all of it garbage by its end, while
	// the live heap stays small: at the default GOGC the collector ran
	// every few MB, each time scanning the stacks of every schedule's
	// goroutines, and its workers alone took a tenth of TestCorpus's CPU
	// profile. Four times the headroom keeps the peak RSS under 100 MB.
	// An explicit GOGC still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	goleak.VerifyTestMain(m)
}
