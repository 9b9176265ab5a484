package etcdstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
	"github.com/stretchr/testify/require"
)

func TestElectorOneLeaderAndHandover(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	ctx := context.Background()

	a, err := etcdstore.NewElector(b, "ctl", "a", 2*time.Second)
	require.NoError(t, err)
	bb, err := etcdstore.NewElector(b, "ctl", "b", 2*time.Second)
	require.NoError(t, err)

	actx, acancel := context.WithCancel(ctx)
	termA, fenceA, err := a.Campaign(actx)
	require.NoError(t, err)
	require.Equal(t, a.Key(), fenceA.Key)
	f, ok := store.FenceFrom(termA)
	require.True(t, ok, "the term context carries the fence")
	require.Equal(t, fenceA, f)

	// b cannot lead while a does.
	type won struct {
		term  context.Context
		fence store.Fence
		err   error
	}
	got := make(chan won, 1)
	bctx, bcancel := context.WithCancel(ctx)
	defer bcancel()
	go func() {
		term, fence, err := bb.Campaign(bctx)
		got <- won{term, fence, err}
	}()
	select {
	case <-got:
		t.Fatal("a second leader was elected while the first still leads")
	case <-time.After(3 * time.Second): // longer than the TTL: a renews
	}
	require.NoError(t, termA.Err(), "a renews its lease and keeps leading")

	// a writes fenced; then steps down and b takes over at once (the lease is
	// revoked, nobody waits out the TTL).
	_, err = b.Txn(ctx, []kv.Cond{kv.Cond{Key: fenceA.Key, Target: kv.CreateRevision, Revision: fenceA.Revision}}, kv.Write{Kind: kv.WritePut, Key: "x", Value: []byte("a")})
	require.NoError(t, err)
	stepDown := time.Now()
	acancel()
	a.Wait() // the lease is revoked before Wait returns
	w := <-got
	require.NoError(t, w.err)
	require.Less(t, time.Since(stepDown), time.Second)
	require.NotEqual(t, fenceA, w.fence)

	// a's stale fence is refused by etcd itself; b's passes.
	_, err = b.Txn(ctx, []kv.Cond{kv.Cond{Key: fenceA.Key, Target: kv.CreateRevision, Revision: fenceA.Revision}}, kv.Write{Kind: kv.WritePut, Key: "x", Value: []byte("stale")})
	require.ErrorIs(t, err, kv.ErrCondFailed)
	_, err = b.Txn(ctx, []kv.Cond{kv.Cond{Key: w.fence.Key, Target: kv.CreateRevision, Revision: w.fence.Revision}}, kv.Write{Kind: kv.WritePut, Key: "x", Value: []byte("b")})
	require.NoError(t, err)
	kvp, err := b.Get(ctx, "x")
	require.NoError(t, err)
	require.Equal(t, "b", string(kvp.Value))
}

func TestElectorTermEndsWhenEtcdIsGone(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	e, err := etcdstore.NewElector(b, "ctl", "a", 3*time.Second)
	require.NoError(t, err)
	term, _, err := e.Campaign(context.Background())
	require.NoError(t, err)

	c.kill(0) // a graceful Close; keep-alives may be answered until it returns
	lost := time.Now()
	select {
	case <-term.Done():
		// Keep-alives stop, so the leader stops within 2/3 of the TTL: before
		// etcd could have handed the key to anyone else.
		require.Less(t, time.Since(lost), 3*time.Second*2/3+500*time.Millisecond)
		require.ErrorIs(t, context.Cause(term), etcdstore.ErrTermEnded)
	case <-time.After(10 * time.Second):
		t.Fatal("term did not end after etcd went away")
	}
}

func TestNewElectorRejectsBadInput(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	for _, tc := range []struct {
		name, ident string
		ttl         time.Duration
		want        string
	}{
		{"", "a", 5 * time.Second, "empty election name"},
		{"n", "", 5 * time.Second, "empty identity"},
		{"n", "a", time.Second, "under the 2s minimum"},
	} {
		_, err := etcdstore.NewElector(b, tc.name, tc.ident, tc.ttl)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := etcdstore.NewElector(nil, "n", "a", 5*time.Second)
	require.ErrorContains(t, err, "nil backend")
}

// electorTimeout bounds each wait of the Elector tests below, so that a
// Wait or a term that hangs fails the test rather than the test binary.
const electorTimeout = 15 * time.Second

// returnsWithin reports whether done is closed within electorTimeout.
func returnsWithin(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-time.After(electorTimeout):
		return false
	}
}

