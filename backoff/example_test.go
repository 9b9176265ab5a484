package backoff_test

import (
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
)

func ExamplePolicy_Delay() {
	p := backoff.DefaultPolicy()
	p.Jitter = 0 // exact delays for the example; keep jitter in real use
	for _, attempt := range []int{0, 1, 2, 10, 13, 14, 10_000} {
		fmt.Printf("attempt %5d: %v\n", attempt, p.Delay(attempt))
	}
	// Output:
	// attempt     0: 10ms
	// attempt     1: 20ms
	// attempt     2: 40ms
	// attempt    10: 10.24s
	// attempt    13: 1m21.92s
	// attempt    14: 2m0s
	// attempt 10000: 2m0s
}

func ExamplePolicy_Validate() {
	p := backoff.DefaultPolicy()
	p.Cap = 24 * time.Hour
	fmt.Println(p.Validate())
	// Output:
	// backoff: invalid configuration: cap 24h0m0s is over the 1h0m0s maximum
}

func ExampleNewPerKey() {
	p := backoff.DefaultPolicy()
	p.Base = time.Second
	p.Jitter = 0
	l, err := backoff.NewPerKey[string](p)
	if err != nil {
		panic(err)
	}
	fmt.Println(l.When("db"), l.When("db"), l.When("db"), l.NumRequeues("db"))
	fmt.Println(l.When("cache"), "(keys do not affect each other)")
	l.Forget("db") // db reconciled successfully
	fmt.Println(l.When("db"), l.NumRequeues("db"))
	// Output:
	// 1s 2s 4s 3
	// 1s (keys do not affect each other)
	// 1s 1
}

func ExampleNewBucket() {
	b, err := backoff.NewBucket[string](backoff.BucketConfig{
		Rate:    rate.Every(time.Minute), // one retry a minute overall
		Burst:   1,
		Ceiling: 3 * time.Minute,
		Rand:    func() float64 { return 0.5 }, // fixed for the example
	})
	if err != nil {
		panic(err)
	}
	for i := range 6 {
		fmt.Printf("failure %d waits %v\n", i, b.When("any").Round(time.Second))
	}
	// Output:
	// failure 0 waits 0s
	// failure 1 waits 1m0s
	// failure 2 waits 2m0s
	// failure 3 waits 3m0s
	// failure 4 waits 2m42s
	// failure 5 waits 2m42s
}

func ExampleMax() {
	p := backoff.DefaultPolicy()
	p.Base = time.Second
	p.Jitter = 0
	perKey, err := backoff.NewPerKey[string](p)
	if err != nil {
		panic(err)
	}
	bucket, err := backoff.NewBucket[string](backoff.BucketConfig{Rate: rate.Every(time.Minute), Burst: 2, Ceiling: 5 * time.Minute})
	if err != nil {
		panic(err)
	}
	l := backoff.Max[string](perKey, bucket)
	fmt.Println(l.When("a"))                    // per-key 1s, bucket has a token
	fmt.Println(l.When("a"))                    // per-key 2s, bucket has a token
	fmt.Println(l.When("b").Round(time.Second)) // per-key 1s, bucket empty: 1m
	// Output:
	// 1s
	// 2s
	// 1m0s
}

func ExampleNewDefault() {
	l := backoff.NewDefault[string]()
	d := l.When("object-1")
	fmt.Println(d >= 8*time.Millisecond && d <= 12*time.Millisecond) // 10ms ±20%
	l.Forget("object-1")
	fmt.Println(l.NumRequeues("object-1"))
	// Output:
	// true
	// 0
}
