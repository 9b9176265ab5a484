package workqueue_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/workqueue"
)

// getFunc is Get or GetUntilShutDown.
type getFunc = func(q *workqueue.Queue[int], ctx context.Context) (int, bool)

// GetUntilShutDown hands out what Get hands out, in the same order and at
// the same times: a worker drains each of two queues that get the same
// random adds (now, low, while the key is processing) and
// releases (Done) at the same times, one worker with each. Every step
// waits for the worker to block (synctest.Wait), so the order is the
// queue's alone. Only the wait differs (see GetUntilShutDown). Delayed
// adds are left out: a key falling due while the worker is woken for
// another reaches it first or second as the wait's select picks, under Get
// too (seed 27 of 40 differed between two runs of Get under -race), so
// TestGetUntilShutDownWaitsForDelayedKeys takes them one at a time.
func TestGetUntilShutDownHandsOutWhatGetDoes(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1))
		type op struct {
			kind, key int
			pause     time.Duration
		}
		ops := make([]op, 80)
		for i := range ops {
			ops[i] = op{kind: r.IntN(3), key: r.IntN(8), pause: time.Duration(r.IntN(3)) * time.Millisecond}
		}
		type handout struct {
			key int
			at  time.Duration
		}
		run := func(get getFunc) (got []handout) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				q := workqueue.New[int]()
				start := time.Now()
				release := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					for {
						k, ok := get(q, ctx)
						if !ok {
							return
						}
						got = append(got, handout{k, time.Since(start)})
						<-release
						q.Done(k)
					}
				}()
				step := func(pause time.Duration) {
					synctest.Wait()
					time.Sleep(pause)
					synctest.Wait()
				}
				for _, o := range ops {
					switch o.kind {
					case 0:
						q.Add(o.key)
					case 1:
						q.AddLow(o.key)
					default:
						select {
						case release <- struct{}{}:
						default: // the worker waits for a key
						}
					}
					step(o.pause)
				}
				for range 100 { // drain: every delay is due, every key handed out
					select {
					case release <- struct{}{}:
					default:
					}
					step(time.Millisecond)
				}
				cancel()
				q.ShutDown()
				close(release)
				<-done
			})
			return got
		}
		want := run((*workqueue.Queue[int]).Get)
		require.NotEmpty(t, want)
		require.Equal(t, want, run((*workqueue.Queue[int]).Get), "seed %d: Get is deterministic here", seed)
		require.Equal(t, want, run((*workqueue.Queue[int]).GetUntilShutDown), "seed %d", seed)
	}
}

// GetUntilShutDown returns false when its ctx is done as it starts, when
// the ShutDown that follows its ctx's end wakes it, and when an Add
// wakes it after its ctx ended: then it passes the wake-up on, so that a
// Get whose ctx lives takes the key.
func TestGetUntilShutDownEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New[int]()
		ended, cancel := context.WithCancel(t.Context())
		cancel()
		q.Add(1)
		_, ok := q.GetUntilShutDown(ended)
		require.False(t, ok, "ctx done as it starts")

		for range 3 {
			q := workqueue.New[int]()
			ctx, cancel := context.WithCancel(t.Context())
			type result struct {
				key int
				ok  bool
			}
			dead, live := make(chan result, 1), make(chan result, 1)
			go func() { k, ok := q.GetUntilShutDown(ctx); dead <- result{k, ok} }()
			synctest.Wait() // the first waiter: the wake-up token goes to it
			go func() { k, ok := q.Get(t.Context()); live <- result{k, ok} }()
			synctest.Wait()
			cancel()
			synctest.Wait()
			q.Add(7)
			synctest.Wait()
			select {
			case r := <-live:
				require.Equal(t, result{7, true}, r, "the live Get takes the key")
			default:
				t.Fatal("the key waits while a live Get waits: the wake-up was lost")
			}
			require.False(t, (<-dead).ok, "woken after its ctx ended")
			q.ShutDown()
		}
		q2 := workqueue.New[int]()
		ctx, cancel2 := context.WithCancel(t.Context())
		dead := make(chan bool, 1)
		go func() { _, ok := q2.GetUntilShutDown(ctx); dead <- ok }()
		synctest.Wait()
		cancel2()
		q2.ShutDown()
		require.False(t, <-dead, "woken by the ShutDown")
	})
}

// BenchmarkGetWait is one Get that waits per op: a worker waits for a key,
// the benchmark adds it, the worker takes it, is done with it and hands it
// back. With GetUntilShutDown the wait is a plain channel receive.
//
//	GOMAXPROCS=1 ... callgrind ... -test.bench GetWait -test.benchtime {N,2N}x
func BenchmarkGetWait(b *testing.B) {
	for _, bc := range []struct {
		name string
		get  getFunc
	}{{"Get", (*workqueue.Queue[int]).Get}, {"GetUntilShutDown", (*workqueue.Queue[int]).GetUntilShutDown}} {
		b.Run(bc.name, func(b *testing.B) {
			q := workqueue.New[int]()
			ctx, cancel := context.WithCancel(b.Context())
			took := make(chan int)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					k, ok := bc.get(q, ctx)
					if !ok {
						return
					}
					q.Done(k)
					took <- k
				}
			}()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				q.Add(i)
				if <-took != i {
					b.Fatal("wrong key")
				}
				i++
			}
			cancel()
			q.ShutDown()
			<-done
		})
	}
}

// GetUntilShutDown waits for a delayed key as Get does: a worker with
// nothing else queued takes each key when its delay ends, the nearest first.
func TestGetUntilShutDownWaitsForDelayedKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New[int]()
		defer q.ShutDown()
		start := time.Now()
		q.AddAfter(1, 5*time.Millisecond)
		q.AddAfter(2, 2*time.Millisecond)
		for _, want := range []struct {
			key int
			at  time.Duration
		}{{2, 2 * time.Millisecond}, {1, 5 * time.Millisecond}} {
			k, ok := q.GetUntilShutDown(t.Context())
			require.True(t, ok)
			require.Equal(t, want.key, k)
			require.Equal(t, want.at, time.Since(start), "key %d handed out when its delay ended", k)
			q.Done(k)
		}
		q.AddAfter(3, time.Millisecond)
		k, ok := q.GetUntilShutDown(t.Context())
		require.True(t, ok)
		require.Equal(t, 3, k)
		require.Equal(t, 6*time.Millisecond, time.Since(start))
	})
}
