package events_test

// Black-box tests of the documented contract, written from the package
// documentation alone, with the misuse a client-go user brings in mind.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/events"
	"github.com/steady-go/steady/store/memstore"
)

// An event is about any object name, not only names the store accepts for
// its own objects: names with "/", spaces, other scripts, or longer than a
// store name may be are recorded, kept and found by For, and two objects
// whose names differ keep apart histories.
func TestBlackbox49EventsAboutOddNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := events.New(memstore.New())
		require.NoError(t, err)
		names := []string{"ns/app", "Straße 1", "日本", ".", "..", "UPPER", strings.Repeat("x", 300), strings.Repeat("x", 301)}
		for _, n := range names {
			r.Record(events.Event{Kind: "App", Name: n, Reason: "Seen", Message: n})
		}
		stop := run(t, r)
		synctest.Wait()
		for _, n := range names {
			got, err := r.For(context.Background(), "App", n)
			require.NoError(t, err, "%.20q", n)
			require.Len(t, got, 1, "%.20q", n)
			require.Equal(t, n, got[0].Name)
			require.Equal(t, n, got[0].Message)
			require.Equal(t, events.Normal, got[0].Type, "Type defaults to Normal")
		}
		stop()
		st := r.Stats()
		require.Equal(t, int64(len(names)), st.Written)
		require.Zero(t, st.WriteErrors)
	})
}

// Record never blocks and never fails, whatever it is given: an event
// missing its Kind, Name or Reason, and any Record after the buffer filled
// up, is dropped and counted. Recent lists only the events taken, at most
// the last 100, newest first.
func TestBlackbox49RecordNeverBlocksAndCountsDrops(t *testing.T) {
	r, err := events.New(memstore.New(), events.WithBuffer(150))
	require.NoError(t, err)
	for _, e := range []events.Event{{}, {Name: "a", Reason: "R"}, {Kind: "App", Reason: "R"}, {Kind: "App", Name: "a"}} {
		r.Record(e)
	}
	require.Equal(t, events.Stats{Dropped: 4}, r.Stats())
	for i := range 200 {
		r.Record(events.Event{Kind: "App", Name: "a", Reason: fmt.Sprint("R", i)})
	}
	require.Equal(t, events.Stats{Recorded: 150, Dropped: 4 + 50}, r.Stats(), "no Run: the buffer fills up")
	recent := r.Recent()
	require.Len(t, recent, 100)
	require.Equal(t, "R149", recent[0].Reason, "newest taken first")
	require.Equal(t, "R50", recent[99].Reason)

	var nilRecorder *events.Recorder
	nilRecorder.Record(events.Event{Kind: "App", Name: "a", Reason: "R"}) // drops, no panic
}

// Emit does nothing for a ctx without an emitter, or with a nil one, and
// calls the one NewContext installed, from any goroutine.
func TestBlackbox49EmitWithAndWithoutAnEmitter(t *testing.T) {
	events.Emit(context.Background(), events.Normal, "Nobody", "listens")
	events.Emit(events.NewContext(context.Background(), nil), events.Normal, "Nil", "emitter")
	var mu sync.Mutex
	var got []string
	ctx := events.NewContext(context.Background(), func(typ, reason, message string) {
		mu.Lock()
		got = append(got, typ+" "+reason+" "+message)
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { events.Emit(ctx, events.Warning, "Broke", "twice") })
	}
	wg.Wait()
	require.Len(t, got, 8)
	require.Equal(t, "Warning Broke twice", got[0])
}

// "An event not seen for WithTTL is deleted", whatever the TTL: the
// shortest TTL WithTTL accepts, one nanosecond, still lets Run write,
// sweep and stop, rather than spinning on sweeps due every tenth of it
// (which rounds to nothing).
func TestBlackbox49TinyTTLDoesNotSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := events.New(memstore.New(), events.WithTTL(time.Nanosecond))
		require.NoError(t, err)
		stop := run(t, r)
		r.Record(ev("a", "Broke"))
		synctest.Wait() // returns only once Run waits: it does not spin
		time.Sleep(time.Second)
		synctest.Wait()
		got, err := r.For(context.Background(), "App", "a")
		require.NoError(t, err)
		require.Empty(t, got, "swept: not seen for its TTL")
		require.Equal(t, int64(1), r.Stats().Written)
		require.Equal(t, int64(1), r.Stats().Deleted)
		stop()
	})
}

// Run with a ctx already cancelled returns nil (ctx ended), and the
// Recorder still runs once: a second Run is an error.
func TestBlackbox49RunWithACancelledContext(t *testing.T) {
	r, err := events.New(memstore.New())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, r.Run(ctx))
	require.Error(t, r.Run(context.Background()), "a second Run")
}

// pinnedClock is a clock.Clock whose methods need a non-nil receiver.
type pinnedClock struct{ now time.Time }

func (c *pinnedClock) Now() time.Time { return c.now }
func (c *pinnedClock) NewTimer(d time.Duration) clock.Timer {
	return clock.Real{}.NewTimer(d)
}

// A bad option makes New fail, and WithClock(nil) is one: a typed nil (a
// nil *T) as much as an untyped one, not found later by a Record that
// "never fails" reading the time from it.
func TestBlackbox49TypedNilClockIsRefused(t *testing.T) {
	var typedNil *pinnedClock
	for _, c := range []clock.Clock{nil, typedNil} {
		r, err := events.New(memstore.New(), events.WithClock(c))
		require.Error(t, err, "%T", c)
		require.Nil(t, r)
	}
	r, err := events.New(memstore.New(), events.WithClock(&pinnedClock{now: time.Unix(7, 0)}))
	require.NoError(t, err)
	r.Record(events.Event{Kind: "App", Name: "a", Reason: "R"})
	require.Equal(t, time.Unix(7, 0), r.Recent()[0].First)
}
