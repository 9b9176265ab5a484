package memstore_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// settleValue is a value of the size of a controller's object.
func settleValue(i int) []byte { return fmt.Appendf(nil, `{"i":%d,"pad":"%0500d"}`, i, 0) }

// newLaggedStore returns a Store of keys keys whose default window a watch
// that read nothing while behind writes were made grew, and that watch,
// from the revision before those writes.
func newLaggedStore(t *testing.T, keys, behind int, opts ...memstore.Option) (*memstore.Store, <-chan kv.Event, int64) {
	t.Helper()
	s := memstore.New(opts...)
	for i := range keys {
		_, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: []byte(`{}`)})
		require.NoError(t, err)
	}
	from := s.Revision()
	ch, err := s.Watch(t.Context(), "k/", from)
	require.NoError(t, err)
	for i := range behind {
		_, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i%keys), Value: settleValue(i)})
		require.NoError(t, err)
	}
	require.Greater(t, s.HistorySize(), memstore.DefaultHistorySize, "the lagging watch grew the window")
	return s, ch, from
}

// readTo reads ch up to rev, requiring every event in order from from+1.
func readTo(t *testing.T, ch <-chan kv.Event, from, rev int64) {
	t.Helper()
	for want := from + 1; want <= rev; {
		ev := <-ch
		require.NoError(t, ev.Err, "the watch keeps its backlog")
		if !ev.Progress {
			require.Equal(t, want, ev.Revision)
			want++
		}
	}
}

// A window a lagging watch grew shrinks back to its size at rest once the
// watch has caught up, with no write after: what the grown window held,
// old values no watch needs any more, was a third of a controller's heap
// after a burst (30.6 against client-go's 21.3 MiB at 10,000 objects),
// for as long as the Store lived. WithoutSettle shows the window as it was.
func TestGrownWindowShrinksOnceTheWatchCatchesUp(t *testing.T) {
	const keys, behind = 10_000, 6_000
	for _, tc := range []struct {
		name   string
		opts   []memstore.Option
		settle bool
	}{
		{"default", nil, true},
		{"never shrunk", []memstore.Option{memstore.WithoutSettle()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, ch, from := newLaggedStore(t, keys, behind, tc.opts...)
				grown := s.HistorySize()
				readTo(t, ch, from, s.Revision())
				synctest.Wait() // the watch waits, caught up
				if !tc.settle {
					require.Equal(t, grown, s.HistorySize())
					require.Greater(t, s.HistoryBytes(), 2*memstore.DefaultHistorySize*len(settleValue(behind)), "the backlog's values")
					return
				}
				require.Equal(t, memstore.DefaultHistorySize, s.HistorySize(), "the window at rest")
				require.LessOrEqual(t, s.HistoryBytes(), 2*memstore.DefaultHistorySize*len(settleValue(behind)), "at most two values an event")
			})
		})
	}
}

// As the watch nears the store revision, within a quarter of the window,
// the window shrinks to twice what it has yet to read, keeping all of it,
// and to its size at rest once it has caught up.
func TestGrownWindowShrinksToTwiceTheLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keys, behind, lag = 10_000, 6_000, 1_500
		s, ch, from := newLaggedStore(t, keys, behind)
		grown := s.HistorySize()
		readTo(t, ch, from, s.Revision()-lag)
		synctest.Wait() // the watch's goroutine read up to two batches ahead, and waits to send
		n := s.HistorySize()
		require.Less(t, n, grown, "shrunk")
		require.GreaterOrEqual(t, n, 2*(lag-2*memstore.DefaultWatchBuffer), "to twice the lag at least")
		readTo(t, ch, s.Revision()-lag, s.Revision())
		synctest.Wait()
		require.Equal(t, memstore.DefaultHistorySize, s.HistorySize(), "the window at rest")
	})
}

// writeKeepingUp makes n writes, reading each from ch, a watch that keeps
// up, as it lands.
func writeKeepingUp(t *testing.T, s *memstore.Store, ch <-chan kv.Event, n int) {
	t.Helper()
	for i := range n {
		rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: settleValue(i)})
		require.NoError(t, err)
		for ev := <-ch; ev.Revision < rev || ev.Progress; ev = <-ch {
			require.NoError(t, ev.Err)
		}
	}
}

