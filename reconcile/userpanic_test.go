package reconcile

import (
	"context"
	"iter"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// Each test here covers one place where the Loop calls a function of the
// user's. A panic there is reported like a reconcile panic (logged at
// Error, bounded, with the stack; counted), never a crash of the process.

// panickyMetrics panics in every hook; its queue hooks panic too.
type panickyMetrics struct{ noQueue bool }

func (panickyMetrics) ReconcileDone(string, string, time.Duration) { panic("ReconcileDone") }
func (panickyMetrics) ReconcileError(string, bool)                 { panic("ReconcileError") }
func (panickyMetrics) ReconcilePanic(string)                       { panic("ReconcilePanic") }
func (panickyMetrics) ActiveWorkers(string, int)                   { panic("ActiveWorkers") }
func (panickyMetrics) MaxConcurrency(string, int)                  { panic("MaxConcurrency") }
func (panickyMetrics) Converged(string, time.Duration)             { panic("Converged") }
func (panickyMetrics) Unconverged(string, int)                     { panic("Unconverged") }
func (panickyMetrics) Oscillation(string, oscillation.Kind)        { panic("Oscillation") }
func (panickyMetrics) Stalled(string, string)                      { panic("Stalled") }
func (panickyMetrics) FenceRejected(string)                        { panic("FenceRejected") }
func (m panickyMetrics) QueueMetrics(string) queue.Metrics {
	if m.noQueue {
		panic("QueueMetrics")
	}
	return panickyQueueMetrics{}
}

// panickyReader is panickyMetrics that reads the busy workers itself.
type panickyReader struct{ panickyMetrics }

func (panickyReader) ActiveWorkersFunc(string, func() int) { panic("ActiveWorkersFunc") }

type panickyQueueMetrics struct{}

func (panickyQueueMetrics) Depth(int)                               { panic("Depth") }
func (panickyQueueMetrics) Added()                                  { panic("Added") }
func (panickyQueueMetrics) QueueLatency(time.Duration)              { panic("QueueLatency") }
func (panickyQueueMetrics) WorkDuration(time.Duration)              { panic("WorkDuration") }
func (panickyQueueMetrics) Unfinished(total, longest time.Duration) { panic("Unfinished") }
func (panickyQueueMetrics) Retry()                                  { panic("Retry") }

// Metric hooks, the Loop's and the queue's (called with the queue's lock
// held), every one of which panics: the first panic is logged, once, and
// no hook is called again; the work goes on. (Before round 53 every panic
// was logged and the hook called again; this test asserted a log line per
// hook.)
func TestMetricHooksThatPanic(t *testing.T) {
	for _, tt := range []struct {
		name  string
		m     metrics.Loop
		first string // the hook named in the log: the first called
	}{
		{"every hook", panickyMetrics{}, "MaxConcurrency"},
		{"ActiveWorkersFunc and QueueMetrics", panickyReader{panickyMetrics{noQueue: true}}, "MaxConcurrency"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var logs logBuffer
				st := newMemStatus("a")
				s := newScript(func(_ string, n int) (Result, error) {
					if n == 0 {
						panic("reconcile")
					}
					return Result{}, nil
				})
				l := mustNew(t, s, WithConditionWriter(keySet("a"), st),
					append(fixedBackoff(), WithStallAfter(1), WithMetrics(tt.m), WithLogger(newLogger(&logs)))...)
				stop := start(t, l)
				time.Sleep(2 * time.Second) // past the 1s backoff of the panic
				synctest.Wait()
				require.Equal(t, 2, s.count("a"), "the panic was retried and the retry succeeded")
				_, stalled := st.stalled("a")
				require.True(t, stalled, "Stalled was written")
				require.NoError(t, stop())
				out := logs.String()
				require.Equal(t, 1, strings.Count(out, "metrics hook panicked"), out)
				require.Contains(t, out, `level=ERROR msg="metrics hook panicked" hook=`+tt.first+" ")
				require.Contains(t, out, "userpanic_test.go:", "with the stack")
			})
		})
	}
}

// panickyStatus is a ConditionWriter (given with WithConditionWriter) whose
// writes panic.
type panickyStatus struct{ *memStatus }

func (panickyStatus) WriteCondition(context.Context, string, string, store.Condition) error {
	var e *nilDeref
	panic(e)
}

// A ConditionWriter that panics: the Stalled write is lost (logged), the
// failing key is still retried with backoff.
func TestStatusWriterThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := NewMemMetrics()
		s := newScript(func(string, int) (Result, error) { return Result{}, errBoom })
		l := mustNew(t, s, WithConditionWriter(keySet("a"), panickyStatus{newMemStatus("a")}),
			append(fixedBackoff(), WithStallAfter(1), WithMetrics(m), WithLogger(newLogger(&logs)))...)
		stop := start(t, l)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "retried after the 1s backoff")
		require.NoError(t, stop())
		require.Contains(t, logs.String(), `level=ERROR msg="ConditionWriter panicked"`)
		require.Contains(t, logs.String(), `key=a`)
		require.Equal(t, 2, m.Panics("test"), "counted: one per Stalled write tried")
	})
}

