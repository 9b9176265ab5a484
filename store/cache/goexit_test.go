package cache_test

import (
	"log/slog"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// A handler that calls runtime.Goexit (t.FailNow outside the test's
// goroutine) ends Run's goroutine, which no recover stops, and Run never
// returns. It used to do so without a word; now it is logged at Error,
// LastError says so, and WaitForSync says the Cache is not running.
func TestHandlerThatCallsGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		_, err = st.As("user").Create(t.Context(), &store.Object[cacheSpec, cacheStatus]{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		var logs syncBuffer
		c := cache.New[cacheSpec, cacheStatus](st, cache.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		c.AddHandler(func(_, _ *store.Object[cacheSpec, cacheStatus]) { runtime.Goexit() })
		returned := make(chan struct{})
		go func() {
			defer close(returned) // runs: Goexit runs the defers
			_ = c.Run(t.Context())
		}()
		<-returned
		require.ErrorIs(t, c.WaitForSync(t.Context()), cache.ErrNotRunning)
		require.ErrorContains(t, c.LastError(), "runtime.Goexit")
		require.Contains(t, logs.String(), `level=ERROR msg="cache: Run's goroutine ended by runtime.Goexit`)
		require.Contains(t, logs.String(), "goexit_test.go:", "with the stack")
	})
}
