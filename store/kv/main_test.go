package kv_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test of package kv leaks a goroutine.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