// A key lister that panics part way: the keys it listed before are
// queued, at the start of a term and at resync, and the panic is reported.
func TestKeyListerThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := NewMemMetrics()
		keys := Keys(func() iter.Seq[string] {
			return func(yield func(string) bool) {
				if yield("a") {
					panic("lister")
				}
			}
		})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, keys, WithResync(time.Minute, 0), WithMetrics(m), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "the term's listing")
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "the resync's")
		require.NoError(t, stop())
		require.Equal(t, 2, strings.Count(logs.String(), `level=ERROR msg="keyLister panicked"`))
		require.Equal(t, 2, m.Panics("test"))
	})
}

// A Source whose Run panics fails like a Source that returns an error: the
// Loop's Run returns an error naming the panic, and the process lives.
func TestSourceThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := NewMemMetrics()
		src := SourceFunc[string](func(ctx context.Context, sink Sink[string]) error {
			sink.Add("a")
			var e *nilDeref
			panic(e)
		})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, src, WithMetrics(m), WithLogger(newLogger(&logs)))
		err := l.Run(t.Context())
		require.ErrorContains(t, err, "source 0: panicked: *reconcile.nilDeref")
		require.Contains(t, logs.String(), `level=ERROR msg="Source panicked"`)
		require.Equal(t, 1, m.Panics("test"))
	})
}

// syncingSource never syncs, and its String and LastError panic.
type syncingSource struct{ keyList[string] }

func (syncingSource) WaitForSync(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
func (syncingSource) String() string                        { panic("String") }
func (syncingSource) LastError() error                      { panic("LastError") }

// A source's String and LastError, which the Loop calls to say which source
// it waits for: a panic in either leaves the source named by its type.
func TestSourceStringAndLastErrorThatPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, syncingSource{}, WithLogger(newLogger(&logs)))
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second+time.Second)
		defer cancel()
		err := l.Run(ctx)
		require.ErrorIs(t, err, ErrNotSynced)
		require.ErrorContains(t, err, "reconcile.syncingSource")
		require.Contains(t, logs.String(), `msg="waiting for a source to sync"`)
	})
}

// A ChangeFunc that panics leaves the change unjudged: the Loop's own write
// is still not a hint (else its writes would wake it, a spin), another
// writer's change still is, and each panic is reported.
func TestChangeFuncThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		var logs logBuffer
		m := NewMemMetrics()
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			cached, _ := e.cache.Get(key)
			o := copyOf(cached)
			o.Status.Phase = "Seen " + time.Now().String()
			_, err := e.st.As("app").UpdateStatus(ctx, o)
			return Result{}, err
		})
		changes := WithChanges(func(_, _ *app, _ string) (owned, foreign []diff.Path) { panic("ChangeFunc") })
		l := mustNew(t, s, FromStore(e.cache, e.st, changes), WithFieldManager("app"), WithMetrics(m), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.Equal(t, 1, s.count("a"), "its own status write did not wake it")
		require.Equal(t, 1, m.Panics("test"))

		o := copyOf(e.get(t, "a"))
		o.Spec.Replicas = 2
		_, err := e.st.As("user").Update(context.Background(), o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "another writer's change is a hint")
		require.NoError(t, stop())
		require.Contains(t, logs.String(), `level=ERROR msg="ChangeFunc panicked" key=a`)
	})
}

// A mapper (FromCacheMapped's) that panics on one object: the other
// objects' hints are delivered, and the panic is reported.
func TestMapperThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		apps := newEnv(t, "App", nil)
		defer apps.stop()
		secrets := newEnv(t, "Secret", apps.b)
		defer secrets.stop()
		apps.create(t, "user", &app{Meta: store.Meta{Name: "web"}})
		var logs logBuffer
		m := NewMemMetrics()
		bySecret := FromCacheMapped(secrets.cache, func(s *app) []string {
			if s.Meta.Name == "bad" {
				var e *nilDeref
				panic(e)
			}
			return []string{"web"}
		})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, Sources(FromStore(apps.cache, apps.st), bySecret), WithMetrics(m), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		synctest.Wait()
		base := s.count("web")
		secrets.create(t, "user", &app{Meta: store.Meta{Name: "bad"}})
		synctest.Wait()
		secrets.create(t, "user", &app{Meta: store.Meta{Name: "db"}})
		synctest.Wait()
		require.Equal(t, base+1, s.count("web"), "the good secret's hint")
		require.NoError(t, stop())
		require.Contains(t, logs.String(), `level=ERROR msg="mapper panicked"`)
		require.Equal(t, 1, m.Panics("test"))
	})
}

