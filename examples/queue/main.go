// Command queue shows what steady's work queue does, in four short scenes:
// a burst of events collapses into one reconcile per object, a delayed key
// waits for its time, a failing key backs off, and a resync of many keys
// does not hold up a real change.
//
// Usage:
//
//	go run ./examples/queue [-events 1000] [-delay 100ms] [-failures 4] [-resync 100000]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/examples/internal/cli"
	"github.com/steady-go/steady/queue"
)

func main() {
	cli.Exit("queue", run(os.Args[1:], os.Stdout))
}

// options are the command-line flags.
type options struct {
	events   int           // scene 1: events in the burst
	delay    time.Duration // scene 2: the AddAfter delay
	failures int           // scene 3: failed attempts before the success
	resync   int           // scene 4: keys the resync queues
}

func parseFlags(args []string, w io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("queue", flag.ContinueOnError)
	fs.SetOutput(w)
	fs.IntVar(&o.events, "events", 1000, "scene 1: events in the burst about three objects (1 to 10,000,000)")
	fs.DurationVar(&o.delay, "delay", 100*time.Millisecond, "scene 2: how long the delayed key waits (1ms to 10s)")
	fs.IntVar(&o.failures, "failures", 4, "scene 3: failed attempts before the key succeeds (0 to 10)")
	fs.IntVar(&o.resync, "resync", 100_000, "scene 4: keys the low-priority resync queues (32 to 10,000,000)")
	if err := cli.Parse(fs, args, false); err != nil {
		return o, err
	}
	switch {
	case o.events < 1 || o.events > 10_000_000:
		return o, cli.Usagef("-events %d: want 1 to 10000000", o.events)
	case o.delay < time.Millisecond || o.delay > 10*time.Second:
		return o, cli.Usagef("-delay %v: want 1ms to 10s", o.delay)
	case o.failures < 0 || o.failures > 10:
		return o, cli.Usagef("-failures %d: want 0 to 10", o.failures)
	case o.resync < 32 || o.resync > 10_000_000:
		return o, cli.Usagef("-resync %d: want 32 to 10000000", o.resync)
	}
	return o, nil
}

func run(args []string, w io.Writer) error {
	o, err := parseFlags(args, w)
	if err != nil {
		return err
	}
	ctx := context.Background()

	fmt.Fprintln(w, "1. A burst of events is deduplicated")
	q := queue.New[string]()
	objects := []string{"default/web", "default/db", "default/cache"}
	for i := range o.events {
		q.Add(objects[i%len(objects)])
	}
	fmt.Fprintf(w, "   %d events about %d objects -> %d keys queued\n", o.events, len(objects), q.Len())
	for q.Len() > 0 {
		key, _ := q.Get(ctx)
		fmt.Fprintf(w, "   reconcile %s\n", key)
		q.Done(key)
	}
	q.ShutDown()

	fmt.Fprintln(w, "2. A delayed key waits for its time, and keeps the earliest one")
	q = queue.New[string]()
	start := time.Now()
	q.AddAfter("default/report", o.delay)
	q.AddAfter("default/report", time.Hour)
	fmt.Fprintf(w, "   right after AddAfter(%v) and AddAfter(1h): %d ready\n", o.delay, q.Len())
	key, _ := q.Get(ctx)
	q.Done(key)
	fmt.Fprintf(w, "   Get returned %s after %v or more: %v\n", key, o.delay, time.Since(start) >= o.delay)
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
	for attempt := 1; attempt <= o.failures+1; attempt++ {
		key, _ := q.Get(ctx)
		if attempt <= o.failures {
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
	for i := range o.resync {
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
