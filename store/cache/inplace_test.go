package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/goroutines"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// The tests in this file pin down what a Cache does while it reads
// memstore's watch history in place (a kvwatch.Cursor on Run's goroutine,
// no channel), under a writer that never stops, and check that a Cache
// that reads the same Store through the Backend's Watch channel does the
// same.

// hiddenFollower passes a memstore through as a plain kv.Backend: it
// embeds the interface, not the *memstore.Store, so it carries none of
// memstore's internal/storeaccess hooks, and a Cache over a Store over it
// reads the watch from Watch's channel, filled by a goroutine of the
// watch's.
type hiddenFollower struct{ kv.Backend }

// watchPath is one of the two ways a Cache over memstore reads its watch.
type watchPath struct {
	name    string
	backend func(*memstore.Store) kv.Backend
	inPlace bool
}

var watchPaths = []watchPath{
	{"in-place", func(m *memstore.Store) kv.Backend { return m }, true},
	{"channel", func(m *memstore.Store) kv.Backend { return hiddenFollower{m} }, false},
}

// onEachPath runs f in a synctest bubble once per watch path.
func onEachPath(t *testing.T, f func(t *testing.T, p watchPath)) {
	for _, p := range watchPaths {
		t.Run(p.name, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { f(t, p) }) })
	}
}

// channelWatches counts the goroutines that fill a memstore watch's
// channel: a Cache reading in place runs none.
func channelWatches() int {
	return goroutines.Count("kvwatch.Watch.Run(")
}

// requireTaken checks that the n running Caches over memstore, all on path
// p, read their watches the way p says.
func (p watchPath) requireTaken(t *testing.T, n int) {
	t.Helper()
	synctest.Wait() // WaitForSync returns before Run starts its watch
	if p.inPlace {
		require.Zero(t, channelWatches(), "a Cache over memstore reads its watch in place")
		return
	}
	require.Equal(t, n, channelWatches(), "a Cache over a hidden memstore reads its watch from a channel")
}

func newWidgets(t *testing.T, b kv.Backend) *store.Store[cacheSpec, cacheStatus] {
	t.Helper()
	st, err := store.New[cacheSpec, cacheStatus](b, "Widget")
	require.NoError(t, err)
	return st
}

// createN creates n objects w00, w01, ... and returns their names.
func createN(t *testing.T, st *store.Store[cacheSpec, cacheStatus], n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("w%02d", i)
		_, err := st.As("writer").Create(t.Context(), &cobj{Meta: store.Meta{Name: name}})
		require.NoError(t, err)
		names = append(names, name)
	}
	return names
}

// bump updates name's Spec (from any goroutine).
func bump(t *testing.T, st *store.Store[cacheSpec, cacheStatus], name string) {
	o, err := st.Get(t.Context(), name)
	if err != nil {
		t.Errorf("get %s: %v", name, err)
		return
	}
	o.Spec.Replicas++
	if _, err := st.As("writer").Update(t.Context(), o); err != nil {
		t.Errorf("update %s: %v", name, err)
	}
}

// writeEvery is another writer: it calls write(0), write(1), ... every
// interval, on a goroutine of its own, until the returned stop is called.
// stop returns how many writes it made; calling it again does nothing.
func writeEvery(interval time.Duration, write func(i int)) (stop func() int) {
	quit, done := make(chan struct{}), make(chan struct{})
	n := 0
	go func() {
		defer close(done)
		for ; ; n++ {
			select {
			case <-quit:
				return
			default:
			}
			write(n)
			time.Sleep(interval)
		}
	}()
	var once sync.Once
	return func() int {
		once.Do(func() { close(quit); <-done })
		return n
	}
}

// readWhileRunning reads the caches in a loop, as reconcilers do, until
// the returned stop is called: the race detector sees the reads beside
// Run's writes.
func readWhileRunning[S, T any](caches ...*cache.Cache[S, T]) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, c := range caches {
				for _, o := range c.List(nil) {
					_ = o.Meta.Labels["tier"]
				}
				c.Get("w01")
				_ = c.Revision()
			}
			select {
			case <-quit:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); <-done }) }
}

