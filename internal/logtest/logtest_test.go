package logtest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/steady-go/steady/internal/logtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Writers and a reader at once (run with -race): every line arrives whole.
func TestBufferTakesConcurrentWrites(t *testing.T) {
	var b logtest.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "line\n"); got != 800 {
		t.Fatalf("got %d lines, want 800", got)
	}
}