// Two Loops share one Elector: a term whose campaign ctx ended is held in
// its release (its lease not yet revoked) while the other Loop's term is
// live. Wait waits for the ended term's release, however many terms began
// after it, and never for the live one. Before, Wait was a WaitGroup of
// every term: it blocked until the live term ended too, for as long as the
// other Loop led (reconcile.Loop gave up after 30 seconds, with an Error
// log).
func TestElectorWaitSkipsALiveTermAndWaitsForTheEndedOnesRelease(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	e, err := etcdstore.NewElector(b, "ctl", "shared", 2*time.Second)
	require.NoError(t, err)
	hold := make(chan struct{})
	var releases atomic.Int32
	etcdstore.SetBeforeRelease(e, func() {
		if releases.Add(1) == 1 {
			<-hold // the first term's release waits for the test
		}
	})

	actx, acancel := context.WithCancel(context.Background())
	defer acancel()
	_, _, err = e.Campaign(actx)
	require.NoError(t, err)
	acancel() // A ends; its release is held, so its lease expires with the TTL

	bctx, bcancel := context.WithCancel(context.Background())
	defer bcancel()
	bterm, _, err := e.Campaign(bctx) // B leads once A's key has expired
	require.NoError(t, err)
	require.NoError(t, bterm.Err())

	waited := make(chan struct{})
	go func() {
		defer close(waited)
		e.Wait()
	}()
	select {
	case <-waited:
		t.Fatal("Wait returned while the ended term's release was still running")
	case <-time.After(200 * time.Millisecond):
	}
	close(hold)
	require.True(t, returnsWithin(waited), "Wait did not return after the ended term's release, with another term live")
	require.NoError(t, bterm.Err(), "B still leads")

	bcancel()
	waited = make(chan struct{})
	go func() {
		defer close(waited)
		e.Wait()
	}()
	require.True(t, returnsWithin(waited), "Wait after B's campaign ctx ended")
	resp, err := b.Client().Get(context.Background(), b.Prefix()+e.Key())
	require.NoError(t, err)
	require.Empty(t, resp.Kvs, "B's lease was revoked before Wait returned")
}

// Campaigns, their ends and Waits run at once on one Elector: nothing
// panics or races (run with -race), and every Wait returns. Before, Wait
// was a sync.WaitGroup's, whose Add from a Campaign while a Wait was
// returning is a misuse the race detector reports.
func TestElectorCampaignConcurrentWithWait(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	e, err := etcdstore.NewElector(b, "ctl", "a", 2*time.Second)
	require.NoError(t, err)
	stop := make(chan struct{})
	waiters := make(chan struct{})
	go func() {
		defer close(waiters)
		for {
			select {
			case <-stop:
				return
			default:
				e.Wait()
			}
		}
	}()
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		_, _, err := e.Campaign(ctx)
		cancel()
		require.NoError(t, err)
	}
	close(stop)
	require.True(t, returnsWithin(waiters), "the Waits did not return")
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Wait()
	}()
	require.True(t, returnsWithin(done), "the last Wait did not return")
}

// A term ends when its election key is deleted or overwritten by someone
// else: the key no longer says who leads (an overwrite even keeps the
// CreateRevision the fence checks). The cause wraps ErrTermEnded and
// lease.ErrLost, and Wait does not wait for such a term while its campaign
// ctx lives. Before, the term went on until the lease failed.
func TestElectorTermEndsWhenTheKeyIsDeletedOrOverwritten(t *testing.T) {
	c := startCluster(t, 1)
	b := newBackend(t, c)
	e, err := etcdstore.NewElector(b, "ctl", "a", 2*time.Second)
	require.NoError(t, err)
	full := b.Prefix() + e.Key()
	for _, tc := range []struct {
		name   string
		change func() error
	}{
		{"deleted", func() error {
			_, err := b.Client().Delete(context.Background(), full)
			return err
		}},
		{"overwritten", func() error {
			_, err := b.Client().Put(context.Background(), full, "intruder")
			return err
		}},
	} {
		name := tc.name
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			term, _, err := e.Campaign(ctx)
			require.NoError(t, err)
			// The overwritten key has no lease: remove it for the next case,
			// even when this one fails (its Campaign would wait for ever).
			t.Cleanup(func() {
				_, err := b.Client().Delete(context.Background(), full)
				require.NoError(t, err)
			})
			require.NoError(t, tc.change())
			require.True(t, returnsWithin(term.Done()), "the term did not end after its key was %s", name)
			require.ErrorIs(t, context.Cause(term), etcdstore.ErrTermEnded)
			require.ErrorIs(t, context.Cause(term), lease.ErrLost)
			require.ErrorContains(t, context.Cause(term), name)
			require.NoError(t, ctx.Err(), "the campaign ctx lives")
			cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				e.Wait()
			}()
			require.True(t, returnsWithin(done), "Wait")
		})
	}
}