// settle waits until every cache reflects the store's revision, and every
// goroutine is idle.
func settle[S, T any](t *testing.T, mem *memstore.Store, caches ...*cache.Cache[S, T]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // virtual time: fails, not hangs, if a Cache stalls
	defer cancel()
	rev := mem.Revision()
	for _, c := range caches {
		require.NoError(t, c.WaitFor(ctx, rev), "the Cache reaches the store's revision %d (it is at %d)", rev, c.Revision())
	}
	synctest.Wait()
	for _, c := range caches {
		require.Equal(t, rev, c.Revision())
	}
}

// requireHolds checks that c holds, field for field, the objects of the
// listing l that chosen selects, and quarantines exactly the undecodable
// values of l whose names chosenName selects; besides those objects it may
// hold only the last valid object of such a key.
func requireHolds(t *testing.T, c *cache.Cache[cacheSpec, cacheStatus], l *store.List[cacheSpec, cacheStatus], chosen func(*cobj) bool, chosenName func(string) bool, what string) {
	t.Helper()
	bad := map[string]bool{}
	var wantBad, gotBad []string
	for _, e := range l.Undecodable {
		if chosenName(e.Name) {
			bad[e.Name] = true
			wantBad = append(wantBad, fmt.Sprintf("%s@%d", e.Key, e.Revision))
		}
	}
	for _, e := range c.Quarantined() {
		gotBad = append(gotBad, fmt.Sprintf("%s@%d", e.Key, e.Revision))
	}
	slices.Sort(gotBad)
	require.Equal(t, wantBad, gotBad, "%s quarantines the undecodable values", what)
	want := map[string]*cobj{}
	for _, o := range l.Items {
		if chosen(o) {
			want[o.Meta.Name] = o
		}
	}
	for name, o := range want {
		got, ok := c.Get(name)
		require.True(t, ok, "%s holds %s", what, name)
		require.Equal(t, *o, *got, "%s: %s", what, name)
	}
	for _, got := range c.List(nil) {
		if want[got.Meta.Name] == nil {
			require.True(t, bad[got.Meta.Name], "%s holds %s@%d, which the store does not", what, got.Meta.Name, got.Meta.Revision)
		}
	}
}

func all(*cobj) bool       { return true }
func allNames(string) bool { return true }
func listOf(t *testing.T, st *store.Store[cacheSpec, cacheStatus]) *store.List[cacheSpec, cacheStatus] {
	t.Helper()
	l, err := st.List(t.Context(), store.ListOptions{})
	require.NoError(t, err)
	return l
}

// A relist period holds for a Cache whose watch never catches up: a writer
// that writes a little faster than the Cache's handler takes keeps the
// watch busy (it never waits for a change), and the Cache still lists the
// kind every period. As the watch loses nothing, no listing repairs
// anything, and the Cache ends equal to the store.
func TestAWatchTheWriterKeepsBusyStillRelistsEveryPeriod(t *testing.T) {
	onEachPath(t, func(t *testing.T, p watchPath) {
		const period = time.Second
		mem := memstore.New(memstore.WithHistorySize(1<<14), memstore.WithWatchBuffer(8))
		st := newWidgets(t, p.backend(mem))
		names := createN(t, st, 20)
		c := cache.New(st, cache.WithRelistPeriod(period))
		var slow atomic.Bool
		c.AddHandler(func(_, _ *cobj) {
			if slow.Load() {
				time.Sleep(20 * time.Millisecond)
			}
		})
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		p.requireTaken(t, 1)
		stopReads := readWhileRunning(c)
		defer stopReads()

		slow.Store(true)
		relists := c.Relists()
		stopWriter := writeEvery(19*time.Millisecond, func(i int) { bump(t, st, names[i%len(names)]) })
		defer stopWriter()
		time.Sleep(2*period + period/2) // the second listing is due by 2s, and served at the next batch
		busyRelists, behind := c.Relists()-relists, mem.Revision()-c.Revision()
		writes := stopWriter()
		t.Logf("%d writes, %d relists while busy, %d revisions behind, %d drift repairs", writes, busyRelists, behind, c.DriftRepairs())
		require.Positive(t, behind, "the watch was still behind the writer: it never waited")
		require.GreaterOrEqual(t, busyRelists, int64(2), "two periods of a busy watch (%d writes), two relists", writes)

		settle(t, mem, c)
		requireHolds(t, c, listOf(t, st), all, allNames, "the Cache")
		require.Zero(t, c.DriftRepairs(), "the watch lost nothing: no listing repaired anything")
	})
}

