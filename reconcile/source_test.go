package reconcile

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// hintSink records the keys added to it.
type hintSink struct {
	mu   sync.Mutex
	keys []string
}

func (s *hintSink) Add(k string)                       { s.mu.Lock(); s.keys = append(s.keys, k); s.mu.Unlock() }
func (s *hintSink) AddLow(k string)                    { s.Add(k) }
func (s *hintSink) AddAfter(k string, _ time.Duration) { s.Add(k) }

func (s *hintSink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.keys)
	slices.Sort(out)
	return out
}

// Run of joined sources, for code that runs a Source itself: every source
// delivers to the sink, and the first failure stops the others.
func TestSourcesRunDeliversFromEachAndStopsOnFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := make(chan string), make(chan string)
		sink := &hintSink{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Sources(FromChannel(a), nil, FromChannel(b)).Run(ctx, sink) }()
		a <- "x"
		b <- "y"
		synctest.Wait()
		require.Equal(t, []string{"x", "y"}, sink.got())
		cancel()
		require.NoError(t, <-done)

		errBroken := errors.New("broken")
		stopped := make(chan struct{})
		waiting := SourceFunc[string](func(ctx context.Context, _ Sink[string]) error {
			<-ctx.Done()
			close(stopped)
			return nil
		})
		failing := SourceFunc[string](func(context.Context, Sink[string]) error { return errBroken })
		require.ErrorIs(t, Sources(waiting, failing).Run(context.Background(), sink), errBroken)
		<-stopped // the failure stopped the other source
	})
}
