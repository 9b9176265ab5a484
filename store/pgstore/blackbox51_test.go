package pgstore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/pgstore"
)

// TestBlackbox51CondOrder: whichever function a Txn takes (an update with
// a fence goes through put3, other shapes through txn3), the error names
// the first cond that failed, in the caller's order, with its actual
// revision, and nothing is written.
func TestBlackbox51CondOrder(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	rk := bbPut(t, b, "k", "v")
	rf := bbPut(t, b, "fence", "f")
	head := bbPut(t, b, "other", "o")
	own := func(rev int64) kv.Cond { return kv.Cond{Key: "k", Target: kv.ModRevision, Revision: rev} }
	fence := func(rev int64) kv.Cond { return kv.Cond{Key: "fence", Target: kv.CreateRevision, Revision: rev} }
	other := func(rev int64) kv.Cond { return kv.Cond{Key: "other", Target: kv.ModRevision, Revision: rev} }
	for _, tc := range []struct {
		name   string
		conds  []kv.Cond
		index  int
		actual int64
	}{
		{"update: own cond fails", []kv.Cond{own(rk + 100)}, 0, rk},
		{"update and fence: both fail", []kv.Cond{own(rk + 100), fence(rf + 100)}, 0, rk},
		{"update and fence: fence fails", []kv.Cond{own(rk), fence(rf + 100)}, 1, rf},
		{"update and fence: fence on an absent key", []kv.Cond{own(rk), {Key: "gone", Target: kv.CreateRevision, Revision: 7}}, 1, 0},
		{"fence first, then own: both fail", []kv.Cond{fence(rf + 100), own(rk + 100)}, 0, rf},
		{"fence first, then own: own fails", []kv.Cond{fence(rf), own(rk + 100)}, 1, rk},
		{"three: the last fails", []kv.Cond{own(rk), fence(rf), other(head + 5)}, 2, head},
		{"three: the second and last fail", []kv.Cond{own(rk), fence(rf + 1), other(head + 5)}, 1, rf},
		{"own cond twice: the second fails", []kv.Cond{own(rk), {Key: "k", Target: kv.CreateRevision, Revision: rk + 1}}, 1, rk},
	} {
		_, err := b.Txn(ctx, tc.conds, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("new")})
		require.Equal(t, &kv.CondFailedError{Index: tc.index, Cond: tc.conds[tc.index], Actual: tc.actual}, err, tc.name)
		_, err = b.Txn(ctx, tc.conds, kv.Write{Kind: kv.WriteDelete, Key: "k"})
		require.Equal(t, &kv.CondFailedError{Index: tc.index, Cond: tc.conds[tc.index], Actual: tc.actual}, err, tc.name+" (a delete)")
	}
	got, err := b.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "v", string(got.Value), "nothing written")
	require.Equal(t, head+1, bbPut(t, b, "k", "w", own(rk), fence(rf), other(head)), "no revision used up")
}

// TestBlackbox51Options: New refuses every bad option value with
// ErrInvalid, and takes a schema named by an SQL keyword (quoted in every
// statement), on which writes and watches work.
func TestBlackbox51Options(t *testing.T) {
	pool := newPool(t)
	ctx := t.Context()
	for name, o := range map[string]pgstore.Option{
		"empty schema":      pgstore.WithSchema(""),
		"upper case":        pgstore.WithSchema("Steady"),
		"leading digit":     pgstore.WithSchema("1steady"),
		"a quote":           pgstore.WithSchema(`s"; DROP SCHEMA public; --`),
		"64 bytes":          pgstore.WithSchema(strings.Repeat("s", 64)),
		"zero poll":         pgstore.WithPollInterval(0),
		"negative poll":     pgstore.WithPollInterval(-time.Second),
		"negative history":  pgstore.WithHistorySize(-1),
		"nil clock":         pgstore.WithClock(nil),
		"hyphen":            pgstore.WithSchema("st-eady"),
		"non-ASCII":         pgstore.WithSchema("stéady"),
		"space":             pgstore.WithSchema("st eady"),
		"trailing newline":  pgstore.WithSchema("steady\n"),
		"63 then a newline": pgstore.WithSchema(strings.Repeat("s", 63) + "\n"),
	} {
		_, err := pgstore.New(ctx, pool, o)
		require.ErrorIs(t, err, store.ErrInvalid, name)
	}
	_, err := pgstore.New(ctx, nil)
	require.Error(t, err, "a nil pool")

	b, err := pgstore.New(ctx, pool, pgstore.WithSchema("select"), pgstore.WithWatchBuffer(-3))
	require.NoError(t, err)
	require.Equal(t, "select", b.Schema())
	ch, err := b.Watch(ctx, "", 0)
	require.NoError(t, err)
	require.Equal(t, 1, cap(ch), "WithWatchBuffer below 1 means 1")
	rev := bbPut(t, b, "k", "v")
	require.Equal(t, rev, bbNext(t, ch).Revision)
}

