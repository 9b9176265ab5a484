package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// Black-box misuse of the typed Store, as a client-go user might: every
// case is a clear error of the documented class, never a panic, and the
// message stays short however large the bad input.

type mSpec struct {
	Replicas *int
	Tags     []string
}

type mStatus struct{ Ready bool }

func TestMisuseStoreBadInputIsAClearError(t *testing.T) {
	ctx := context.Background()
	st, err := store.New[mSpec, mStatus](memstore.New(), "Widget")
	require.NoError(t, err)
	w := st.As("user")
	long := strings.Repeat("a", 1<<16)
	for _, name := range []string{"", "a/b", "A", "a b", long, "a..b", "../etc", "a\x00b"} {
		_, err := w.Create(ctx, &store.Object[mSpec, mStatus]{Meta: store.Meta{Name: name}})
		require.ErrorIs(t, err, store.ErrInvalid, "Create %.20q", name)
		require.Less(t, len(err.Error()), 400, "the error quotes a huge name whole")
		_, err = st.Get(ctx, name)
		require.Error(t, err, "Get %.20q", name)
		require.NotErrorIs(t, err, store.ErrNotFound, "Get %.20q: a bad name is not a missing object", name)
		_, err = w.Delete(ctx, name)
		require.ErrorIs(t, err, store.ErrInvalid, "Delete %.20q", name)
	}
	// nil objects
	_, err = w.Create(ctx, nil)
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = w.Update(ctx, nil)
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = w.UpdateStatus(ctx, nil)
	require.ErrorIs(t, err, store.ErrInvalid)
	// A nil pointer inside the spec is a value like any other.
	_, err = w.Create(ctx, &store.Object[mSpec, mStatus]{Meta: store.Meta{Name: "nilspec"}})
	require.NoError(t, err)
	got, err := st.Get(ctx, "nilspec")
	require.NoError(t, err)
	require.Nil(t, got.Spec.Replicas)
	// A manager name that is empty is refused at the write.
	_, err = st.As("").Create(ctx, &store.Object[mSpec, mStatus]{Meta: store.Meta{Name: "nomanager"}})
	require.ErrorIs(t, err, store.ErrInvalid)
	// A value over the backend's limit is a clear error, and the object
	// is not half-written.
	huge := make([]string, 0, 1<<15)
	for range 1 << 15 {
		huge = append(huge, strings.Repeat("x", 64))
	}
	_, err = w.Create(ctx, &store.Object[mSpec, mStatus]{Meta: store.Meta{Name: "huge"}, Spec: mSpec{Tags: huge}})
	require.Error(t, err)
	require.Less(t, len(err.Error()), 400)
	_, err = st.Get(ctx, "huge")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// A writer that keeps an object it read and writes it again and again
// (never re-reading) gets ErrConflict each time after the first, and the
// stored object holds exactly the one write that won.
func TestMisuseStaleRevisionWritesInALoopConflict(t *testing.T) {
	ctx := context.Background()
	st, err := store.New[mSpec, mStatus](memstore.New(), "Widget")
	require.NoError(t, err)
	w := st.As("user")
	_, err = w.Create(ctx, &store.Object[mSpec, mStatus]{Meta: store.Meta{Name: "a"}})
	require.NoError(t, err)
	stale, err := st.Get(ctx, "a")
	require.NoError(t, err)
	conflicts := 0
	for i := range 50 {
		o := *stale
		o.Spec.Tags = []string{string(rune('a' + i%26))}
		if _, err := w.Update(ctx, &o); err != nil {
			require.ErrorIs(t, err, store.ErrConflict)
			conflicts++
		}
	}
	require.Equal(t, 49, conflicts)
	got, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, got.Spec.Tags)
}

// Many goroutines update one key read-modify-write, each retrying on
// ErrConflict: no update is lost.
func TestMisuseConcurrentWritersOfOneKeyLoseNothing(t *testing.T) {
	ctx := context.Background()
	st, err := store.New[mSpec, mStatus](memstore.New(), "Widget")
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, &store.Object[mSpec, mStatus]{Meta: store.Meta{Name: "a"}})
	require.NoError(t, err)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			w := st.As("user")
			for j := range each {
				for {
					o, err := st.Get(ctx, "a")
					if err != nil {
						t.Error(err)
						return
					}
					cp := *o
					cp.Spec.Tags = append(append([]string(nil), o.Spec.Tags...), string(rune('A'+i))+string(rune('0'+j%10)))
					_, err = w.Update(ctx, &cp)
					if errors.Is(err, store.ErrConflict) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					break
				}
			}
		})
	}
	wg.Wait()
	got, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Len(t, got.Spec.Tags, writers*each)
}

// Misuse: a nil option (a conditional option left nil) is skipped, by
// store.New as by memstore.New, not a panic.
func TestMisuseNilOptionsAreSkipped(t *testing.T) {
	st, err := store.New[mSpec, mStatus](memstore.New(nil, memstore.WithHistorySize(10), nil), "Widget", nil, store.WithKeyPrefix("team"), nil)
	require.NoError(t, err)
	_, err = st.As("m").Create(t.Context(), &store.Object[mSpec, mStatus]{Meta: store.Meta{Name: "a"}})
	require.NoError(t, err)
	_, err = st.Get(t.Context(), "a")
	require.NoError(t, err)
	require.Equal(t, "team/Widget/", st.Prefix(), "the options around a nil one still apply")
}
