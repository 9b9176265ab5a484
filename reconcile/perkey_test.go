package reconcile

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// counts is a reconciler's count of passes per key, safe for concurrent
// use.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) add(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
	return c.n[key]
}

func (c *counts) of(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// An own write is judged per key: the reconcile of a that updates b's spec
// (a parent rolling an image out to objects of its own kind) makes a hint
// for b, which runs for it at once, not at the resync an hour later; while
// each key's own status write wakes nobody (no spin).
func TestOwnWriteOfAnotherKeysObjectIsAHintForIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
		var calls counts
		var seen sync.Map // key: the image its last pass saw
		var roll atomic.Bool
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			if calls.add(key) >= spinGuard {
				return Result{}, nil
			}
			obj, ok := e.cache.Get(key)
			if !ok {
				return Result{}, nil
			}
			seen.Store(key, obj.Spec.Image)
			if key == "a" && roll.CompareAndSwap(true, false) {
				b, err := e.st.Get(ctx, "b")
				if err != nil {
					return Result{}, err
				}
				b.Spec.Image = "v2"
				if _, err := e.st.As("app").Update(ctx, b); err != nil {
					return Result{}, err
				}
			}
			_, err := e.st.As("app").ApplyStatus(ctx, key, appStatus{Phase: "at " + obj.Spec.Image}, nil)
			return Result{}, err
		})
		l := mustNew(t, r, FromStore(e.cache, e.st), WithFieldManager("app"), WithResync(time.Hour, 0))
		stop := start(t, l)
		time.Sleep(time.Second)
		synctest.Wait()
		a0, b0 := calls.of("a"), calls.of("b")
		roll.Store(true)
		l.Add("a")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, b0+1, calls.of("b"), "b runs for a's write of its spec, and once only")
		img, _ := seen.Load("b")
		require.Equal(t, "v2", img, "b's second pass read a's write")
		require.Equal(t, a0+1, calls.of("a"), "a's own writes do not wake it")
		require.Equal(t, "at v2", e.get(t, "b").Status.Phase)
		require.NoError(t, stop())
	})
}

// Through FromOwned, an own write of a child is a hint for its owner
// unless the owner's reconcile wrote it: the reconcile of p1 that writes
// p2's child runs p2, and its write of its own child does not wake p1.
func TestOwnWriteOfAnotherOwnersChildIsAHintForTheOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parents := newEnv(t, "App", nil)
		defer parents.stop()
		children := newEnv(t, "Pod", parents.b)
		defer children.stop()
		for _, name := range []string{"p1", "p2"} {
			p := &app{Meta: store.Meta{Name: name}}
			parents.create(t, "user", p)
			p = parents.get(t, name)
			children.create(t, "user", &app{Meta: store.Meta{Name: name + "-0",
				Owners: []store.OwnerRef{{Kind: "App", Name: name, UID: p.Meta.UID, Controller: true}}}})
		}
		var calls counts
		var roll atomic.Bool
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			calls.add(key)
			if key != "p1" || !roll.CompareAndSwap(true, false) {
				return Result{}, nil
			}
			for _, child := range []string{"p1-0", "p2-0"} {
				if _, err := children.st.As("app").ApplyStatus(ctx, child, appStatus{Phase: "set by p1"}, nil); err != nil {
					return Result{}, err
				}
			}
			return Result{}, nil
		})
		l := mustNew(t, r, Sources(FromStore(parents.cache, parents.st), FromOwned(children.cache, "App")),
			WithFieldManager("app"), WithResync(time.Hour, 0))
		stop := start(t, l)
		time.Sleep(time.Second) // the start's hints (the children's additions among them) are done
		synctest.Wait()
		p1, p2 := calls.of("p1"), calls.of("p2")
		roll.Store(true)
		l.Add("p1")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, "set by p1", children.get(t, "p2-0").Status.Phase)
		require.Equal(t, p2+1, calls.of("p2"), "p1's write of p2's child runs p2")
		require.Equal(t, p1+1, calls.of("p1"), "p1's write of its own child does not wake it")
		require.NoError(t, stop())
	})
}

