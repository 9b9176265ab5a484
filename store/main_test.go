package store_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain is the one TestMain of package store's tests (internal and
// external); it checks that no test leaks a goroutine.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
