package memstore

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// The default window grows without moving an event: a write that doubles
// it allocates about what any write does, where the ring in one slice
// copied every event it held into one twice as large, holding the write
// lock (at 1M keys, 640,000 events into 1M, ~100 MB). The events written
// before the growth read back as written.
func TestHistoryGrowsWithoutCopying(t *testing.T) {
	ctx := context.Background()
	s := New()
	keys := keysPerHistoryEvent * baseWindow // the next key doubles the window
	put := func(i int) {
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: fmt.Appendf(nil, `{"i":%d}`, i)})
		require.NoError(t, err)
	}
	for i := range keys + keysPerHistoryEvent - 1 {
		put(i)
	}
	size := s.hist.size
	require.Equal(t, baseWindow, size)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	put(keys + keysPerHistoryEvent - 1)
	runtime.ReadMemStats(&after)
	require.Equal(t, 2*size, s.hist.size, "the window doubled")
	grew := after.TotalAlloc - before.TotalAlloc
	require.Less(t, grew, uint64(64<<10), "bytes allocated by the write that doubled a window of %d events", size)
	for r := s.hist.first; r <= s.hist.last; r++ {
		ev := s.hist.kvEvent(r, s.hist.at(r))
		require.Equal(t, fmt.Sprintf(`{"i":%d}`, r-1), string(ev.KV.Value), "revision %d", r)
	}
}

// A block after the Store's first is made with room for every event it
// will hold, not grown to it by doubling: while a lagging watch grows the
// window, and no block is let go to be the spare, each block of writes
// allocates one block, where 16, 32, ... 1,024 events' room cost twice
// that. The first block starts small: a Store with few writes holds few
// events.
func TestHistoryBlocksAfterTheFirstAreMadeWhole(t *testing.T) {
	h := newHistory(8*historyBlock, 1<<30)
	val := []byte("v")
	for range 10 {
		h.add("k", false, val, 1, nil)
	}
	require.Equal(t, 16, cap(h.blocks[0]), "the first block, ten events in")
	for range historyBlock - 10 {
		h.add("k", false, val, 1, nil)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 2 * historyBlock {
		h.add("k", false, val, 1, nil)
	}
	runtime.ReadMemStats(&after)
	require.Len(t, h.blocks, 3)
	require.Nil(t, h.spare, "no block let go")
	block := uint64(historyBlock) * uint64(unsafe.Sizeof(event{}))
	grew := after.TotalAlloc - before.TotalAlloc
	require.Less(t, grew, 2*block+block/8, "bytes allocated by two blocks of writes (%d a block)", block)
	require.LessOrEqual(t, after.Mallocs-before.Mallocs, uint64(4), "allocations of two blocks of writes: the blocks and the list of them")
}

// The ring lets go of its oldest block once it has evicted every event in
// it: however many writes it has seen, it holds its size and at most two
// blocks more (the oldest block's evicted events, the spare), and no block
// has room for more than historyBlock events.
func TestHistoryHoldsItsSizeAndTwoBlocks(t *testing.T) {
	for _, size := range []int{1, 100, historyBlock, 3*historyBlock + 7} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			h := newHistory(size, 0)
			for i := range 10 * (size + historyBlock) {
				h.add(fmt.Sprint(i%7), false, []byte("v"), 1, nil)
				held := cap(h.spare)
				for _, b := range h.blocks {
					held += cap(b)
					require.LessOrEqual(t, cap(b), historyBlock, "a block's room after %d writes", i+1)
				}
				require.LessOrEqual(t, held, size+2*historyBlock, "after %d writes", i+1)
				require.Equal(t, int64(i+1), h.last)
				require.Equal(t, max(int64(1), h.last-int64(size)+1), h.first)
				for _, r := range []int64{h.first, (h.first + h.last) / 2, h.last} {
					require.Equal(t, fmt.Sprint((r-1)%7), h.at(r).key, "revision %d after %d writes", r, i+1)
				}
			}
		})
	}
}

// The default window at rest is DefaultHistorySize until the keys call for
// more; from there it is the window they call for, baseWindow at least,
// whether or not a lagging watch grew it meanwhile (to less than that),
// and kept it grown: it lags yet.
func TestDefaultWindowTakesTheKeysWindowPastItsSizeAtRest(t *testing.T) {
	for _, lagged := range []int{0, 2 * DefaultHistorySize} {
		t.Run(fmt.Sprint("grown to ", lagged), func(t *testing.T) {
			ctx := context.Background()
			s := New()
			put := func(i int) {
				_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: []byte(`{}`)})
				require.NoError(t, err)
			}
			keys := keysPerHistoryEvent * (DefaultHistorySize + 1) // they call for one more
			for i := range keys - 1 {
				put(i)
				if i == keys/2 && lagged > 0 {
					s.mu.Lock()
					s.hist.grow(lagged)               // as lagGrow does
					s.live[&watch{s: s}] = struct{}{} // a live watch past saving: settle keeps the window
					s.mu.Unlock()
				}
			}
			require.Equal(t, max(DefaultHistorySize, lagged), s.hist.size, "at rest")
			put(keys - 1)
			require.Equal(t, baseWindow, s.hist.size, "once the keys call for more")
		})
	}
}

// lagDue lets lagGrow look from lagCheck on, once the ring is full, and
// not before either: a write at lagCheck is one lagGrow looks at.
func TestLagDueFromLagCheckOnceTheRingIsFull(t *testing.T) {
	ctx := context.Background()
	s := New(WithHistorySize(16))
	for i := range 16 {
		require.False(t, s.lagDue(), "before write %d: the ring is not full", i+1)
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%d", i), Value: []byte(`{}`)})
		require.NoError(t, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lagCheck = s.hist.last
	require.True(t, s.lagDue(), "full, at lagCheck")
	s.lagCheck = s.hist.last + 1
	require.False(t, s.lagDue(), "full, before lagCheck")
}

// With no watch live, or the window as large as the keys allow, a write
// that lagGrow looks at puts its next look a sixteenth of the ring's
// writes on, as when it looks at a watch: not at every write. A create,
// and a new watch, call for a look at the next write.
func TestLagGrowLooksEverySixteenthOfTheRingWithNothingToGrow(t *testing.T) {
	ctx := context.Background()
	put := func(s *Store, key string) {
		t.Helper()
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(`{}`)})
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"the default window", nil},
		{"a window of WithHistorySize", []Option{WithHistorySize(64)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.opts...)
			for i := range 4 {
				put(s, fmt.Sprintf("k/%d", i))
			}
			for i := 0; s.hist.last < int64(s.hist.size)+1; i++ {
				put(s, fmt.Sprintf("k/%d", i%4))
			}
			looks := 0
			for i := range 4 * s.hist.size {
				if s.lagDue() {
					looks++
				}
				put(s, fmt.Sprintf("k/%d", i%4))
			}
			require.LessOrEqual(t, looks, 4*16+1, "lagGrow looks every sixteenth of the ring's writes, not at each of its %d", 4*s.hist.size)
			require.Positive(t, looks)

			for s.lagCheck != s.hist.last+1 { // the next write is not looked at
				put(s, "k/0")
			}
			put(s, "k/new") // a create
			require.Equal(t, s.hist.last-1+int64(max(s.hist.size/16, 1)), s.lagCheck, "a create is looked at")
			_, end, err := follower{s}.Follow("", s.hist.last)
			require.NoError(t, err)
			defer end()
			if s.growHistory {
				require.True(t, s.lagDue(), "after a new watch, the next write is looked at")
			}
		})
	}
}