// A write's event can reach the cache before the store reports the write
// to the reconcile (the report follows the commit). The event is then
// judged the Loop's own by its writer's name alone, and hints nobody; the
// report, when it names another key's reconcile as the author, adds the
// keys the event would have hinted. Here the event comes first for sure:
// the write is made with a ctx that reports nothing, and a's reconcile
// reports it afterwards, through the store's channel.
func TestOwnWriteReportedAfterItsEventHintsTheKeysItMissed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
		var calls counts
		var late struct {
			sync.Mutex
			name string
			rev  int64
		}
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			calls.add(key)
			late.Lock()
			defer late.Unlock()
			if key == "a" && late.rev > 0 {
				wrote.Observe(ctx, e.st.Backend(), late.name, late.rev)
			}
			return Result{}, nil
		})
		l := mustNew(t, r, FromStore(e.cache, e.st), WithFieldManager("app"), WithResync(time.Hour, 0))
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, calls.of("b"))

		report := func(name string, rev int64) {
			late.Lock()
			late.name, late.rev = name, rev
			late.Unlock()
			l.Add("a")
			synctest.Wait()
		}
		update := func(name string) int64 {
			obj := copyOf(e.get(t, name))
			obj.Spec.Replicas++
			rev, err := e.st.As("app").Update(context.Background(), obj)
			require.NoError(t, err)
			synctest.Wait()
			return rev
		}

		rev := update("b")
		require.Equal(t, 1, calls.of("b"), "judged by its writer's name alone, the event hints nobody")
		report("b", rev)
		require.Equal(t, 2, calls.of("b"), "the late report names a's reconcile: b runs")
		require.Equal(t, 2, calls.of("a"))

		rev = update("a")
		require.Equal(t, 2, calls.of("a"))
		report("a", rev)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 3, calls.of("a"), "a's own write, reported late, does not wake it (only the Add that reported it ran)")
		require.NoError(t, stop())
	})
}

// The report can also come between the event's judging and its source's
// telling of the keys it missed: whichever comes second adds them. An
// author that wrote its own object, or an unknown one (RecordWrite's),
// adds none; an event that fell out of the last earlyRevs is forgotten.
func TestOwnWritesEarlyEventsKeepTheKeysTheyMissed(t *testing.T) {
	a := new(int)
	floor := func(any) int64 { return 0 }
	byA := authorOf("b", "a", true)
	for _, tt := range []struct {
		name        string
		reportFirst bool
		by          author
		missed      []string // the keys the event did not hint
		fallOut     bool
		// wantAtReport and wantAtMissed: the keys wrote and missed
		// return, to add.
		wantAtReport, wantAtMissed []string
	}{
		{name: "missed, then reported", by: byA, missed: []string{"b"}, wantAtReport: []string{"b"}},
		{name: "reported, then missed", reportFirst: true, by: byA, missed: []string{"b"}, wantAtMissed: []string{"b"}},
		{name: "its author's key", by: authorOf("b", "b", true), missed: []string{"b"}},
		{name: "its author's key, reported first", reportFirst: true, by: authorOf("b", "b", true), missed: []string{"b"}},
		{name: "mapped keys", by: authorOf("b-0", "c", true), missed: []string{"b", "c"}, wantAtReport: []string{"b"}},
		{name: "unknown author", by: author{}, missed: []string{"b"}},
		{name: "fell out", by: byA, missed: []string{"b"}, fallOut: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o ownWrites
			o.on.Store(true)
			_, reported, _ := o.seen(a, 5)
			require.False(t, reported)
			var atReport, atMissed []string
			if tt.reportFirst {
				atReport, _ = o.wrote(a, 5, "b", tt.by, floor)
			}
			if tt.fallOut {
				for rev := range int64(earlyRevs) {
					o.seen(a, 100+rev)
				}
			}
			atMissed = o.missed(a, 5, tt.missed)
			if !tt.reportFirst {
				atReport, _ = o.wrote(a, 5, "b", tt.by, floor)
			}
			require.Equal(t, tt.wantAtReport, atReport)
			require.Equal(t, tt.wantAtMissed, atMissed)
			if !tt.fallOut {
				require.Zero(t, o.held(), "a revision seen before it was reported is not kept")
			}
		})
	}
}