// tallySpec decodes as cacheSpec does, and counts its decodes in
// tallyDecodes (only TestAWriterThatOutrunsTheWatchWindow... reads it).
type tallySpec struct {
	Image    string `json:"image"`
	Replicas int    `json:"replicas"`
}

var tallyDecodes atomic.Int64

func (s *tallySpec) UnmarshalJSON(b []byte) error {
	tallyDecodes.Add(1)
	type plain tallySpec
	return json.Unmarshal(b, (*plain)(s))
}

// A writer that outruns a Cache by more than memstore's watch window
// expires its watch, again and again; each time the Cache relists, and
// each relist decodes only the objects written since the Cache last saw
// them (one it holds at the stored revision keeps its cached value): every
// decode is of a change the handlers hear of. Once the writer stops, the
// Cache equals the store.
func TestAWriterThatOutrunsTheWatchWindowMakesTheCacheRelistDecodingOnlyWhatChanged(t *testing.T) {
	onEachPath(t, func(t *testing.T, p watchPath) {
		const n, hot = 200, 20
		mem := memstore.New(memstore.WithHistorySize(64), memstore.WithWatchBuffer(8))
		w := newWidgets(t, mem) // the writer's Store decodes cacheSpec: its reads count no tallySpec decode
		names := createN(t, w, n)
		st, err := store.New[tallySpec, cacheStatus](p.backend(mem), "Widget")
		require.NoError(t, err)
		var expiries atomic.Int64
		c := cache.New(st, cache.WithRelistPeriod(0),
			cache.WithRelistBackoff(backoff.Policy{Base: 20 * time.Millisecond, Factor: 1, Cap: 20 * time.Millisecond}),
			cache.WithErrorHandler(func(err error) {
				if errors.Is(err, store.ErrExpired) {
					expiries.Add(1)
				}
			}))
		var slow atomic.Bool
		var calls atomic.Int64
		c.AddHandler(func(_, _ *store.Object[tallySpec, cacheStatus]) {
			if slow.Load() {
				calls.Add(1)
				time.Sleep(time.Millisecond)
			}
		})
		runCtx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx) }()
		defer func() {
			cancel()
			require.NoError(t, <-done)
		}()
		require.NoError(t, c.WaitForSync(t.Context()))
		p.requireTaken(t, 1)
		stopReads := readWhileRunning(c)
		defer stopReads()

		before := tallyDecodes.Load()
		slow.Store(true)
		stopWriter := writeEvery(500*time.Microsecond, func(i int) { bump(t, w, names[i%hot]) })
		defer stopWriter()
		time.Sleep(time.Second)
		writes := stopWriter()
		settle(t, mem, c)
		slow.Store(false)
		decodes := tallyDecodes.Load() - before

		require.GreaterOrEqual(t, expiries.Load(), int64(2), "the writer outran the window (%d writes)", writes)
		require.LessOrEqual(t, decodes, calls.Load(),
			"every decode is of a change the handlers heard of: the relists decode none of the %d objects left unchanged", n-hot)
		l, err := st.List(t.Context(), store.ListOptions{})
		require.NoError(t, err)
		require.Equal(t, n, c.Len())
		for _, want := range l.Items {
			got, ok := c.Get(want.Meta.Name)
			require.True(t, ok)
			require.Equal(t, *want, *got, "object %s", want.Meta.Name)
		}
	})
}

