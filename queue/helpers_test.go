package queue_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

// getWithin calls Get with a context that ends after d. Inside a synctest
// bubble d is virtual, so a test waits for nothing when no key is ready.
func getWithin[K comparable](q *queue.Queue[K], d time.Duration) (K, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return q.Get(ctx)
}

// tryGet calls Get and, if it blocks, cancels it once every goroutine in
// the synctest bubble is blocked, so virtual time does not move: it reports
// whether a key was ready now. It must run inside a bubble.
func tryGet[K comparable](q *queue.Queue[K]) (K, bool) {
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		k  K
		ok bool
	}
	ch := make(chan result, 1)
	go func() {
		k, ok := q.Get(ctx)
		ch <- result{k, ok}
	}()
	synctest.Wait()
	cancel()
	r := <-ch
	return r.k, r.ok
}

// mustGet takes the next key, which must be ready now.
func mustGet[K comparable](t *testing.T, q *queue.Queue[K]) K {
	t.Helper()
	k, ok := tryGet(q)
	require.True(t, ok, "Get: no key ready")
	return k
}

// requireEmpty checks that no key is ready now.
func requireEmpty[K comparable](t *testing.T, q *queue.Queue[K]) {
	t.Helper()
	k, ok := tryGet(q)
	require.False(t, ok, "Get handed out %v, want nothing ready", k)
}

// drain takes every key ready now, marks each done, and returns them in
// order.
func drain[K comparable](q *queue.Queue[K]) []K {
	var out []K
	for {
		k, ok := tryGet(q)
		if !ok {
			return out
		}
		q.Done(k)
		out = append(out, k)
	}
}