// What the oscillation detector hears of an event judged the Loop's own
// by name before its report (an earlyWrite) is decided by the report's
// author, whenever the report comes: another key's reconcile makes it
// another writer's change, the object's own key or an unknown author the
// Loop's own write. Without a report it is heard as the Loop's own, as
// before reports were waited for: when its sighting falls out of the last
// earlyRevs, or before the next write of its key (take).
func TestEarlyWritesAreHeardAsTheirReportSays(t *testing.T) {
	a := new(int)
	floor := func(any) int64 { return 0 }
	own := []oscillation.Write{{Self: true, Owned: []diff.Path{{{Name: "spec"}}}}}
	other := oscillation.Write{Foreign: []diff.Path{{{Name: "spec"}}}}
	for _, tt := range []struct {
		name string
		// run makes the calls after the event's sighting (seen) and
		// returns what was heard, by the step that heard it.
		run  func(o *ownWrites, w *earlyWrite) map[string]heard
		want map[string]heard
	}{
		{"held, then reported by another key", func(o *ownWrites, w *earlyWrite) map[string]heard {
			at := map[string]heard{"hold": o.hold(a, 5, w)}
			_, h := o.wrote(a, 5, "b", authorOf("b", "a", true), floor)
			at["report"] = one(t, h)
			return at
		}, map[string]heard{"hold": {}, "report": {"b", []oscillation.Write{other}}}},
		{"held, then reported by its own key", func(o *ownWrites, w *earlyWrite) map[string]heard {
			at := map[string]heard{"hold": o.hold(a, 5, w)}
			_, h := o.wrote(a, 5, "b", authorOf("b", "b", true), floor)
			at["report"] = one(t, h)
			return at
		}, map[string]heard{"hold": {}, "report": {"b", own}}},
		{"held, then reported by an unknown author", func(o *ownWrites, w *earlyWrite) map[string]heard {
			at := map[string]heard{"hold": o.hold(a, 5, w)}
			_, h := o.wrote(a, 5, "b", author{}, floor)
			at["report"] = one(t, h)
			return at
		}, map[string]heard{"hold": {}, "report": {"b", own}}},
		{"reported before it was held", func(o *ownWrites, w *earlyWrite) map[string]heard {
			_, h := o.wrote(a, 5, "b", authorOf("b", "a", true), floor)
			require.Empty(t, h)
			return map[string]heard{"hold": o.hold(a, 5, w)}
		}, map[string]heard{"hold": {"b", []oscillation.Write{other}}}},
		{"another source told its missed keys, then the report, then the hold", func(o *ownWrites, w *earlyWrite) map[string]heard {
			o.missed(a, 5, []string{"b"})
			_, h := o.wrote(a, 5, "b", authorOf("b", "a", true), floor)
			require.Empty(t, h)
			return map[string]heard{"hold": o.hold(a, 5, w)}
		}, map[string]heard{"hold": {"b", []oscillation.Write{other}}}},
		{"held, then fell out unreported", func(o *ownWrites, w *earlyWrite) map[string]heard {
			at := map[string]heard{"hold": o.hold(a, 5, w)}
			for rev := range int64(earlyRevs) {
				_, _, h := o.seen(a, 100+rev)
				if len(h.ws) > 0 {
					at[fmt.Sprint("sighting ", rev)] = h
				}
			}
			_, h := o.wrote(a, 5, "b", authorOf("b", "a", true), floor)
			require.Empty(t, h, "decided once")
			return at
		}, map[string]heard{"hold": {}, "sighting 15": {"b", own}}},
		{"fell out before it was held", func(o *ownWrites, w *earlyWrite) map[string]heard {
			for rev := range int64(earlyRevs) {
				o.seen(a, 100+rev)
			}
			return map[string]heard{"hold": o.hold(a, 5, w)}
		}, map[string]heard{"hold": {"b", own}}},
		{"held, then its key's next write", func(o *ownWrites, w *earlyWrite) map[string]heard {
			at := map[string]heard{"hold": o.hold(a, 5, w)}
			require.Empty(t, o.take("c", false), "another key's write")
			at["take"] = one(t, o.take("b", false))
			_, h := o.wrote(a, 5, "b", authorOf("b", "a", true), floor)
			require.Empty(t, h, "decided once")
			return at
		}, map[string]heard{"hold": {}, "take": {"b", own}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o ownWrites
			o.on.Store(true)
			_, reported, _ := o.seen(a, 5)
			require.False(t, reported)
			got := tt.run(&o, &earlyWrite{key: "b", own: own, other: other})
			require.Equal(t, tt.want, got)
			require.Zero(t, o.waiting.Load(), "no write is held once heard")
		})
	}
}

