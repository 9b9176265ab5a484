package reconcile

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// downBackend is a ListWatcher whose every List fails.
type downBackend struct{}

func (downBackend) List(context.Context, store.ListOptions) (*store.List[appSpec, appStatus], error) {
	return nil, errors.New("backend down: connection refused")
}

func (downBackend) Watch(context.Context, int64) (<-chan store.Event[appSpec, appStatus], error) {
	return nil, errors.New("backend down: connection refused")
}

// A Loop waiting for a cache says so: every 30s at Warn, which source, for
// how long, and the cache's last list or watch error; cancelled, Run says it
// never synced. (A Manager's Ready names the cache and its error: see
// package manager.)
func TestWaitingForACacheIsReported(t *testing.T) {
	for _, tt := range []struct {
		name    string
		run     bool // run the cache (over a backend that is down)
		lastErr string
	}{
		{name: "cache never started"},
		{name: "backend down", run: true, lastErr: "backend down: connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "App", nil)
				defer e.stop()
				c := cache.New[appSpec, appStatus](downBackend{})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.run {
					go func() { _ = c.Run(ctx) }()
				}
				var logs logBuffer
				l := mustNew(t, Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }),
					FromStore(c, e.st), WithLogger(newLogger(&logs)))
				stop := start(t, l)
				time.Sleep(65 * time.Second)
				synctest.Wait()
				// Before: nothing was logged, even at Debug.
				lines := 0
				for _, line := range splitLines(logs.String()) {
					if strings.Contains(line, `level=WARN msg="waiting for a source to sync"`) {
						lines++
						require.Contains(t, line, `what=FromStore(App)`)
						require.Contains(t, line, "waited=")
						if tt.lastErr != "" {
							require.Contains(t, line, tt.lastErr)
						}
					}
				}
				require.Equal(t, 2, lines, "one line every 30s")

				// Before: Run returned nil.
				err := stop()
				require.ErrorIs(t, err, ErrNotSynced)
				require.ErrorContains(t, err, "source 0 (FromStore(App)), after 1m5s")
				if tt.lastErr != "" {
					require.ErrorContains(t, err, tt.lastErr)
				}
				cancel()
			})
		})
	}
}

// The default logger is slog.Default(): a reconcile that always fails is
// seen (at Error), while per-key chatter stays at Debug.
func TestDefaultLoggerShowsErrorsNotChatter(t *testing.T) {
	var logs logBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	defer slog.SetDefault(old)
	synctest.Test(t, func(t *testing.T) {
		s := newScript(func(key string, _ int) (Result, error) {
			if key == "bad" {
				return Result{}, errBoom
			}
			return Result{}, nil
		})
		l := mustNew(t, s, keySet("good", "bad"), fixedBackoff()...)
		stop := start(t, l)
		time.Sleep(time.Second)
		synctest.Wait()
		require.NoError(t, stop())
	})
	out := logs.String()
	// Before: nothing at all (the default discarded every line).
	require.Contains(t, out, `level=WARN msg="reconcile failed" controller=test key=bad`)
	require.NotContains(t, out, "key=good", "a healthy key's chatter is at Debug")
}
