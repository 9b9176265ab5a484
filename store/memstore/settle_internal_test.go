package memstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// settleTwin is one watch, or one paged listing, run alike on two Stores
// given the same writes: one that settles and one whose window never
// shrinks.
type settleTwin struct {
	w      [2]*watch
	cursor int64
	// A listing's options, the same for both Stores: listing says it has
	// pages left, and then rev is its revision.
	listing bool
	opts    kv.ListOptions
}

// TestSettleExpiresNothingTheGrownWindowKept drives a Store that settles
// and one that never shrinks its window (as before settle) with the same
// random writes, watches that read at random paces, catch up, start
// (from the store revision or from a listing's) and end, and paged
// listings, and checks that the Store that settles never expires a live
// watch or a listing's page that the other served, and serves the same
// events and pages. At the end, every watch caught up and every listing
// watched from, its window is back at rest.
func TestSettleExpiresNothingTheGrownWindowKept(t *testing.T) {
	for seed := range uint64(8 / raceScale) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testSettleExpiresNothing(t, seed) })
	}
}

func testSettleExpiresNothing(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 46))
	stores := [2]*Store{New(), New(func(c *config) { c.settleOff = true })}
	keys := 2500 + rng.IntN(5000)
	delPer := 1 // of 20 writes, how many delete: the keys, which bound the window's growth, fall in some phases
	write := func(i int) {
		w := kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%05d", rng.IntN(keys)), Value: fmt.Appendf(nil, `{"i":%d,"pad":"%0*d"}`, i, rng.IntN(200), 0)}
		if rng.IntN(20) < delPer {
			w = kv.Write{Kind: kv.WriteDelete, Key: fmt.Sprintf("k/%05d", rng.IntN(keys))}
		}
		for _, s := range stores {
			_, err := s.Txn(ctx, nil, w)
			if !errors.Is(err, kv.ErrNotFound) {
				require.NoError(t, err)
			}
		}
	}
	for i := range keys {
		for _, s := range stores {
			_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%05d", i), Value: []byte(`{}`)})
			require.NoError(t, err)
		}
	}
	var twins []*settleTwin
	// ended holds the revisions of listings that ended, and the store
	// revision by which a watch from each starts: a Cache's relist applies
	// its last page before it watches, the writes going on.
	var ended [][2]int64
	watchFrom := func(rev int64) {
		tw := &settleTwin{cursor: rev}
		for i, s := range stores {
			tw.w[i] = s.newWatch("k/", rev)
		}
		twins = append(twins, tw)
	}
	end := func(i int) {
		if tw := twins[i]; !tw.listing {
			for j, s := range stores {
				s.unwait(tw.w[j])
			}
		}
		twins = append(twins[:i], twins[i+1:]...)
	}
	// read reads one batch of twin i's watch on both Stores; false: it ended.
	read := func(i int) bool {
		tw := twins[i]
		var q [2][]kv.Event
		var cur [2]int64
		var err [2]error
		for j := range stores {
			q[j], cur[j], _, err[j] = tw.w[j].Read(nil, tw.cursor)
		}
		if err[0] != nil {
			require.ErrorIs(t, err[0], kv.ErrExpired)
			require.ErrorIs(t, err[1], kv.ErrExpired, "the Store that settles expired a watch from %d that the grown window kept", tw.cursor)
		}
		if err[0] != nil || err[1] != nil {
			end(i)
			return false
		}
		require.Equal(t, cur[1], cur[0])
		require.Equal(t, q[1], q[0])
		tw.cursor = cur[0]
		return true
	}
	// page lists the next page of twin i's listing on both Stores.
	page := func(i int) {
		tw := twins[i]
		var l [2]kv.List
		var err [2]error
		for j, s := range stores {
			l[j], err[j] = s.List(ctx, "k/", tw.opts)
		}
		if err[0] != nil {
			require.ErrorIs(t, err[0], kv.ErrExpired)
			require.ErrorIs(t, err[1], kv.ErrExpired, "the Store that settles expired a page at %d that the grown window kept", tw.opts.Revision)
		}
		if err[0] != nil || err[1] != nil {
			end(i)
			return
		}
		require.Equal(t, l[1], l[0])
		tw.opts.Revision, tw.opts.Continue = l[0].Revision, l[0].Continue
		if tw.opts.Continue == "" {
			end(i)
			ended = append(ended, [2]int64{l[0].Revision, stores[0].hist.last + rng.Int64N(int64(stores[0].rest/4))})
		}
	}
	shrunk, grown := 0, 0
	readPer := 1000 // of 1000 steps, how many read a watch: bursts and calms
	for step := range 60_000 {
		if step%5000 == 0 {
			readPer = []int{3, 20, 100, 400, 600}[rng.IntN(5)]
			delPer = []int{1, 1, 1, 10}[rng.IntN(4)]
		}
		size := stores[0].hist.size
		switch r := rng.IntN(1000); {
		case r < readPer && len(twins) > 0:
			if i := rng.IntN(len(twins)); !twins[i].listing {
				read(i)
			} else {
				page(i)
			}
		case r < readPer+5 && len(twins) > 0:
			if i := rng.IntN(len(twins)); !twins[i].listing {
				for read(i) && twins[i].cursor < stores[0].hist.last {
				}
			}
		case r < readPer+8 && len(twins) < 6:
			watchFrom(stores[0].hist.last)
		case r < readPer+10 && len(twins) < 6:
			twins = append(twins, &settleTwin{listing: true, opts: kv.ListOptions{Limit: 200 + rng.IntN(1000)}})
		case r < readPer+11 && len(twins) > 0:
			end(rng.IntN(len(twins)))
		default:
			write(step)
		}
		for i := 0; i < len(ended); i++ {
			if e := ended[i]; e[1] <= stores[0].hist.last && len(twins) < 8 {
				watchFrom(e[0]) // as a Cache's relist does
				ended = append(ended[:i], ended[i+1:]...)
				i--
			}
		}
		switch n := stores[0].hist.size; {
		case n < size:
			shrunk++
		case n > size:
			grown++
		}
	}
	t.Logf("%d keys: grown %d times, shrunk %d times; never shrunk: %d events", keys, grown, shrunk, stores[1].hist.size)
	require.NotZero(t, shrunk, "the window shrank")
	// Every listing ends in a watch from it, every watch catches up and
	// all but one end; the one keeps up with writes enough to pass the
	// listings left unfinished.
	for len(twins) > 0 || len(ended) > 0 {
		if len(twins) == 0 {
			watchFrom(ended[0][0])
			ended = ended[1:]
			continue
		}
		i := len(twins) - 1
		if tw := twins[i]; tw.listing {
			page(i)
			continue
		}
		tw := twins[i]
		for read(i) && tw.cursor < stores[0].hist.last {
		}
		if i < len(twins) && twins[i] == tw {
			end(i)
		}
	}
	watchFrom(stores[0].hist.last)
	for i := range 2 * stores[1].hist.size {
		write(i)
		require.True(t, read(0))
	}
	require.Equal(t, stores[0].rest, stores[0].hist.size, "at rest; never shrunk: %d", stores[1].hist.size)
}
