package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// gatedSpec's decoding can be made to wait, once armed, until a second
// decode has started: it proves that two values are decoded at once.
type gatedSpec struct {
	Replicas int `json:"replicas"`
}

type gate struct {
	armed   atomic.Bool
	entered atomic.Int32
	both    chan struct{} // closed when the second decode starts
}

// gates is read by gatedSpec.UnmarshalJSON: one gate per test, set before
// the test's goroutines start.
var gates atomic.Pointer[gate]

func (s *gatedSpec) UnmarshalJSON(b []byte) error {
	if g := gates.Load(); g != nil && g.armed.Load() {
		switch g.entered.Add(1) {
		case 1:
			<-g.both
		case 2:
			close(g.both)
		}
	}
	type plain gatedSpec
	return json.Unmarshal(b, (*plain)(s))
}

// backlogBackend is a memstore whose watches hand their first n events to
// the Store all at once, as a Backend does to a receiver that fell behind.
type backlogBackend struct {
	*memstore.Store
	n int
}

func (b backlogBackend) Watch(ctx context.Context, prefix string, from int64) (<-chan store.KVEvent, error) {
	in, err := b.Store.Watch(ctx, prefix, from)
	if err != nil {
		return nil, err
	}
	out := make(chan store.KVEvent, b.n)
	for range b.n {
		out <- <-in
	}
	go func() {
		defer close(out)
		for ev := range in {
			out <- ev
		}
	}()
	return out, nil
}

// A watch's backlog is decoded by several goroutines at once, and its
// events still arrive in revision order, each key's in the order written.
func TestWatchDecodesABacklogInParallelInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gate{both: make(chan struct{})}
		gates.Store(g)
		defer gates.Store(nil)
		ctx := t.Context()
		const keys, writes = 8, 8
		b := backlogBackend{Store: memstore.New(), n: keys * writes}
		st, err := store.New[gatedSpec, typedStatus](b, "Gated")
		require.NoError(t, err)
		st.SetWatchDecoders(2)
		m := st.As("m")
		rev0, err := m.Create(ctx, &store.Object[gatedSpec, typedStatus]{Meta: store.Meta{Name: "first"}})
		require.NoError(t, err)
		for w := range writes {
			for k := range keys {
				_, err := m.Apply(ctx, fmt.Sprint("k", k), gatedSpec{Replicas: w})
				require.NoError(t, err)
			}
		}
		g.armed.Store(true)
		events, err := st.WatchWithoutPrev(ctx, rev0, nil)
		require.NoError(t, err)
		last := rev0
		seen := map[string]int{}
		for range keys * writes {
			ev := <-events
			require.NoError(t, ev.Err)
			require.Greater(t, ev.Revision, last, "revision order")
			last = ev.Revision
			name := ev.Object.Meta.Name
			require.Equal(t, seen[name], ev.Object.Spec.Replicas, "%s's writes in order", name)
			seen[name]++
		}
		require.Len(t, seen, keys)
		require.GreaterOrEqual(t, g.entered.Load(), int32(2))
	})
}
