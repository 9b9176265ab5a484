package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
)

// countingHandler counts the lines a production logger (Info and up)
// would print, by level, and keeps the summary lines.
type countingHandler struct {
	mu      sync.Mutex
	byLevel map[slog.Level]int
	bytes   int
	summary []string
}

func (h *countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byLevel[r.Level]++
	h.bytes += b.Len()
	if strings.Contains(r.Message, "keys failing") {
		h.summary = append(h.summary, b.String())
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func (h *countingHandler) lines() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.byLevel {
		n += c
	}
	return n
}

// 100,000 keys that fail at every attempt, each Stalled at its first
// failure, for 2.5 virtual minutes: the log stays a few dozen lines (a
// bounded number of first failures and Stalled transitions per interval,
// retries at Debug, one summary per interval naming the count and the top
// reasons), never a line per failure. Under the race detector: 25,000
// keys (see sweepSize).
func TestFailureLogIsBoundedAt100kFailingKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("100k keys")
	}
	synctest.Test(t, func(t *testing.T) {
		n := sweepSize(100_000)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("obj-%06d", i)
		}
		h := &countingHandler{byLevel: map[slog.Level]int{}}
		r := Func[string](func(_ context.Context, key string) (Result, error) {
			if key[len(key)-1] == '7' {
				return Result{}, fmt.Errorf("dial %s: connection refused", key)
			}
			return Result{}, errors.New("quota exceeded")
		})
		// Retries a minute apart keep the test's CPU down; the default
		// retry bucket still paces them.
		l, err := New("fleet", r, keySet(keys...), WithWorkers(4), WithStallAfter(1), WithLogger(slog.New(h)),
			WithBackoff(backoff.Policy{Base: time.Minute, Factor: 2, Cap: 2 * time.Minute}))
		require.NoError(t, err)
		stop := start(t, l)
		time.Sleep(150 * time.Second)
		synctest.Wait()
		require.NoError(t, stop())
		h.mu.Lock()
		defer h.mu.Unlock()
		t.Logf("lines by level: %v, %d bytes; summaries:\n%s", h.byLevel, h.bytes, strings.Join(h.summary, "\n"))
		total := 0
		for _, c := range h.byLevel {
			total += c
		}
		require.LessOrEqual(t, total, 100, "lines at Info and above")
		require.NotEmpty(t, h.summary, "one summary per interval")
		require.Contains(t, h.summary[0], fmt.Sprintf("failing=%d", n))
		require.Contains(t, h.summary[0], "quota exceeded")
		require.Contains(t, h.summary[0], "dial <key>: connection refused", "the key is taken out of a reason")
	})
}

// sweepSize is the size of a test's sweep (keys, seeds): n, or a quarter of
// it under the race detector, which needs the code paths, not the size,
// and slows these tests about tenfold. scripts/test.sh (README's command)
// runs them without it, at n.
func sweepSize(n int) int {
	if raceEnabled {
		return n / 4
	}
	return n
}
