package lease_test

import (
	"context"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// partition wraps a real backend and, while cut, makes every call hang
// until its ctx ends, as a network partition does. It lets a test stop one
// candidate's renewals without touching the others.
type partition struct {
	kv.Backend
	cut atomic.Bool
}

func (p *partition) hang(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (p *partition) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if p.cut.Load() {
		return kv.KeyValue{}, p.hang(ctx)
	}
	return p.Backend.Get(ctx, key)
}

func (p *partition) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if p.cut.Load() {
		return 0, p.hang(ctx)
	}
	return p.Backend.Txn(ctx, conds, w)
}

// fencedWrite writes value at key with fence f as a precondition, as the
// typed store does for a write made with a term context.
func fencedWrite(ctx context.Context, b kv.Backend, f store.Fence, key, value string) (int64, error) {
	return b.Txn(ctx, []kv.Cond{kv.Cond{Key: f.Key, Target: kv.CreateRevision, Revision: f.Revision}}, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
}
