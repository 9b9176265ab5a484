package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// countingHandler counts the log records of a slog.Logger by message.
type countingHandler struct {
	mu   sync.Mutex
	keys []string
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "key" {
			h.keys = append(h.keys, a.Value.String())
		}
		return true
	})
	return nil
}

func (h *countingHandler) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.keys
	h.keys = nil
	return out
}

func quarantinedKeys(c *cache.Cache[cacheSpec, cacheStatus]) []string {
	var out []string
	for _, e := range c.Quarantined() {
		out = append(out, e.Key)
	}
	return out
}

// TestCacheQuarantinesPoisonValues: a value that is not an object of the
// kind (not JSON, or a valid value claiming another object's name) used to
// fail every List, so the cache never synced. Now the cache syncs, serves
// the rest, lists the bad keys, logs each once, keeps the last valid object
// when a good key turns bad, and serves the key again once it is fixed.
func TestCacheQuarantinesPoisonValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := memstore.New()
		st, err := store.New[cacheSpec, cacheStatus](b, "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		real := &cobj{Meta: store.Meta{Name: "a"}, Spec: cacheSpec{Replicas: 3}}
		_, err = w.Create(ctx, real)
		require.NoError(t, err)
		raw := func(key, v string) int64 {
			rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(v)})
			require.NoError(t, err)
			return rev
		}
		badRev := raw("Widget/bad", "not json")
		raw("Widget/impostor", `{"metadata":{"kind":"Widget","name":"a","uid":"forged"},"spec":{"replicas":9}}`)

		logs := &countingHandler{}
		c := cache.New(st, cache.WithLogger(slog.New(logs)))
		var rec recorder
		c.AddHandler(rec.handle)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx), "a poison value does not keep the cache from syncing")

		got, ok := c.Get("a")
		require.True(t, ok)
		require.Equal(t, real.Meta.UID, got.Meta.UID, "the impostor does not replace a")
		_, ok = c.Get("impostor")
		require.False(t, ok)
		require.Equal(t, []string{"Widget/bad", "Widget/impostor"}, quarantinedKeys(c))
		require.Equal(t, badRev, c.Quarantined()[0].Revision)
		require.Equal(t, []string{"Widget/bad", "Widget/impostor"}, logs.take())
		require.Equal(t, 2, c.Undecodable())
		require.Equal(t, []string{fmt.Sprintf("add a@%d", real.Meta.Revision)}, rec.take())

		// A good key turns bad: the cache keeps serving its last object.
		rev := raw("Widget/a", `[1,2]`)
		require.NoError(t, c.WaitFor(ctx, rev))
		got, ok = c.Get("a")
		require.True(t, ok, "a bad write is not a deletion")
		require.Equal(t, 3, got.Spec.Replicas)
		require.Equal(t, []string{"Widget/a", "Widget/bad", "Widget/impostor"}, quarantinedKeys(c))
		synctest.Wait() // WaitFor promises what Get shows; the log line follows
		require.Equal(t, []string{"Widget/a"}, logs.take())
		require.Empty(t, rec.take())

		// A valid value brings it back; Purge removes a bad one for good.
		real.Spec.Replicas = 4
		real.Meta.Kind, real.Meta.Generation = "Widget", 2
		v, err := json.Marshal(real)
		require.NoError(t, err)
		rev = raw("Widget/a", string(v))
		require.NoError(t, c.WaitFor(ctx, rev))
		got, _ = c.Get("a")
		require.Equal(t, 4, got.Spec.Replicas)
		rev, err = w.Purge(ctx, "bad", badRev)
		require.NoError(t, err)
		require.NoError(t, c.WaitFor(ctx, rev))
		require.Equal(t, []string{"Widget/impostor"}, quarantinedKeys(c))
		require.Len(t, rec.take(), 1, "the handlers see a's change from the object they last saw")
		require.Equal(t, 1, c.Undecodable())
	})
}

// The Prometheus adapter (steady_cache_relists_total,
// steady_cache_drift_repairs_total, steady_cache_undecodable_values) and the
// debug page read these methods from any cache that has them.
var _ interface {
	Relists() int64
	DriftRepairs() int64
	Undecodable() int
} = (*cache.Cache[cacheSpec, cacheStatus])(nil)