// Prune and Refilter are served between the batches of a watch the writer
// keeps busy, not once it catches up (it never does): each returns while
// the Cache is still behind the writer, holding what the keep function
// accepts.
func TestPruneAndRefilterAreServedWhileAWriterKeepsTheWatchBusy(t *testing.T) {
	onEachPath(t, func(t *testing.T, p watchPath) {
		ctx := t.Context()
		mem := memstore.New(memstore.WithHistorySize(1<<14), memstore.WithWatchBuffer(4))
		st := newWidgets(t, p.backend(mem))
		names := createN(t, st, 12)
		var k keepSet
		k.set(names...)
		c := cache.New(st, cache.WithKeep(k.keep), cache.WithRelistPeriod(0))
		var slow atomic.Bool
		c.AddHandler(func(_, _ *cobj) {
			if slow.Load() {
				time.Sleep(10 * time.Millisecond)
			}
		})
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		p.requireTaken(t, 1)
		stopReads := readWhileRunning(c)
		defer stopReads()

		slow.Store(true)
		stopWriter := writeEvery(5*time.Millisecond, func(i int) { bump(t, st, names[i%len(names)]) })
		defer stopWriter()
		time.Sleep(300 * time.Millisecond)

		k.set(names[:6]...)
		// Served at the next batch (4 events, 40ms), and the handlers told.
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		require.NoError(t, c.Prune(pctx), "Prune is served while the watch is busy")
		cancel()
		require.Equal(t, names[:6], c.Keys())
		require.Less(t, c.Revision(), mem.Revision(), "the watch is still behind the writer")

		k.set(names[3:9]...)
		rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		require.NoError(t, c.Refilter(rctx), "Refilter is served while the watch is busy")
		cancel()
		require.Equal(t, names[3:9], c.Keys())
		require.Less(t, c.Revision(), mem.Revision(), "the watch is still behind the writer")

		stopWriter()
		settle(t, mem, c)
		kept := func(name string) bool { return k.keep(name) }
		requireHolds(t, c, listOf(t, st), func(o *cobj) bool { return kept(o.Meta.Name) }, kept, "the Cache")
	})
}

// Run returns as soon as its ctx ends, even while a writer keeps its watch
// busy: it does not apply the backlog first, and every goroutine it
// started (the channel's, on that path) has ended.
func TestRunEndsWithItsContextWhileAWriterKeepsTheWatchBusy(t *testing.T) {
	onEachPath(t, func(t *testing.T, p watchPath) {
		ctx := t.Context()
		mem := memstore.New(memstore.WithHistorySize(1<<14), memstore.WithWatchBuffer(4))
		st := newWidgets(t, p.backend(mem))
		names := createN(t, st, 10)
		c := cache.New(st)
		c.AddHandler(func(_, _ *cobj) { time.Sleep(10 * time.Millisecond) })
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx) }()
		require.NoError(t, c.WaitForSync(ctx))
		p.requireTaken(t, 1)

		stopWriter := writeEvery(5*time.Millisecond, func(i int) { bump(t, st, names[i%len(names)]) })
		defer stopWriter()
		time.Sleep(500 * time.Millisecond)
		require.Less(t, c.Revision(), mem.Revision(), "the watch is behind the writer")
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(200 * time.Millisecond): // in place, one handler call; over a channel, the few events it holds
			stopWriter()
			require.NoError(t, <-done)
			t.Fatal("Run went on applying the backlog after its ctx ended, until the writer stopped")
		}
		require.Less(t, c.Revision(), mem.Revision(), "Run returned without applying the backlog")
		synctest.Wait()
		require.Zero(t, channelWatches(), "Run's watch ended with it")
		stopWriter()
	})
}

