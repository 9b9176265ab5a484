package cache_test

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// The tests in this file pin down what a Cache that reads memstore's watch
// in place does with a burst of events its cursor reads at once: its
// handlers, WaitFor calls and final state are what a Cache that reads the
// same writes from the watch's channel, one event as it arrives, gives.
// They hold of any Cache that applies such a burst as one batch too.

// holdable is a handler that can be held: while hold is set, each call
// waits, after recording, until the test releases it. Holding the first
// event of a burst makes the Cache read the rest of it at once.
type holdable struct {
	recorder
	hold    atomic.Bool
	release chan struct{}
}

func (h *holdable) handle(old, new *cobj) {
	h.recorder.handle(old, new)
	if h.hold.Load() {
		<-h.release
	}
}

// burst is a random writer of Widgets over b: creations, spec and status
// updates, deletions, values that do not decode (and their repair or
// deletion), and writes to another kind, which the Widgets' watch skips.
type burst struct {
	t    *testing.T
	b    *memstore.Store
	st   *store.Store[cacheSpec, cacheStatus]
	rnd  *rand.Rand
	good []string // decodable Widgets
	bad  []string // Widgets whose value does not decode
	next int
}

func (w *burst) raw(write kv.Write) int64 {
	rev, err := w.b.Txn(w.t.Context(), nil, write)
	require.NoError(w.t, err)
	return rev
}

// write makes one random write and returns its revision.
func (w *burst) write() int64 {
	ctx, t := w.t.Context(), w.t
	pick := func(names *[]string) string {
		i := w.rnd.IntN(len(*names))
		name := (*names)[i]
		*names = slices.Delete(*names, i, i+1)
		return name
	}
	switch roll := w.rnd.IntN(100); {
	case roll < 15 || len(w.good) == 0:
		name := fmt.Sprintf("n%03d", w.next)
		w.next++
		rev, err := w.st.As("writer").Create(ctx, &cobj{Meta: store.Meta{Name: name}, Spec: cacheSpec{Image: "v1"}})
		require.NoError(t, err)
		w.good = append(w.good, name)
		return rev
	case roll < 45:
		o, err := w.st.Get(ctx, w.good[w.rnd.IntN(len(w.good))])
		require.NoError(t, err)
		o.Spec.Replicas++
		rev, err := w.st.As("writer").Update(ctx, o)
		require.NoError(t, err)
		return rev
	case roll < 70:
		o, err := w.st.Get(ctx, w.good[w.rnd.IntN(len(w.good))])
		require.NoError(t, err)
		o.Status.Ready++
		rev, err := w.st.As("writer").UpdateStatus(ctx, o)
		require.NoError(t, err)
		return rev
	case roll < 80:
		rev, err := w.st.As("writer").Delete(ctx, pick(&w.good))
		require.NoError(t, err)
		return rev
	case roll < 88:
		name := pick(&w.good)
		w.bad = append(w.bad, name)
		return w.raw(kv.Write{Kind: kv.WritePut, Key: "Widget/" + name, Value: []byte("not json")})
	case roll < 94 && len(w.bad) > 0:
		name := pick(&w.bad)
		if w.rnd.IntN(2) == 0 {
			return w.raw(kv.Write{Kind: kv.WriteDelete, Key: "Widget/" + name})
		}
		w.good = append(w.good, name)
		v := fmt.Sprintf(`{"metadata":{"kind":"Widget","name":%q,"uid":"u-%s"},"spec":{"image":"fixed"}}`, name, name)
		return w.raw(kv.Write{Kind: kv.WritePut, Key: "Widget/" + name, Value: []byte(v)})
	default:
		return w.raw(kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("Gadget/g%d", w.rnd.IntN(3)), Value: []byte("{}")})
	}
}