// TestBlackbox51CompactEdges: Compact keeps storetest.Compactor's promise
// at its edges (a List pinned below rev and a Watch from below rev-1
// expire; at rev and rev-1 they work), is a no-op when repeated or lower,
// refuses a revision above the store's or a negative one with ErrInvalid.
func TestBlackbox51CompactEdges(t *testing.T) {
	b := newBackend(t, newPool(t), pgstore.WithHistorySize(0))
	ctx := t.Context()
	for i := range 10 {
		bbPut(t, b, "k/"+string(rune('a'+i)), "v")
	}
	bbPut(t, b, "k/a", "v2") // a key written twice: its first row is the second's Prev
	head := int64(11)
	require.ErrorIs(t, b.Compact(ctx, head+1), store.ErrInvalid)
	require.ErrorIs(t, b.Compact(ctx, -1), store.ErrInvalid)
	rev := head - 3
	require.NoError(t, b.Compact(ctx, rev))
	require.NoError(t, b.Compact(ctx, rev), "repeated")
	require.NoError(t, b.Compact(ctx, 1), "lower")

	_, err := b.List(ctx, "k/", kv.ListOptions{Revision: rev - 1})
	require.ErrorIs(t, err, store.ErrExpired, "List pinned below rev")
	l, err := b.List(ctx, "k/", kv.ListOptions{Revision: rev})
	require.NoError(t, err, "List pinned at rev")
	require.Len(t, l.KVs, int(rev))
	require.Equal(t, "v", string(l.KVs[0].Value), "k/a as it was at rev")
	_, err = b.List(ctx, "k/", kv.ListOptions{Revision: head + 1})
	require.ErrorIs(t, err, store.ErrInvalid, "List pinned above the store")

	ch, err := b.Watch(ctx, "k/", rev-1)
	require.NoError(t, err)
	require.Equal(t, rev, bbNext(t, ch).Revision, "Watch from rev-1")
	for r := rev + 1; r <= head; r++ {
		ev := bbNext(t, ch)
		require.Equal(t, r, ev.Revision)
		if ev.KV.Key == "k/a" {
			require.Equal(t, "v", string(ev.Prev.Value), "the Prev of a write after the floor")
		}
	}
	ch, err = b.Watch(ctx, "k/", rev-2)
	require.NoError(t, err)
	select {
	case ev := <-ch:
		require.ErrorIs(t, ev.Err, store.ErrExpired, "Watch from below rev-1")
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no event")
	}
	_, ok := <-ch
	require.False(t, ok, "the channel closes after the error event")
}

// TestBlackbox51WatchFromFuture: a watch from a revision above the
// current one delivers only the writes after it, not those up to it.
func TestBlackbox51WatchFromFuture(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	head := bbPut(t, b, "k", "v")
	ch, err := b.Watch(ctx, "", head+2)
	require.NoError(t, err)
	bbPut(t, b, "k", "1")
	bbPut(t, b, "k", "2")
	want := bbPut(t, b, "k", "3")
	ev := bbNext(t, ch)
	require.Equal(t, want, ev.Revision, "the first write after the watch's revision")
	require.Equal(t, "3", string(ev.KV.Value))
}