// A value that does not decode (here, one whose version conversion fails)
// in the middle of a writer's stream is quarantined and stops nothing: the
// watch goes on without an error or a relist, the Cache keeps the key's
// last valid object and serves every later write, and a later valid value
// of the key takes it out of quarantine.
func TestABadValueMidStreamStopsNothing(t *testing.T) {
	onEachPath(t, func(t *testing.T, p watchPath) {
		ctx := t.Context()
		v1 := store.VersionOf("v1", store.Conversion[oldSpec, cacheStatus, cacheSpec, cacheStatus]{
			ToHub: func(s oldSpec, st cacheStatus) (cacheSpec, cacheStatus, error) {
				if s.Img == "bad" {
					return cacheSpec{}, st, errors.New("no such image")
				}
				return cacheSpec{Image: s.Img}, st, nil
			},
			FromHub: func(s cacheSpec, st cacheStatus) (oldSpec, cacheStatus, error) {
				return oldSpec{Img: s.Image}, st, nil
			},
		})
		v2 := store.VersionOf("v2", store.Conversion[cacheSpec, cacheStatus, cacheSpec, cacheStatus]{})
		vs, err := store.NewVersions("v1", v1, v2)
		require.NoError(t, err)
		mem := memstore.New(memstore.WithWatchBuffer(4))
		old, err := store.New[oldSpec, cacheStatus](mem, "Widget", store.WithVersion("v1", vs))
		require.NoError(t, err)
		st, err := store.New[cacheSpec, cacheStatus](p.backend(mem), "Widget", store.WithVersion("v2", vs))
		require.NoError(t, err)
		names := []string{"a", "b", "c", "d", "e"}
		for _, name := range names {
			_, err := old.As("writer").Create(ctx, &store.Object[oldSpec, cacheStatus]{Meta: store.Meta{Name: name}, Spec: oldSpec{Img: "v0"}})
			require.NoError(t, err)
		}
		var errs atomic.Int64
		c := cache.New(st, cache.WithErrorHandler(func(error) { errs.Add(1) }))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		p.requireTaken(t, 1)
		stopReads := readWhileRunning(c)
		defer stopReads()

		var img atomic.Value // what the writer writes to "a"
		img.Store("v1")
		stopWriter := writeEvery(time.Millisecond, func(i int) {
			name := names[i%len(names)]
			o, err := old.Get(ctx, name)
			if err != nil {
				t.Errorf("get %s: %v", name, err)
				return
			}
			o.Spec.Img = fmt.Sprint("img-", i)
			if name == "a" {
				o.Spec.Img = img.Load().(string)
			}
			if _, err := old.As("writer").Update(ctx, o); err != nil {
				t.Errorf("update %s: %v", name, err)
			}
		})
		defer stopWriter()
		time.Sleep(50 * time.Millisecond)
		img.Store("bad")
		time.Sleep(50 * time.Millisecond)
		stopWriter()
		settle(t, mem, c)
		a, ok := c.Get("a")
		require.True(t, ok, "the Cache keeps a's last valid object")
		require.Equal(t, "v1", a.Spec.Image)
		requireHolds(t, c, listOf(t, st), all, allNames, "the Cache")
		require.Len(t, c.Quarantined(), 1)

		img.Store("v2")
		stopWriter = writeEvery(time.Millisecond, func(i int) {
			if i < len(names) {
				bumpOld(t, old, names[i], img.Load().(string))
			}
		})
		time.Sleep(20 * time.Millisecond)
		stopWriter()
		settle(t, mem, c)
		requireHolds(t, c, listOf(t, st), all, allNames, "the Cache")
		require.Empty(t, c.Quarantined(), "a's valid value took it out of quarantine")
		require.Zero(t, c.Relists(), "the bad value did not end the watch")
		require.Zero(t, errs.Load(), "the bad value is no error of the watch")
	})
}

// bumpOld writes img to name's Spec through the old version's Store.
func bumpOld(t *testing.T, old *store.Store[oldSpec, cacheStatus], name, img string) {
	o, err := old.Get(t.Context(), name)
	if err != nil {
		t.Errorf("get %s: %v", name, err)
		return
	}
	o.Spec.Img = img
	if _, err := old.As("writer").Update(t.Context(), o); err != nil {
		t.Errorf("update %s: %v", name, err)
	}
}

// gate holds up the handlers of the Caches that wait on it while it is
// shut, so that a writer can run ahead of their watches.
type gate struct {
	mu sync.Mutex
	ch chan struct{}
}

