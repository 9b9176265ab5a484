package reconciletest_test

import (
	"testing"

	"github.com/steady-go/steady/reconcile/reconciletest"
)

// TestEchoExample runs the package example's Config, as a user's test
// would: -schedules seeded schedules of every fault.
func TestEchoExample(t *testing.T) {
	cfg := echoConfig()
	cfg.Schedules = 50
	reconciletest.Run(t, cfg)
}
