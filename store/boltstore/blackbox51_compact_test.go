package boltstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
)

// TestBlackbox51WatchesUnderCompaction: while writers fill a history of
// 16 writes (compacted in the background), every watch of the whole key
// space delivers consecutive revisions from where it started and, when
// compaction overtakes it (half of them stall until the writes are done),
// ends with one ErrExpired event after them: never a gap, never a silent
// end. Lists pinned near the head either expire or list every key.
func TestBlackbox51WatchesUnderCompaction(t *testing.T) {
	b := open(t, boltstore.WithHistorySize(16), boltstore.WithWatchBuffer(4))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const writers, each, keys = 4, 100, 8
	var wg, writing sync.WaitGroup
	writersDone, start := make(chan struct{}), make(chan struct{})
	put(t, b, "init", "") // revision 1
	for w := range writers {
		writing.Go(func() {
			<-start
			for i := range each {
				_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k%d", (w*each+i)%keys), Value: []byte{byte(i)}})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	results := make(chan string, 16)
	var watching sync.WaitGroup
	watching.Add(8)
	for wi := range 8 {
		wg.Go(func() {
			from := int64(1)
			ch, err := b.Watch(ctx, "", from)
			watching.Done()
			if err != nil {
				t.Error(err)
				return
			}
			next := from + 1
			if wi%2 == 0 {
				<-writersDone // a reader that stalls until compaction has overtaken it
			}
			for ev := range ch {
				switch {
				case ev.Err != nil:
					if !errors.Is(ev.Err, store.ErrExpired) {
						t.Errorf("watch from %d: %v", from, ev.Err)
					}
					results <- "expired"
					return
				case ev.Progress:
					continue
				case ev.Revision != next:
					t.Errorf("watch from %d: revision %d after %d: a gap", from, ev.Revision, next-1)
					return
				}
				next++
				if next > writers*each+1 {
					results <- "complete"
					return
				}
			}
			t.Errorf("watch from %d: closed without an error event at %d", from, next-1)
		})
	}
	watching.Wait()
	close(start)
	writing.Wait()
	close(writersDone)
	wg.Wait()
	close(results)
	n := map[string]int{}
	for r := range results {
		n[r]++
	}
	t.Logf("watches: %v", n)
	require.Equal(t, 8, n["expired"]+n["complete"])
	require.GreaterOrEqual(t, n["expired"], 4, "the stalled readers were overtaken")

	head := int64(writers*each + 1)
	for _, rev := range []int64{head - 20, head - 15, head} {
		l, err := b.List(ctx, "", kv.ListOptions{Revision: rev})
		if errors.Is(err, store.ErrExpired) {
			continue
		}
		require.NoError(t, err, "List at %d", rev)
		require.Len(t, l.KVs, keys+1, "List at %d (and init)", rev)
	}
}