func (g *gate) wait() {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (g *gate) shut() { g.mu.Lock(); g.ch = make(chan struct{}); g.mu.Unlock() }
func (g *gate) open() { g.mu.Lock(); close(g.ch); g.ch = nil; g.mu.Unlock() }

// pathCaches are the Caches of one watch path in the random run: one of
// the whole kind, and one limited by a label selector and a keep function.
type pathCaches struct {
	path              watchPath
	whole, filtered   *cache.Cache[cacheSpec, cacheStatus]
	wholeSh, filterSh *shadow
	expiries          atomic.Int64 // the whole Cache's watches that expired
}

// The same random schedule of writes, read by Caches over memstore that
// read its watch in place and by Caches over the same memstore hidden
// behind a wrapper (which read the Backend's Watch channel): creations,
// updates, status updates, deletions, values that do not decode, labels
// that move objects in and out of a selector, a keep function that narrows
// (Prune) and widens (Refilter) while the writes go on, bursts that run
// past the watch window while the Caches' handlers are held up (the
// watches expire and the Caches relist), periodic relists, and reads of
// the Caches all along. At every settle point each Cache equals the store
// (within its selection), quarantines exactly its undecodable values, has
// told its handlers every change once, in order, and no periodic relist
// had anything to repair.
func TestInPlaceAndChannelCachesAgreeWithTheStoreUnderRandomWrites(t *testing.T) {
	seeds, writes := 4, max(200, 1200/raceScale)
	if *cacheLong {
		seeds, writes = 30, 4000
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { inPlaceVersusChannelRun(t, seed, writes) })
		})
	}
}

