package cache_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/store/cache"
)

// TestMain turns the mutation detector on for every Cache the tests create
// (as any user's tests can) and checks that no test leaks a goroutine.
func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1")
	goleak.VerifyTestMain(m)
}