// A Cache that reads bursts of events in place tells its handlers of the
// same changes, in the same order, as one that reads them from a channel,
// ends holding the same objects and quarantine at the same revision, and
// returns from WaitFor on every revision written.
func TestInPlaceTellsOfABurstWhatTheChannelTells(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				b := memstore.New()
				w := &burst{t: t, b: b, st: newWidgets(t, b), rnd: rand.New(rand.NewPCG(seed, 48))}
				for range 8 {
					w.write()
				}
				batched := cache.New(w.st, cache.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
				oneByOne := cache.New(newWidgets(t, hiddenFollower{b}), cache.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
				h := &holdable{release: make(chan struct{})}
				var rec recorder
				batched.AddHandler(h.handle)
				oneByOne.AddHandler(rec.handle)
				defer startCache(t, batched)()
				defer startCache(t, oneByOne)()
				require.NoError(t, batched.WaitForSync(ctx))
				require.NoError(t, oneByOne.WaitForSync(ctx))

				var revs []int64
				for range 12 {
					// The first write's handler holds the Cache while the
					// rest of the burst is written.
					h.hold.Store(true)
					revs = append(revs, w.write())
					synctest.Wait()
					for range 1 + w.rnd.IntN(40) {
						revs = append(revs, w.write())
					}
					synctest.Wait()
					h.hold.Store(false)
					close(h.release)
					h.release = make(chan struct{}) // the handler reads it no more: hold is off
					synctest.Wait()
				}
				for _, rev := range revs {
					require.NoError(t, batched.WaitFor(ctx, rev))
					require.NoError(t, oneByOne.WaitFor(ctx, rev))
				}
				synctest.Wait()

				require.Equal(t, rec.take(), h.take(), "the same changes, in the same order")
				require.Equal(t, oneByOne.Revision(), batched.Revision())
				require.Equal(t, oneByOne.Quarantined(), batched.Quarantined())
				require.Equal(t, objNames(oneByOne.List(nil)), objNames(batched.List(nil)))
				for _, o := range oneByOne.List(nil) {
					got, ok := batched.Get(o.Meta.Name)
					require.True(t, ok)
					require.Equal(t, o, got, "%s", o.Meta.Name)
				}
			})
		})
	}
}

// stepper is a handler that stops at each call until the test lets it go
// on, and tells the test which object it was called on.
type stepper struct {
	on   atomic.Bool
	at   chan string
	goOn chan struct{}
}

func (s *stepper) handle(old, new *cobj) {
	if !s.on.Load() || new == nil {
		return
	}
	s.at <- new.Meta.Name
	<-s.goOn
}

// Within a burst, a WaitFor call returns once the handlers have been told
// of its revision's change, and before they hear of the next change (not
// at the burst's end).
func TestWaitForReturnsBetweenItsChangesHandlersAndTheNextsWithinABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := memstore.New()
		st := newWidgets(t, b)
		names := createN(t, st, 6)
		c := cache.New(st)
		s := &stepper{at: make(chan string), goOn: make(chan struct{})}
		c.AddHandler(s.handle)
		defer startCache(t, c)()
		require.NoError(t, c.WaitForSync(ctx))

		s.on.Store(true)
		bump(t, st, names[0]) // its handler holds the Cache while the others are written
		require.Equal(t, names[0], <-s.at)
		var revs []int64
		for _, name := range names[1:] {
			bump(t, st, name)
			o, err := st.Get(ctx, name)
			require.NoError(t, err)
			revs = append(revs, o.Meta.Revision)
		}
		returned := make([]atomic.Bool, len(revs))
		var wg sync.WaitGroup
		for i, rev := range revs {
			wg.Go(func() {
				require.NoError(t, c.WaitFor(ctx, rev))
				returned[i].Store(true)
			})
		}
		synctest.Wait()
		s.goOn <- struct{}{}

		for i, name := range names[1:] {
			require.Equal(t, name, <-s.at)
			synctest.Wait()
			for j := range revs {
				require.Equal(t, j < i, returned[j].Load(), "at the handler of change %d, WaitFor(%d) has returned", i, j)
			}
			s.goOn <- struct{}{}
		}
		wg.Wait()
	})
}

// A handler that panics on one change of a burst misses that change, and
// nothing else: it and the other handlers hear of the rest of the burst,
// and the Cache applies all of it.
func TestAHandlerThatPanicsMidBurstMissesOnlyThatChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := memstore.New()
		st := newWidgets(t, b)
		names := createN(t, st, 6)
		c := cache.New(st, cache.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		h := &holdable{release: make(chan struct{})}
		var panicky recorder
		c.AddHandler(h.handle)
		c.AddHandler(func(old, new *cobj) {
			if old != nil && new != nil && new.Meta.Name == names[3] {
				panic("handler bug")
			}
			panicky.handle(old, new)
		})
		defer startCache(t, c)()
		require.NoError(t, c.WaitForSync(ctx))
		h.take()
		panicky.take()

		h.hold.Store(true)
		bump(t, st, names[0])
		synctest.Wait()
		for _, name := range names[1:] {
			bump(t, st, name)
		}
		synctest.Wait()
		h.hold.Store(false)
		close(h.release)
		o, err := st.Get(ctx, names[5])
		require.NoError(t, err)
		require.NoError(t, c.WaitFor(ctx, o.Meta.Revision))

		all := h.take()
		require.Len(t, all, 6)
		require.Equal(t, slices.Delete(slices.Clone(all), 3, 4), panicky.take(), "the panicking handler misses its change alone")
		require.EqualValues(t, 1, c.Panics())
		got, _ := c.Get(names[5])
		require.Equal(t, o.Meta.Revision, got.Meta.Revision)
	})
}
