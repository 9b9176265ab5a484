package manager_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/manager"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// WithWriteLimit paces the writes of every Loop of the Manager with one
// wait: two Loops that each write once at the start share a bucket of one
// token a second, so the second write lands a second after the first.
func TestWithWriteLimitPacesEveryLoopsWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := store.New[struct{}, struct{}](memstore.New(), "Thing")
		require.NoError(t, err)
		bucket, err := backoff.NewBucket[string](backoff.BucketConfig{Rate: 1, Burst: 1})
		require.NoError(t, err)
		m := manager.New(manager.WithWriteLimit(bucket.Wait))
		t0 := time.Now()
		var mu sync.Mutex
		var landed []time.Duration
		for _, name := range []string{"a", "b"} {
			r := reconcile.Func[string](func(ctx context.Context, key string) (reconcile.Result, error) {
				_, err := st.As(name).Create(ctx, &store.Object[struct{}, struct{}]{Meta: store.Meta{Name: key}})
				if err != nil {
					return reconcile.Result{}, err
				}
				mu.Lock()
				landed = append(landed, time.Since(t0))
				mu.Unlock()
				return reconcile.Result{}, nil
			})
			l, err := reconcile.New(name, r, keySet(name), reconcile.WithResync(time.Hour, 0))
			require.NoError(t, err)
			require.NoError(t, m.AddLoop(l))
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- m.Run(ctx) }()
		time.Sleep(time.Minute)
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)
		slices.Sort(landed)
		require.Equal(t, []time.Duration{0, time.Second}, landed)
	})
}
