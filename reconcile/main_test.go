package reconcile

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/store/cache"
)

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	goleak.VerifyTestMain(m)
}
