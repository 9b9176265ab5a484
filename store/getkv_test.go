package store_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// getCounting is a user's wrapper of a memstore that counts its Gets: it
// carries memstore's hooks (embedded), whose read of a key in two parts
// is not the wrapper's Get.
type getCounting struct {
	*memstore.Store
	gets atomic.Int64
}

func (g *getCounting) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	g.gets.Add(1)
	return g.Store.Get(ctx, key)
}

// A Store reads its objects through its Backend's Get when the Backend
// is a wrapper of memstore, not through the memstore it wraps (whose
// hooks it carries): a Get, and each read of an Update of a Store that
// remembers no values, are the wrapper's. Over memstore itself they are
// memstore's reads, as its counts show.
func TestStoreReadsThroughAWrappersGet(t *testing.T) {
	ctx := t.Context()
	mem := memstore.New()
	w := &getCounting{Store: mem}
	for _, b := range []kv.Backend{w, mem} {
		st, err := store.New[judgeSpec, judgeStatus](b, "App", store.WithLastValues(0))
		require.NoError(t, err)
		name := "web"
		if b == kv.Backend(mem) {
			name = "api"
		}
		_, err = st.As("user").Create(ctx, judgeApp(name, 1))
		require.NoError(t, err)
		gets, memGets := w.gets.Load(), mem.Stats().Gets
		o, err := st.Get(ctx, name)
		require.NoError(t, err)
		o.Spec.Replicas++
		_, err = st.As("user").Update(ctx, o)
		require.NoError(t, err)
		got, err := st.Get(ctx, name)
		require.NoError(t, err)
		require.Equal(t, o.Spec, got.Spec)
		if b == kv.Backend(w) {
			require.Equal(t, gets+3, w.gets.Load(), "two Gets and the Update's read, the wrapper's")
		} else {
			require.Equal(t, gets, w.gets.Load(), "none of the wrapper's")
		}
		require.Equal(t, memGets+3, mem.Stats().Gets, "two Gets and the Update's read")
	}
}
