// Command queue shows what steady's work queue does, in four short scenes:
// a burst of events collapses into one reconcile per object, a delayed key
// waits for its time, a failing key backs off, and a resync of many keys
// does not hold up a real change.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/queue"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	ctx := context.Background()

	fmt.Fprintln(w, "1. A burst of events is deduplicated")
	q := queue.New[string]()
	objects := []string{"default/web", "default/db", "default/cache"}
	for i := range 1000 {
		q.Add(objects[i%len(objects)])
	}
	fmt.Fprintf(w, "   1000 events about %d objects -> %d keys queued\n", len(objects), q.Len())
	for q.Len() > 0 {
		key, _ := q.Get(ctx)
		fmt.Fprintf(w, "   reconcile %s\n", key)
		q.Done(key)
	}
	q.ShutDown()

	fmt.Fprintln(w, "2. A delayed key waits for its time, and keeps the earliest one")
	q = queue.New[string]()
	start := time.Now()
	q.AddAfter("default/report", 100*time.Millisecond)
	q.AddAfter("default/report", time.Hour)
	fmt.Fprintf(w, "   right after AddAfter(100ms) and AddAfter(1h): %d ready\n", q.Len())
	key, _ := q.Get(ctx)
	q.Done(key)
	fmt.Fprintf(w, "   Get returned %s after 100ms or more: %v\n", key, time.Since(start) >= 100*time.Millisecond)
	q.ShutDown()

	fmt.Fprintln(w, "3. A failing key backs off, and success resets it")
	policy := backoff.DefaultPolicy()
	policy.Jitter = 0 // exact numbers for the demo; keep jitter in production
	limiter, err := backoff.NewPerKey[string](policy)
	if err != nil {
		return err
	}
	q = queue.NewRateLimited[string](limiter)
	q.Add("default/flaky")
	for attempt := 1; attempt <= 5; attempt++ {
		key, _ := q.Get(ctx)
		if attempt < 5 {
			before := time.Now()
			q.AddRateLimited(key)
			wait := q.State(key).ReadyAt.Sub(before).Truncate(10 * time.Millisecond)
			fmt.Fprintf(w, "   attempt %d failed, retry in about %v\n", attempt, wait)
		} else {
			q.Forget(key)
			fmt.Fprintf(w, "   attempt %d succeeded, failures forgotten: %d\n", attempt, q.NumRequeues(key))
		}
		q.Done(key)
	}
	q.ShutDown()

	fmt.Fprintln(w, "4. A low-priority resync does not delay a normal add")
	q = queue.New[string]()
	for i := range 100_000 {
		q.AddLow("resync/obj-" + strconv.Itoa(i))
	}
	q.Add("default/web") // someone just changed it
	key, _ = q.Get(ctx)
	fmt.Fprintf(w, "   %d keys queued; the first one handed out is %s\n", q.Len()+1, key)
	q.Done(key)
	low := 0
	for range 32 {
		k, _ := q.Get(ctx)
		q.Done(k)
		if k != "default/web" {
			low++
		}
	}
	fmt.Fprintf(w, "   with nothing else waiting, the resync proceeds: next %d keys are resync keys\n", low)
	q.ShutDown()
	return nil
}