// A reconcile that writes with a ctx of its own (context.Background, a
// common slip) reports nothing: its writes' events are judged the Loop's
// own by name and held for a report that never comes, then heard as the
// Loop's own once no reconcile runs, whether the event came before its
// reconcile returned (slow) or after. So its fight with another writer is
// found at the same write as when its writes are reported.
func TestUnreportedOwnWritesFightAsReportedOnesDo(t *testing.T) {
	type variant struct{ reported, slow bool }
	found := map[variant]int{}
	for _, v := range []variant{{true, false}, {false, false}, {true, true}, {false, true}} {
		synctest.Test(t, func(t *testing.T) {
			e := newEnv(t, "App", nil)
			defer e.stop()
			e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
			r := Func[string](func(ctx context.Context, key string) (Result, error) {
				if !v.reported {
					ctx = context.Background()
				}
				obj, err := e.st.Get(ctx, key)
				if err != nil || obj.Spec.Replicas == 0 {
					return Result{}, err
				}
				obj.Spec.Replicas = 0 // undoes the user's every write
				_, err = e.st.As("app").Update(ctx, obj)
				if v.slow {
					time.Sleep(time.Second) // the cache judges the write's event meanwhile
				}
				return Result{}, err
			})
			m := NewMemMetrics()
			l := mustNew(t, r, FromStore(e.cache, e.st), WithFieldManager("app"), WithResync(time.Hour, 0), WithMetrics(m))
			stop := start(t, l)
			for i := 1; i <= 10 && m.Oscillations("test", oscillation.Fight) == 0; i++ {
				o := e.get(t, "b")
				o.Spec.Replicas = i
				_, err := e.st.As("user").Update(t.Context(), o)
				require.NoError(t, err)
				time.Sleep(2 * time.Second) // past a slow reconcile's return
				synctest.Wait()
				found[v] = i
			}
			require.Positive(t, m.Oscillations("test", oscillation.Fight), "%+v", v)
			require.NoError(t, stop())
		})
	}
	for v, n := range found {
		require.Equal(t, found[variant{true, false}], n, "the user's write at which the fight was found, %+v", v)
	}
}

// one returns the only heard of hs, or the zero heard for none.
func one(t *testing.T, hs []heard) heard {
	t.Helper()
	require.LessOrEqual(t, len(hs), 1)
	if len(hs) == 0 {
		return heard{}
	}
	return hs[0]
}

// A reconcile that writes another key's spec again and again (a parent
// rolling changes out) is another writer to that key's detector: its
// writes are not re-sets by the key's own manager, so the key is not
// reported as oscillating (NoProgress: 10 of the manager's writes in a
// minute with nothing foreign changing), nor held.
//
// The same holds when the cache delivers a's write of b before the store
// reports it to a's reconcile (a slow report: the event can beat it, as it
// did now and then under the race detector). Such an event is judged the
// Loop's own by its writer's name; its report, naming a as the author,
// decides what b's detector hears: another writer's change, as when the
// report comes first. Heard as b's own write, every such event made a
// write of .spec.replicas by b between two by another writer: a Fight.
func TestOwnWritesOfAnotherKeysSpecAreNotItsOscillation(t *testing.T) {
	for _, tt := range []struct {
		name string
		late func(n int) bool // whether the report of a's nth write comes after its event
	}{
		{"reports as they come", func(int) bool { return false }},
		{"every other report late", func(n int) bool { return n%2 == 0 }},
		{"every report late", func(int) bool { return true }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "App", nil)
				defer e.stop()
				e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
				e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
				var calls counts
				var lateReports atomic.Int32
				r := Func[string](func(ctx context.Context, key string) (Result, error) {
					n := calls.add(key)
					if key == "a" {
						b, err := e.st.Get(ctx, "b")
						if err != nil {
							return Result{}, err
						}
						if tt.late(n) {
							report := wrote.HooksOf(ctx).Func
							ctx = wrote.With(ctx, func(backend any, name string, rev int64) {
								synctest.Wait() // the cache judges the event first
								lateReports.Add(1)
								report(backend, name, rev)
							})
						}
						b.Spec.Replicas = n
						if _, err := e.st.As("app").Update(ctx, b); err != nil {
							return Result{}, err
						}
						return Result{RequeueAfter: 2 * time.Second}, nil
					}
					obj, ok := e.cache.Get(key)
					if !ok {
						return Result{}, nil
					}
					_, err := e.st.As("app").ApplyStatus(ctx, key, appStatus{Replicas: obj.Spec.Replicas}, nil)
					return Result{}, err
				})
				m := NewMemMetrics()
				l := mustNew(t, r, FromStore(e.cache, e.st), WithFieldManager("app"), WithResync(time.Hour, 0), WithMetrics(m))
				stop := start(t, l)
				time.Sleep(time.Minute + time.Second) // not at a write: one synctest.Wait at a time
				synctest.Wait()
				require.GreaterOrEqual(t, calls.of("a"), 25, "a wrote b's spec every 2s")
				if tt.late(2) {
					require.GreaterOrEqual(t, int(lateReports.Load()), 12, "reports came after their events")
				}
				for _, k := range []oscillation.Kind{oscillation.Fight, oscillation.NoProgress, oscillation.TooManyWrites} {
					require.Zero(t, m.Oscillations("test", k), "%v", k)
				}
				require.Nil(t, l.Inspect("b").Oscillation)
				require.GreaterOrEqual(t, calls.of("b"), 25, "b ran for each of a's writes, hinted by the late report")
				require.Equal(t, calls.of("a"), e.get(t, "b").Status.Replicas, "b follows a's last write")
				require.NoError(t, stop())
			})
		})
	}
}

