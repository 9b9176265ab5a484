package workqueue

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
)

// checkIdle checks keyTable.idle against the nodes: it counts the nodes in
// the table that hold nothing.
func checkIdle[K comparable](t *testing.T, q *Queue[K]) {
	t.Helper()
	free := map[int32]bool{}
	for n := q.keys.free; n != none; n = q.keys.at(n).next {
		free[n] = true
	}
	idle := int32(0)
	for n := range q.keys.n {
		if nd := q.keys.at(n); !free[n] && nd.state == 0 && nd.failures == 0 {
			idle++
		}
	}
	require.Equal(t, idle, q.keys.idle)
	require.Equal(t, int(q.keys.n)-len(free), q.keys.used)
}

// A key Done with nothing left to do keeps its node, idle, and holds
// nothing: its next add finds the node rather than making one.
func TestDoneLeavesAnIdleNodeThatTheKeysNextAddReuses(t *testing.T) {
	q := New[string]()
	defer q.ShutDown()
	ctx := context.Background()
	q.Add("a")
	k, _ := q.Get(ctx)
	q.Done(k)
	require.Equal(t, KeyState{}, q.State("a"))
	require.Equal(t, Counts{}, q.Counts())
	for range q.All() {
		t.Fatal("All lists an idle key")
	}
	require.Equal(t, int32(1), q.keys.idle)
	checkIdle(t, q)

	q.AddLow("a")
	require.Equal(t, int32(1), q.keys.n, "the add made a node")
	require.Equal(t, int32(0), q.keys.idle)
	require.Equal(t, KeyState{Queued: true, Priority: Low}, q.State("a"))
	k, _ = q.Get(ctx)
	q.Done(k)
	q.Forget("a") // removes an idle node
	require.Zero(t, q.keys.used)
	checkIdle(t, q)
}

// Keys that never come back do not pile up: a new key takes an idle node's
// room once more than a quarter of the nodes are idle.
func TestIdleNodesMakeRoomForNewKeys(t *testing.T) {
	q := New[string]()
	defer q.ShutDown()
	ctx := context.Background()
	for i := range 10_000 { // one key at a time, each new
		q.Add("k" + strconv.Itoa(i))
		k, _ := q.Get(ctx)
		q.Done(k)
	}
	require.Equal(t, int32(1), q.keys.n)
	checkIdle(t, q)

	for i := range 1000 { // a thousand at once, then a thousand new ones
		q.Add("a" + strconv.Itoa(i))
	}
	for range 1000 {
		k, _ := q.Get(ctx)
		q.Done(k)
	}
	for i := range 1000 {
		q.Add("b" + strconv.Itoa(i))
	}
	require.LessOrEqual(t, q.keys.n, int32(1000*4/3+1), "nodes for at most 4/3 of the keys held at once")
	checkIdle(t, q)
	for range 1000 {
		k, _ := q.Get(ctx)
		require.Equal(t, "b", k[:1])
		q.Done(k)
	}
	checkIdle(t, q)
}

// The idle count stays true through every kind of operation.
func TestTheIdleCountMatchesTheNodes(t *testing.T) {
	q := New[int](WithBackoff(backoff.Policy{Base: 1, Factor: 1, Cap: 1}))
	defer q.ShutDown()
	r := rand.New(rand.NewPCG(5, 5))
	var taken []int
	for range 20_000 {
		k := r.IntN(200)
		switch r.IntN(8) {
		case 0:
			q.Add(k)
		case 1:
			q.AddLow(k)
		case 2:
			q.AddAfter(k, 1<<40)
		case 3:
			q.AddRateLimited(k)
		case 4:
			q.Forget(k)
		case 5, 6:
			if q.Len() > 0 { // so Get does not wait
				k, _ := q.Get(context.Background())
				taken = append(taken, k)
			}
		case 7:
			if len(taken) > 0 {
				i := r.IntN(len(taken))
				q.Done(taken[i])
				taken = append(taken[:i], taken[i+1:]...)
			}
		}
		checkIdle(t, q)
	}
}
