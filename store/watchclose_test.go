package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// neverClosingBackend is a Backend whose Watch breaks kv.Backend's promise:
// its channel delivers what the wrapped Backend's watch delivers but never
// closes, not even after ctx ends.
type neverClosingBackend struct {
	kv.Backend
	wg sync.WaitGroup
}

func (b *neverClosingBackend) Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan kv.Event, error) {
	in, err := b.Backend.Watch(ctx, prefix, fromRevision)
	if err != nil {
		return nil, err
	}
	out := make(chan kv.Event)
	b.wg.Go(func() {
		for ev := range in {
			out <- ev // the test reads every event it makes
		}
	})
	return out, nil
}

// A Store's watch closes its channel once its ctx ends, even over a
// Backend that never closes its own: the Store waits drain.Grace (5s)
// for it, then leaves it with an error in the log, instead of keeping a
// goroutine and the caller's channel forever.
func TestWatchEndsOverABackendThatNeverClosesItsWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		b := &neverClosingBackend{Backend: memstore.New()}
		st, err := store.New[typedSpec, typedStatus](b, "Widget", store.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		events, err := st.Watch(ctx, 0)
		require.NoError(t, err)

		_, err = st.As("m").Create(t.Context(), &typedObj{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		ev := <-events
		require.Equal(t, store.Added, ev.Type)
		require.Equal(t, "a", ev.Object.Meta.Name)

		cancel()
		start := time.Now()
		for range events {
		}
		require.LessOrEqual(t, time.Since(start), 5*time.Second, "the watch's channel closes within the grace")
		require.Equal(t, 1, strings.Count(log.String(), "did not close a watch channel"), "one error, for the one channel left: %s", log.String())
		b.wg.Wait()
	})
}

// Over a Backend that keeps its promise, a watch's end costs no wait and
// logs nothing.
func TestWatchEndsAtOnceOverABackendThatClosesItsWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		st, err := store.New[typedSpec, typedStatus](memstore.New(), "Widget", store.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		events, err := st.Watch(ctx, 0)
		require.NoError(t, err)
		cancel()
		start := time.Now()
		for range events {
		}
		require.Zero(t, time.Since(start), "no grace spent")
		require.Empty(t, log.String())
	})
}
