package events_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/events"
	"github.com/steady-go/steady/store/memstore"
)

// run runs r until the test's end.
func run(t *testing.T, r *events.Recorder) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(t, r.Run(ctx)) })
	stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stop)
	return stop
}

func ev(name, reason string) events.Event {
	return events.Event{Kind: "App", Name: name, Type: events.Warning, Reason: reason, Message: "it broke", Source: "apps"}
}

// A repeated event is one stored event whose count and last time move.
func TestRepeatsAreAggregated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := events.New(memstore.New())
		require.NoError(t, err)
		run(t, r)
		start := time.Now()
		for range 5 {
			r.Record(ev("web", "Failed"))
			time.Sleep(time.Second)
			synctest.Wait()
		}
		r.Record(events.Event{Kind: "App", Name: "web", Reason: "Scaled", Message: "to 3"})
		synctest.Wait()
		got, err := r.For(t.Context(), "App", "web")
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, "Failed", got[0].Reason)
		require.Equal(t, 5, got[0].Count)
		require.True(t, start.Equal(got[0].First))
		require.True(t, start.Add(4*time.Second).Equal(got[0].Last))
		require.Equal(t, events.Normal, got[1].Type, "the default type")
		require.Equal(t, 1, got[1].Count)
		other, err := r.For(t.Context(), "App", "db")
		require.NoError(t, err)
		require.Empty(t, other)
	})
}

// At most WithPerObject events per object and WithTotal in all, the least
// recently seen going first; an event not seen for the TTL goes.
func TestHistoryIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memstore.New()
		r, err := events.New(b, events.WithPerObject(3), events.WithTotal(5), events.WithTTL(10*time.Minute))
		require.NoError(t, err)
		run(t, r)
		for i := range 6 {
			r.Record(ev("web", fmt.Sprintf("Reason%d", i)))
			time.Sleep(time.Second)
			synctest.Wait()
		}
		got, err := r.For(t.Context(), "App", "web")
		require.NoError(t, err)
		require.Len(t, got, 3, "per object")
		require.Equal(t, "Reason3", got[0].Reason, "the oldest went first")
		for i := range 4 {
			r.Record(ev(fmt.Sprintf("obj-%d", i), "Failed"))
			time.Sleep(time.Second)
			synctest.Wait()
		}
		got, err = r.For(t.Context(), "App", "web")
		require.NoError(t, err)
		require.Len(t, got, 1, "in all: 5, so web's oldest went")
		require.Equal(t, "Reason5", got[0].Reason)

		time.Sleep(11 * time.Minute)
		synctest.Wait()
		for _, name := range []string{"web", "obj-3"} {
			got, err = r.For(t.Context(), "App", name)
			require.NoError(t, err)
			require.Empty(t, got, "expired")
		}
		require.Equal(t, int64(10), r.Stats().Deleted)
	})
}

// Record never blocks: with nobody writing, a full buffer drops and counts.
func TestRecordDropsWhenTheBufferIsFull(t *testing.T) {
	r, err := events.New(memstore.New(), events.WithBuffer(2))
	require.NoError(t, err)
	for i := range 5 {
		r.Record(ev("web", fmt.Sprintf("R%d", i)))
	}
	r.Record(events.Event{Name: "web", Reason: "NoKind"})
	s := r.Stats()
	require.Equal(t, int64(2), s.Recorded)
	require.Equal(t, int64(4), s.Dropped)
	require.Len(t, r.Recent(), 2)
	require.Equal(t, "R1", r.Recent()[0].Reason, "newest first")
	var nilRec *events.Recorder
	nilRec.Record(ev("web", "R")) // does nothing
}

// A Recorder on a store that has events counts them in its bounds.
func TestBoundsCountEventsOfEarlierRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := memstore.New()
		r1, err := events.New(b)
		require.NoError(t, err)
		stop := run(t, r1)
		for i := range 3 {
			r1.Record(ev("web", fmt.Sprintf("R%d", i)))
			time.Sleep(time.Second)
			synctest.Wait()
		}
		stop()
		r2, err := events.New(b, events.WithPerObject(2))
		require.NoError(t, err)
		run(t, r2)
		r2.Record(ev("web", "R3"))
		synctest.Wait()
		got, err := r2.For(t.Context(), "App", "web")
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, []string{"R2", "R3"}, []string{got[0].Reason, got[1].Reason})
	})
}

func TestBadOptions(t *testing.T) {
	for _, o := range []events.Option{events.WithPerObject(0), events.WithTotal(-1), events.WithTTL(0), events.WithBuffer(0), events.WithClock(nil)} {
		_, err := events.New(memstore.New(), o)
		require.Error(t, err)
	}
}