func inPlaceVersusChannelRun(t *testing.T, seed uint64, writes int) {
	ctx := t.Context()
	rnd := rand.New(rand.NewPCG(seed, 0x1a7e))
	const names, window, period = 24, 32, 100 * time.Millisecond
	mem := memstore.New(memstore.WithHistorySize(window), memstore.WithWatchBuffer(4))
	st := newWidgets(t, mem)
	w := st.As("writer")
	var k keepSet
	kept := map[string]bool{}
	for i := range names {
		if rnd.IntN(3) > 0 {
			kept[fmt.Sprintf("w%02d", i)] = true
		}
	}
	k.set(slices.Collect(maps.Keys(kept))...)
	tier0 := store.MatchLabels(map[string]string{"tier": "0"})
	var g gate

	var paths []*pathCaches
	var caches []*cache.Cache[cacheSpec, cacheStatus]
	for _, p := range watchPaths {
		pc := &pathCaches{path: p, wholeSh: &shadow{objs: map[string]*cobj{}}, filterSh: &shadow{objs: map[string]*cobj{}}}
		pst := newWidgets(t, p.backend(mem))
		opts := func(expiries *atomic.Int64) []cache.Option {
			return []cache.Option{
				cache.WithPageSize(7), cache.WithRelistPeriod(period),
				cache.WithRelistBackoff(backoff.Policy{Base: 2 * time.Millisecond, Factor: 2, Cap: 20 * time.Millisecond}),
				cache.WithMutationDetector(func(err error) { t.Error(err) }),
				cache.WithErrorHandler(func(err error) {
					if errors.Is(err, store.ErrExpired) {
						expiries.Add(1)
					}
				}),
			}
		}
		pc.whole = cache.New(pst, opts(&pc.expiries)...)
		pc.filtered = cache.New(pst, append(opts(new(atomic.Int64)), cache.WithSelector(tier0, cache.FieldSelector{}), cache.WithKeep(k.keep))...)
		for _, x := range []struct {
			c  *cache.Cache[cacheSpec, cacheStatus]
			sh *shadow
		}{{pc.whole, pc.wholeSh}, {pc.filtered, pc.filterSh}} {
			x.c.AddHandler(func(old, new *cobj) {
				x.sh.handle(old, new)
				if old != nil && new != nil && new.Meta.Revision <= old.Meta.Revision {
					x.sh.mu.Lock()
					x.sh.wrong = append(x.sh.wrong, fmt.Sprintf("%s: a change from revision %d to %d", new.Meta.Name, old.Meta.Revision, new.Meta.Revision))
					x.sh.mu.Unlock()
				}
				g.wait()
			})
			require.NoError(t, x.c.AddLabelIndex("tier"))
			stop := startCache(t, x.c)
			defer stop()
			caches = append(caches, x.c)
		}
		paths = append(paths, pc)
	}
	for _, c := range caches {
		require.NoError(t, c.WaitForSync(ctx))
	}
	synctest.Wait() // WaitForSync returns before Run starts its watch
	require.Equal(t, 2, channelWatches(), "the two Caches over the hidden memstore read channels; the two over memstore read in place")
	stopReads := readWhileRunning(caches...)
	defer stopReads()

	var keepCalls sync.WaitGroup
	raw := func(name, value string) {
		var err error
		if value == "" {
			_, err = mem.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "Widget/" + name})
		} else {
			_, err = mem.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "Widget/" + name, Value: []byte(value)})
		}
		require.NoError(t, err)
	}
	write := func() {
		name := fmt.Sprintf("w%02d", rnd.IntN(names))
		cur, err := st.Get(ctx, name)
		var bad *store.DecodeError
		switch {
		case errors.Is(err, store.ErrNotFound) && rnd.IntN(10) == 0:
			raw(name, "not json")
			err = nil
		case errors.Is(err, store.ErrNotFound):
			_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: name, Labels: map[string]string{"tier": fmt.Sprint(rnd.IntN(2))}}})
		case errors.As(err, &bad) && rnd.IntN(2) == 0:
			raw(name, "") // a bad value deleted
			err = nil
		case errors.As(err, &bad):
			raw(name, fmt.Sprintf(`{"metadata":{"kind":"Widget","name":"%s","uid":"forged"`, name)) // another bad value
			err = nil
		case err != nil:
		case rnd.IntN(5) == 0:
			_, err = w.Delete(ctx, name)
		case rnd.IntN(15) == 0:
			raw(name, "{")
		case rnd.IntN(3) == 0:
			cur.Status.Ready = rnd.IntN(100)
			cur.Conditions = randomConditions(rnd)
			_, err = w.UpdateStatus(ctx, cur)
		default:
			cur.Spec.Replicas = rnd.IntN(100)
			cur.Meta.Labels = map[string]string{"tier": fmt.Sprint(rnd.IntN(2))}
			cur.Meta.Annotations = randomAnnotations(rnd)
			_, err = w.Update(ctx, cur)
		}
		require.NoError(t, err)
	}
	rekeep := func() {
		next := map[string]bool{}
		widened := false
		for i := range names {
			if name := fmt.Sprintf("w%02d", i); rnd.IntN(3) > 0 {
				next[name] = true
				widened = widened || !kept[name]
			}
		}
		kept = next
		k.set(slices.Collect(maps.Keys(kept))...)
		for _, pc := range paths {
			keepCalls.Go(func() {
				var err error
				if widened {
					err = pc.filtered.Refilter(ctx)
				} else {
					err = pc.filtered.Prune(ctx)
				}
				if err != nil {
					t.Errorf("%s: refilter (widened %v): %v", pc.path.name, widened, err)
				}
			})
		}
	}

	check := func(at int) {
		keepCalls.Wait()
		settle(t, mem, caches...)
		l := listOf(t, st)
		inFilter := func(o *cobj) bool { return tier0.Matches(o.Meta.Labels) && kept[o.Meta.Name] }
		keptName := func(name string) bool { return kept[name] }
		for _, pc := range paths {
			what := fmt.Sprintf("write %d: %s", at, pc.path.name)
			requireHolds(t, pc.whole, l, all, allNames, what+" whole Cache")
			requireHolds(t, pc.filtered, l, inFilter, keptName, what+" filtered Cache")
			require.Zero(t, pc.whole.DriftRepairs(), "%s: the watch lost nothing, no periodic relist repaired anything", what)
			for _, x := range []struct {
				c  *cache.Cache[cacheSpec, cacheStatus]
				sh *shadow
			}{{pc.whole, pc.wholeSh}, {pc.filtered, pc.filterSh}} {
				require.NoError(t, x.c.Check())
				x.sh.mu.Lock()
				require.Empty(t, x.sh.wrong, "%s: the handlers heard every change once, in order", what)
				require.Len(t, x.sh.objs, x.c.Len(), what)
				for name, o := range x.sh.objs {
					got, _ := x.c.Get(name)
					require.Same(t, got, o, "%s: the handlers heard of %s's last state", what, name)
				}
				x.sh.mu.Unlock()
			}
		}
	}

	for i := range writes {
		switch {
		case rnd.IntN(60) == 0 || i == writes/2: // at least once
			// A burst past the window while every handler is held up.
			g.shut()
			for range 2 * window { // past what a channel watch reads ahead too
				write()
			}
			g.open()
		case rnd.IntN(30) == 0:
			rekeep()
		}
		write()
		if i%25 == 24 {
			check(i)
		}
		time.Sleep(time.Duration(rnd.IntN(3)) * time.Millisecond)
	}
	check(writes)
	// Two quiet periods: a periodic relist runs however the expiries fell.
	// (A short run, as under -race, could see none; the relist a Cache
	// made after an empty first listing, gone in round 53, counted as one.)
	time.Sleep(2 * period)
	synctest.Wait()
	for _, pc := range paths {
		t.Logf("seed %d, %s: the whole Cache's watch expired %d times, it relisted %d times; the filtered Cache relisted %d times",
			seed, pc.path.name, pc.expiries.Load(), pc.whole.Relists(), pc.filtered.Relists())
		require.Positive(t, pc.expiries.Load(), "%s: the run expired the watches", pc.path.name)
		require.Greater(t, pc.whole.Relists(), pc.expiries.Load(), "%s: periodic relists ran too", pc.path.name)
	}
}

