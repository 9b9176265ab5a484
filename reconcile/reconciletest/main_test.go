package reconciletest_test

import (
	"flag"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/reconcile/reconciletest"
)

// -seed replays one schedule; -schedules sets how many TestSchedules runs.
func init() { reconciletest.RegisterFlags(flag.CommandLine) }

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