// A window keeps the events after the revision of a listing with pages
// left, as it keeps a lagging watch's: a Cache whose watch expired lists
// its kind in pages pinned to the first page's revision while the writes
// go on, then watches from there, and found both in the window grown
// before.
func TestGrownWindowKeepsAListingsRevision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keys, behind = 10_000, 6_000
		s, ch, from := newLaggedStore(t, keys, behind)
		grown := s.HistorySize()
		page, err := s.List(t.Context(), "k/", kv.ListOptions{Limit: 100})
		require.NoError(t, err)
		readTo(t, ch, from, s.Revision())
		writeKeepingUp(t, s, ch, 3*memstore.DefaultHistorySize/2)
		synctest.Wait()
		require.Less(t, s.HistorySize(), grown, "shrunk")
		require.GreaterOrEqual(t, int64(s.HistorySize()), s.Revision()-page.Revision, "the listing's revision is kept")
		opts := kv.ListOptions{Limit: 100, Revision: page.Revision, Continue: page.Continue}
		for opts.Continue != "" {
			page, err := s.List(t.Context(), "k/", opts)
			require.NoError(t, err, "a page pinned to the listing's revision")
			opts.Continue = page.Continue
		}
		lw, err := s.Watch(t.Context(), "k/", opts.Revision)
		require.NoError(t, err)
		readTo(t, lw, opts.Revision, s.Revision())
		synctest.Wait()
		require.Equal(t, memstore.DefaultHistorySize, s.HistorySize(), "watched from, it is let go")
	})
}

// A window shrunk back grows again, as far as it grew before, for a
// listing with pages left, as it does for a watch that lags: the Cache
// that relists in pages while the writes go on then watches from its
// listing's revision, which the window grown before would have kept.
func TestShrunkWindowGrowsForAListing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keys, behind = 10_000, 6_000
		s, ch, from := newLaggedStore(t, keys, behind)
		grown := s.HistorySize()
		readTo(t, ch, from, s.Revision())
		synctest.Wait()
		require.Equal(t, memstore.DefaultHistorySize, s.HistorySize())
		page, err := s.List(t.Context(), "k/", kv.ListOptions{Limit: 100})
		require.NoError(t, err)
		writeKeepingUp(t, s, ch, grown-grown/8)
		opts := kv.ListOptions{Limit: 100, Revision: page.Revision, Continue: page.Continue}
		for opts.Continue != "" {
			page, err := s.List(t.Context(), "k/", opts)
			require.NoError(t, err, "a page pinned to the listing's revision")
			opts.Continue = page.Continue
		}
		lw, err := s.Watch(t.Context(), "k/", opts.Revision)
		require.NoError(t, err)
		readTo(t, lw, opts.Revision, s.Revision())
	})
}

// A window shrunk back grows again for a lagging watch as far as it grew
// before, even once the keys, which bound its growth, have fallen: the
// window never shrunk would hold that many writes.
func TestShrunkWindowGrowsAsFarAsItGrew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const keys, behind, left = 10_000, 6_000, 1_000
		s, ch, from := newLaggedStore(t, keys, behind)
		readTo(t, ch, from, s.Revision())
		synctest.Wait()
		require.Equal(t, memstore.DefaultHistorySize, s.HistorySize())
		for i := range keys - left { // deleted, each read as it lands
			rev, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WriteDelete, Key: fmt.Sprintf("k/%07d", i)})
			require.NoError(t, err)
			for ev := <-ch; ev.Revision < rev || ev.Progress; ev = <-ch {
				require.NoError(t, ev.Err)
			}
		}
		from = s.Revision()
		for i := range behind { // the watch reads nothing meanwhile
			_, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", keys-left+i%left), Value: settleValue(i)})
			require.NoError(t, err)
		}
		readTo(t, ch, from, s.Revision())
	})
}