// A Cache whose Run returned holds none of memstore's history back: its
// watch ended with it. (memstore's default window grows while a live
// watch lags, up to as many writes as it holds keys; a watch left live
// would hold a window of 2n writes for good.) With 2n keys and 2n writes
// after the Cache stopped, a window of n writes has let go of the first n.
func TestAStoppedCacheHoldsNoHistoryBack(t *testing.T) {
	onEachPath(t, func(t *testing.T, p watchPath) {
		ctx := t.Context()
		const n = memstore.DefaultHistorySize
		mem := memstore.New()
		put := func(i int) {
			_, err := mem.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("Other/k%05d", i%(2*n)), Value: []byte("v")})
			require.NoError(t, err)
		}
		for i := range 2 * n {
			put(i)
		}
		c := cache.New(newWidgets(t, p.backend(mem)))
		stop := startCache(t, c)
		require.NoError(t, c.WaitForSync(ctx))
		p.requireTaken(t, 1)
		stop()

		for i := range 2 * n {
			put(i)
		}
		from := mem.Revision() - 3*n/2
		events, err := mem.Watch(ctx, "", from)
		require.NoError(t, err)
		ev := <-events
		require.ErrorIs(t, ev.Err, store.ErrExpired, "the history after revision %d is gone: no watch held it", from)
	})
}

// A quiet watch still relists every period: Run's goroutine, waiting for
// the next change, hears the relist timer (relayed as a nudge when it
// reads the watch in place), and each listing arms the timer for the next,
// due one jittered period (3/4 to 1) after it began.
func TestAQuietWatchRelistsEveryPeriod(t *testing.T) {
	onEachPath(t, func(t *testing.T, p watchPath) {
		const period = time.Second
		mem := memstore.New()
		st := newWidgets(t, p.backend(mem))
		createN(t, st, 5)
		c := cache.New(st, cache.WithRelistPeriod(period))
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		p.requireTaken(t, 1)
		time.Sleep(3 * period)
		synctest.Wait()
		require.GreaterOrEqual(t, c.Relists(), int64(3), "three periods, three listings at least")
		require.LessOrEqual(t, c.Relists(), int64(4), "and at most one per 3/4 period")
		require.Zero(t, c.DriftRepairs())
	})
}
