package reconciletest_test

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store/cache"
)

// -seed replays one schedule; -schedules sets how many TestSchedules runs.
func init() { reconciletest.RegisterFlags(flag.CommandLine) }

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	goleak.VerifyTestMain(m)
}
