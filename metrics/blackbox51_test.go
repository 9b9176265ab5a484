package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile"
)

// recorder is a user's metrics.Loop, written from the interface's
// documentation: it embeds NopLoop and records the reconcile hooks, and
// hands the Loop a queue.Metrics that counts retries.
type recorder struct {
	metrics.NopLoop
	mu      sync.Mutex
	done    map[string]int // result label → reconciles
	errs    map[bool]int   // terminal → errors
	panics  int
	maxConc int
	queues  int // QueueMetrics calls
	retries int
	panicky bool // ReconcileDone panics, as a buggy hook would
}

func (r *recorder) ReconcileDone(_, result string, _ time.Duration) {
	r.mu.Lock()
	r.done[result]++
	r.mu.Unlock()
	if r.panicky {
		panic("a metrics hook's bug")
	}
}

func (r *recorder) ReconcileError(_ string, terminal bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs[terminal]++
}

func (r *recorder) ReconcilePanic(string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.panics++
}

func (r *recorder) MaxConcurrency(_ string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maxConc = n
}

func (r *recorder) QueueMetrics(string) queue.Metrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queues++
	return retries{r}
}

type retries struct{ r *recorder }

func (q retries) Depth(int)                               {}
func (q retries) Added()                                  {}
func (q retries) QueueLatency(time.Duration)              {}
func (q retries) WorkDuration(time.Duration)              {}
func (q retries) Unfinished(time.Duration, time.Duration) {}
func (q retries) Retry() {
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	q.r.retries++
}

// The hooks of metrics.Loop as their documentation states them, from a
// Loop over seven keys whose reconciles end every way a reconcile can:
// each reconcile is one ReconcileDone with its result label; an error is a
// ReconcileError, terminal or not; a panic is a ReconcilePanic and also an
// error; MaxConcurrency is the worker count; QueueMetrics is asked once for
// the one term, and its Retry counts each retry through backoff (a
// failure, a RequeueAfterWrite that wrote nothing), not a terminal error
// or a RequeueAfter. A hook that panics is logged once at Error, and no
// hook of the set is called again; the Loop's work goes on the same.
// (Round 53 rewrote the panicky case: it asserted that every other hook
// went on being called.)
func TestBlackbox51LoopHooks(t *testing.T) {
	for _, panicky := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{done: map[string]int{}, errs: map[bool]int{}, panicky: panicky}
			var mu sync.Mutex
			runs := map[string]int{}
			r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
				mu.Lock()
				runs[key]++
				first := runs[key] == 1
				mu.Unlock()
				switch {
				case key == "terminal":
					return reconcile.Result{}, reconcile.Terminal(errors.New("bad spec"))
				case !first:
				case key == "error":
					return reconcile.Result{}, errors.New("boom")
				case key == "panic":
					panic("user bug")
				case key == "after":
					return reconcile.Result{RequeueAfter: time.Second}, nil
				case key == "negative": // treated as zero: done
					return reconcile.Result{RequeueAfter: -time.Second}, nil
				case key == "write": // wrote nothing: again after backoff
					return reconcile.Result{RequeueAfterWrite: true}, nil
				}
				return reconcile.Result{}, nil
			})
			keys := reconcile.Keys(func() iter.Seq[string] {
				return slices.Values([]string{"after", "error", "negative", "ok", "panic", "terminal", "write"})
			})
			var logs bytes.Buffer
			var logMu sync.Mutex
			l, err := reconcile.New("c", r, keys, reconcile.WithMetrics(rec), reconcile.WithWorkers(2),
				reconcile.WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))))
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error)
			go func() { done <- l.Run(ctx) }()
			time.Sleep(10 * time.Second) // virtual: every retry is long done
			cancel()
			require.NoError(t, <-done)

			rec.mu.Lock()
			defer rec.mu.Unlock()
			require.Equal(t, map[string]int{"after": 2, "error": 2, "negative": 1, "ok": 1, "panic": 2, "terminal": 1, "write": 2}, runs,
				"the Loop's work is the same with a panicky hook")
			require.Equal(t, 2, rec.maxConc)
			require.Equal(t, 1, rec.queues, "one term, one QueueMetrics")
			logMu.Lock()
			defer logMu.Unlock()
			if panicky {
				// The first panic turns every hook of the set off: the
				// first ReconcileDone panics (the other worker may be
				// in it too), and nothing is counted after it.
				require.Equal(t, 1, strings.Count(logs.String(), "metrics hook panicked"), "logged once")
				require.Contains(t, logs.String(), `level=ERROR msg="metrics hook panicked" hook=ReconcileDone`)
				n := 0
				for _, c := range rec.done {
					n += c
				}
				require.LessOrEqual(t, n, 2, "one call per worker at most: %v", rec.done)
				require.LessOrEqual(t, rec.retries, 2, "no queue hook after the panic but one per worker in flight")
				return
			}
			require.Equal(t, map[string]int{"success": 6, "error": 3, "requeue": 1, "requeue_after": 1}, rec.done)
			require.Equal(t, map[bool]int{false: 2, true: 1}, rec.errs, "the panic is an error too; the terminal error is terminal")
			require.Equal(t, 1, rec.panics)
			require.Equal(t, 3, rec.retries, "the error, the panic and the RequeueAfterWrite that wrote nothing")
			require.NotContains(t, logs.String(), "metrics hook panicked")
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