// Mapped's mapper that panics on one value: the next values are mapped.
func TestMappedFuncThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := NewMemMetrics()
		ch := make(chan string)
		src := Mapped(ch, func(v string) []string {
			if v == "bad" {
				panic("mapper")
			}
			return []string{v}
		})
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, src, WithMetrics(m), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		synctest.Wait() // the term has begun (a hint before it would wait for it)
		ch <- "bad"
		ch <- "a"
		synctest.Wait()
		require.Equal(t, 1, s.count("a"))
		require.NoError(t, stop())
		require.Contains(t, logs.String(), `level=ERROR msg="mapper panicked"`)
		require.Equal(t, 1, m.Panics("test"))
	})
}

// A write observer the reconciler adds that panics: the write is done, the
// panic reaches the reconcile, and is reported as its panic (counted,
// Stalled, retried with backoff).
func TestWriteObserverThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		m := NewMemMetrics()
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			ctx = store.WithWriteObserver(ctx, func(int64) { panic("observer") })
			cached, _ := e.cache.Get(key)
			o := copyOf(cached)
			o.Status.Phase = "Seen " + time.Now().String()
			_, err := e.st.As("test").UpdateStatus(ctx, o)
			return Result{}, err
		})
		l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithStallAfter(1), WithMetrics(m))...)
		stop := start(t, l)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, 2, s.count("a"), "retried after the 1s backoff")
		require.Equal(t, 2, m.Panics("test"))
		require.True(t, strings.HasPrefix(stalledOf(t, e, "a").Message, "test: reconcile panicked: string: observer"))
		require.NoError(t, stop())
	})
}

// panickyElector panics in Campaign.
type panickyElector struct{}

func (panickyElector) Campaign(context.Context) (context.Context, store.Fence, error) {
	var e *nilDeref
	panic(e)
}

// An elector whose Campaign panics fails the campaign like an error: logged,
// counted, tried again a second later, and Run stops cleanly.
func TestElectorThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := NewMemMetrics()
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, keySet("a"), WithElector(panickyElector{}), WithMetrics(m), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		require.NoError(t, stop())
		require.Equal(t, 2, strings.Count(logs.String(), `level=ERROR msg="Elector.Campaign panicked"`))
		require.Equal(t, 2, m.Panics("test"))
		require.Zero(t, s.count("a"), "never led")
	})
}

// panickySyncer is a source whose WaitForSync panics.
type panickySyncer struct{ keyList[string] }

func (panickySyncer) WaitForSync(context.Context) error { panic("WaitForSync") }

// A source whose WaitForSync panics fails the Loop's Run with the panic.
func TestSyncerThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := NewMemMetrics()
		s := newScript(func(string, int) (Result, error) { return Result{}, nil })
		l := mustNew(t, s, panickySyncer{}, WithMetrics(m), WithLogger(newLogger(&logs)))
		require.ErrorContains(t, l.Run(t.Context()), "WaitForSync panicked: string: WaitForSync")
		require.Contains(t, logs.String(), `level=ERROR msg="syncer.WaitForSync panicked"`)
		require.Equal(t, 1, m.Panics("test"))
	})
}

// waiterSource is a revisionWaiter whose methods panic.
type waiterSource struct{ keyList[string] }

func (waiterSource) Revision() int64                      { panic("Revision") }
func (waiterSource) WaitFor(context.Context, int64) error { panic("WaitFor") }

// A revisionWaiter that panics: a Requeue after a write runs the key again,
// marked for a fresh read, and each panic is reported.
func TestRevisionWaiterThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		m := NewMemMetrics()
		var fresh []bool
		s := scriptFunc(func(ctx context.Context, key string) (Result, error) {
			fresh = append(fresh, FreshReadNeeded(ctx))
			if len(fresh) > 1 {
				return Result{}, nil
			}
			RecordWrite(ctx, 7)
			return Result{RequeueAfterWrite: true}, nil
		})
		l := mustNew(t, s, Sources(keySet("a"), waiterSource{}), WithMetrics(m), WithLogger(newLogger(&logs)))
		stop := start(t, l)
		synctest.Wait()
		require.NoError(t, stop())
		require.Equal(t, []bool{false, true}, fresh)
		require.Contains(t, logs.String(), `level=ERROR msg="revisionWaiter.Revision panicked"`)
		require.Contains(t, logs.String(), `level=ERROR msg="revisionWaiter.WaitFor panicked"`)
	})
}

// Sources run directly (not by a Loop): a joined source that panics fails
// the join like one that returned an error, and the others are stopped.
func TestJoinedSourceThatPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := SourceFunc[string](func(context.Context, Sink[string]) error { panic("Run") })
		good := SourceFunc[string](func(ctx context.Context, _ Sink[string]) error { <-ctx.Done(); return nil })
		l := mustNew(t, newScript(func(string, int) (Result, error) { return Result{}, nil }), nil)
		require.ErrorContains(t, Sources(good, bad).Run(t.Context(), l), "panicked: string: Run")
	})
}
