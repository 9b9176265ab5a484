package queue_test

import (
	"context"
	"fmt"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/queue"
)

func Example() {
	q := queue.New[string]()
	defer q.ShutDown()

	// Ten events about two objects are two keys of work.
	for range 5 {
		q.Add("default/web")
		q.Add("default/db")
	}
	fmt.Println("ready:", q.Len())

	ctx := context.Background()
	for q.Len() > 0 {
		key, _ := q.Get(ctx)
		fmt.Println("reconcile", key)
		q.Done(key)
	}
	// Output:
	// ready: 2
	// reconcile default/web
	// reconcile default/db
}

func Example_priorities() {
	q := queue.New[string]()
	defer q.ShutDown()

	// A periodic resync adds every key low...
	for _, k := range []string{"a", "b", "c"} {
		q.AddLow(k)
	}
	// ...and an event that arrives afterwards still goes first.
	q.Add("changed")

	ctx := context.Background()
	for q.Len() > 0 {
		key, _ := q.Get(ctx)
		fmt.Println(key)
		q.Done(key)
	}
	// Output:
	// changed
	// a
	// b
	// c
}

func ExampleQueue_AddRateLimited() {
	policy := backoff.DefaultPolicy()
	policy.Jitter = 0
	perKey, err := backoff.NewPerKey[string](policy)
	if err != nil {
		fmt.Println(err)
		return
	}
	q := queue.NewRateLimited[string](perKey)
	defer q.ShutDown()

	ctx := context.Background()
	q.Add("flaky")
	for attempt := 1; attempt <= 3; attempt++ {
		key, _ := q.Get(ctx)
		if attempt < 3 {
			q.AddRateLimited(key) // failed: retry after a growing delay
			fmt.Printf("attempt %d failed, retries so far: %d\n", attempt, q.NumRequeues(key))
		} else {
			q.Forget(key) // succeeded: the next failure starts from 10ms again
			fmt.Printf("attempt %d succeeded, retries now: %d\n", attempt, q.NumRequeues(key))
		}
		q.Done(key)
	}
	// Output:
	// attempt 1 failed, retries so far: 1
	// attempt 2 failed, retries so far: 2
	// attempt 3 succeeded, retries now: 0
}

func ExampleQueue_AddAfter() {
	q := queue.New[string]()
	defer q.ShutDown()

	start := time.Now()
	q.AddAfter("check-later", 20*time.Millisecond)
	q.AddAfter("check-later", time.Hour) // the earlier ready time stands
	fmt.Println("ready now:", q.Len())

	key, _ := q.Get(context.Background()) // blocks until the delay has passed
	fmt.Println(key, "after at least 20ms:", time.Since(start) >= 20*time.Millisecond)
	q.Done(key)
	// Output:
	// ready now: 0
	// check-later after at least 20ms: true
}

func ExampleQueue_ShutDownWithDrain() {
	q := queue.New[string]()
	q.Add("in-flight")
	key, _ := q.Get(context.Background())

	go func() {
		time.Sleep(10 * time.Millisecond) // the worker finishes its key
		q.Done(key)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println("drained:", q.ShutDownWithDrain(ctx))

	_, ok := q.Get(context.Background())
	fmt.Println("Get after shutdown:", ok)
	// Output:
	// drained: <nil>
	// Get after shutdown: false
}

func ExampleQueue_State() {
	q := queue.New[string]()
	defer q.ShutDown()

	q.Add("a")
	key, _ := q.Get(context.Background())
	q.AddLow(key) // while processing: rerun, low, after Done
	s := q.State(key)
	fmt.Printf("processing=%v dirty=%v priority=%v\n", s.Processing, s.Dirty, s.Priority)
	q.Done(key)
	s = q.State(key)
	fmt.Printf("queued=%v priority=%v\n", s.Queued, s.Priority)
	// Output:
	// processing=true dirty=true priority=low
	// queued=true priority=low
}
