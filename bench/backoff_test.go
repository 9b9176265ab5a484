package bench

import (
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/util/workqueue"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/queue"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// backoffKeys are the 10k distinct keys every backoff benchmark cycles
// through, built once so the benchmarks measure the limiters, not strconv.
var backoffKeys = func() []string {
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "namespace/object-" + strconv.Itoa(i)
	}
	return keys
}()

// benchWhenForget records one failure and one success per op on 10k keys
// cycled: what a queue pays for a key that fails once and then succeeds.
func benchWhenForget(b *testing.B, when func(string), forget func(string)) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := backoffKeys[i%len(backoffKeys)]
		when(k)
		forget(k)
		i++
	}
}

// BenchmarkBackoffWhenForget is the pair: steady's per-key limiter
// against client-go's DefaultTypedControllerRateLimiter, which is what a
// client-go controller pays per failure. client-go's includes an overall
// token bucket, so the steady-default and client-go-per-key rows are there
// to compare like with like as well.
func BenchmarkBackoffWhenForget(b *testing.B) {
	b.Run("steady-perkey", func(b *testing.B) {
		l, err := backoff.NewPerKey[string](backoff.DefaultPolicy())
		if err != nil {
			b.Fatal(err)
		}
		benchWhenForget(b, func(k string) { l.When(k) }, l.Forget)
	})
	b.Run("client-go-default", func(b *testing.B) {
		l := workqueue.DefaultTypedControllerRateLimiter[string]()
		benchWhenForget(b, func(k string) { l.When(k) }, l.Forget)
	})
	b.Run("steady-default", func(b *testing.B) {
		l := backoff.NewDefault[string]()
		benchWhenForget(b, func(k string) { l.When(k) }, l.Forget)
	})
	b.Run("client-go-perkey", func(b *testing.B) {
		// The per-key half of client-go's default, without the bucket.
		l := workqueue.DefaultTypedItemBasedRateLimiter[string]()
		benchWhenForget(b, func(k string) { l.When(k) }, l.Forget)
	})
}

// BenchmarkQueueBackoffWhenForget is the per-key backoff a steady queue
// keeps in its own entry for each key (no separate limiter, map or lock)
// against client-go's ItemExponentialFailureRateLimiter, client-go's
// per-key backoff, with its default 5ms base and 1000s cap: per op, one
// failure and one success of a key of 10k cycled. The queue rows pay for
// the queue too: AddRateLimited is the failure count, the policy's delay
// and an AddAfter, which after the first pass over the keys finds each key
// already delayed, sooner, and leaves it.
func BenchmarkQueueBackoffWhenForget(b *testing.B) {
	b.Run("client-go-itemexp", func(b *testing.B) {
		l := workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
		benchWhenForget(b, func(k string) { l.When(k) }, l.Forget)
	})
	b.Run("steady-queue-perkey", func(b *testing.B) {
		q := queue.New[string](queue.WithBackoff(backoff.DefaultPolicy()))
		defer q.ShutDown()
		benchWhenForget(b, q.AddRateLimited, q.Forget)
	})
	b.Run("steady-queue-limiter", func(b *testing.B) {
		// The path before the queue kept counts: a PerKey limiter given to
		// NewRateLimited, with its own map and lock.
		l, err := backoff.NewPerKey[string](backoff.DefaultPolicy())
		if err != nil {
			b.Fatal(err)
		}
		q := queue.NewRateLimited[string](l)
		defer q.ShutDown()
		benchWhenForget(b, q.AddRateLimited, q.Forget)
	})
	b.Run("steady-queue-default", func(b *testing.B) {
		// With the default overall bucket, as client-go-default has.
		q := queue.New[string]()
		defer q.ShutDown()
		benchWhenForget(b, q.AddRateLimited, q.Forget)
	})
}
