package manager_test

import (
	"bytes"
	"context"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/lease"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// keySet is a source that lists keys and hints none.
func keySet(keys ...string) reconcile.Source[string] {
	return reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) })
}

// nop is a reconciler that does nothing.
var nop = reconcile.Func[string](func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })

const leaseKey = "/lease/app"

// handElector grants a term, with a fence on leaseKey, each time the test
// sends on grants.
type handElector struct {
	grants chan struct{}
	n      int64
}

func (e *handElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	select {
	case <-ctx.Done():
		return nil, store.Fence{}, ctx.Err()
	case <-e.grants:
	}
	e.n++
	f := store.Fence{Key: leaseKey, Revision: e.n}
	return lease.WithFence(ctx, f), f, nil
}

// panickyElector is an elector whose Campaign panics.
type panickyElector struct{}

func (panickyElector) Campaign(context.Context) (context.Context, store.Fence, error) {
	panic("Campaign")
}

// logBuffer is a concurrency-safe log destination.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
