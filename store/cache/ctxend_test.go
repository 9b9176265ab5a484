package cache_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// backlogSource lists nothing and watches with a channel that already holds
// a backlog of adds, as a source that read ahead of a slow Cache does; it
// closes the channel when the watch's ctx ends, leaving the backlog in it.
type backlogSource struct{ backlog int }

func (backlogSource) List(context.Context, store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	return &store.List[cacheSpec, cacheStatus]{Revision: 1}, nil
}

func (s backlogSource) Watch(ctx context.Context, _ int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	ch := make(chan store.Event[cacheSpec, cacheStatus], s.backlog)
	for i := range s.backlog {
		rev := int64(i + 2)
		ch <- store.Event[cacheSpec, cacheStatus]{Type: store.Added, Revision: rev,
			Object: &cobj{Meta: store.Meta{Kind: "Widget", Name: fmt.Sprintf("w%d", i), Revision: rev}}}
	}
	context.AfterFunc(ctx, func() { close(ch) })
	return ch, nil
}

// TestRunStopsApplyingOnceItsContextEnds: a watch channel that holds a
// backlog when Run's ctx ends is not applied to its end. Run stops within
// the event it was applying, as it does over a Store's own watch, so no
// handler runs for a Cache its owner has stopped.
func TestRunStopsApplyingOnceItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	c := cache.New[cacheSpec, cacheStatus](backlogSource{backlog: 100})
	calls := 0
	c.AddHandler(func(_, _ *cobj) {
		calls++
		cancel() // the owner stops the Cache from inside the first handler
	})
	require.NoError(t, c.Run(ctx))
	require.Equal(t, 1, calls, "handlers ran after Run's ctx ended")
	require.LessOrEqual(t, c.Len(), 1, "events applied after Run's ctx ended")
}

// neverClosingSource is a source that ignores its watch's ctx: its
// channel is never closed. Its first watch fails with an error event, as a
// source that reports a broken connection and forgets to close does.
type neverClosingSource struct {
	backlogSource
	watches *atomic.Int32
}

func (s neverClosingSource) Watch(ctx context.Context, _ int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	ch := make(chan store.Event[cacheSpec, cacheStatus], 1)
	if s.watches.Add(1) == 1 {
		ch <- store.Event[cacheSpec, cacheStatus]{Err: errors.New("connection reset")}
	}
	return ch, nil
}

// TestRunDoesNotHangOnASourceThatNeverClosesItsWatch: Watch must close its
// channel when its ctx ends. A source that does not costs a grace period
// and an error in the log each time, never a Cache that stops following
// (after a failed watch) or a Run that never returns (after its ctx ended).
func TestRunDoesNotHangOnASourceThatNeverClosesItsWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logged bytes.Buffer
		src := neverClosingSource{watches: new(atomic.Int32)}
		c := cache.New[cacheSpec, cacheStatus](src, cache.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- c.Run(ctx) }()

		time.Sleep(time.Minute) // virtual: the failed watch is left, and a new one started
		synctest.Wait()
		require.Equal(t, int32(2), src.watches.Load(), "the Cache stopped following after a watch that never closed")
		require.Equal(t, 1, strings.Count(logged.String(), "watch channel is still open"), logged.String())

		start := time.Now()
		cancel()
		require.NoError(t, <-done)
		require.LessOrEqual(t, time.Since(start), 5*time.Second, "Run waited past the grace for the source")
		require.Equal(t, 2, strings.Count(logged.String(), "watch channel is still open"), logged.String())
	})
}