// The other side of the same judging: a cross-key write is another
// writer's change to b, so b's reconcile undoing it, again and again, is
// a Fight of b, reported as one with any other writer.
func TestOwnWritesOfAnotherKeysSpecUndoneByItsReconcileAreAFight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
		set := func(ctx context.Context, name string, replicas int) error {
			obj, err := e.st.Get(ctx, name)
			if err != nil || obj.Spec.Replicas == replicas {
				return err
			}
			obj.Spec.Replicas = replicas
			_, err = e.st.As("app").Update(ctx, obj)
			return err
		}
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			if key == "a" {
				return Result{RequeueAfter: 2 * time.Second}, set(ctx, "b", 1) // a wants b at 1
			}
			return Result{}, set(ctx, "b", 0) // b's reconcile wants itself at 0
		})
		m := NewMemMetrics()
		l := mustNew(t, r, FromStore(e.cache, e.st), WithFieldManager("app"), WithResync(time.Hour, 0), WithMetrics(m))
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Positive(t, m.Oscillations("test", oscillation.Fight), "b undoing a's writes is a fight")
		osc := l.Inspect("b").Oscillation
		require.NotNil(t, osc)
		require.Equal(t, oscillation.Fight, osc.Kind)
		require.NoError(t, stop())
	})
}

// RecordWrite names no object: the write it reports is the Loop's own for
// every key, as before writes were judged per key. The reconcile of a
// that writes b with a ctx of its own and records the revision makes no
// hint for b.
func TestRecordWriteIsTheLoopsOwnWriteForEveryKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
		var calls counts
		var roll atomic.Bool
		r := Func[string](func(ctx context.Context, key string) (Result, error) {
			calls.add(key)
			if key != "a" || !roll.CompareAndSwap(true, false) {
				return Result{}, nil
			}
			b, err := e.st.Get(ctx, "b")
			if err != nil {
				return Result{}, err
			}
			b.Spec.Replicas++
			rev, err := e.st.As("app").Update(context.Background(), b) // a write the Loop is not told of
			if err != nil {
				return Result{}, err
			}
			RecordWrite(ctx, rev)
			return Result{}, nil
		})
		l := mustNew(t, r, FromStore(e.cache, e.st), WithFieldManager("app"), WithResync(time.Hour, 0))
		stop := start(t, l)
		time.Sleep(time.Second)
		synctest.Wait()
		a0, b0 := calls.of("a"), calls.of("b")
		roll.Store(true)
		l.Add("a")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 1, e.get(t, "b").Spec.Replicas)
		require.Equal(t, a0+1, calls.of("a"))
		require.Equal(t, b0, calls.of("b"), "a write RecordWrite reports is no hint for any key")
		require.NoError(t, stop())
	})
}
