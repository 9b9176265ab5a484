package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/lease"
	"github.com/steady-go/steady/store/storetest"
)

// store/lease's StoreElector elects one leader on PostgreSQL, and the
// fence does its work there: a leader that stalls without releasing loses
// the key to the next candidate after the TTL, and its writes, which still
// carry its fence, fail with ErrFenced and write nothing.
func TestElectorAndFence(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	st, err := store.New[storetest.WidgetSpec, storetest.WidgetStatus](b, "Widget")
	require.NoError(t, err)
	opts := []lease.Option{lease.WithTTL(time.Second), lease.WithRetryPeriod(50 * time.Millisecond), lease.WithoutRelease()}
	e1, err := lease.New(b, "_leases/ctl", "pod-1", opts...)
	require.NoError(t, err)
	e2, err := lease.New(b, "_leases/ctl", "pod-2", opts...)
	require.NoError(t, err)

	ctx1, stop1 := context.WithCancel(ctx)
	term1, fence1, err := e1.Campaign(ctx1)
	require.NoError(t, err)
	holder, err := e1.Holder(ctx)
	require.NoError(t, err)
	require.Equal(t, "pod-1", holder)
	w1 := st.As("pod-1")
	obj := &storetest.Widget{Meta: store.Meta{Name: "web"}, Spec: storetest.WidgetSpec{Replicas: 1}}
	_, err = w1.Create(term1, obj)
	require.NoError(t, err, "the leader writes with its term")

	type won struct {
		term  context.Context
		fence store.Fence
		err   error
	}
	second := make(chan won, 1)
	ctx2, stop2 := context.WithCancel(ctx)
	defer stop2()
	go func() {
		term, fence, err := e2.Campaign(ctx2)
		second <- won{term, fence, err}
	}()
	select {
	case <-second:
		require.FailNow(t, "pod-2 leads while pod-1 renews")
	case <-time.After(1500 * time.Millisecond): // over the TTL: renewals keep pod-1 leading
	}

	stop1() // pod-1 stops renewing and keeps the key (WithoutRelease): a stalled leader
	<-term1.Done()
	var w won
	select {
	case w = <-second:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "pod-2 never took over")
	}
	require.NoError(t, w.err)
	require.NotEqual(t, fence1.Revision, w.fence.Revision, "a new term has a new fence")

	stale := store.WithFence(ctx, fence1)
	before, err := st.Get(ctx, "web")
	require.NoError(t, err)
	upd := *before
	upd.Spec.Replicas = 5
	_, err = w1.Update(stale, &upd)
	require.ErrorIs(t, err, store.ErrFenced, "the deposed leader's write is fenced")
	after, err := st.Get(ctx, "web")
	require.NoError(t, err)
	require.Equal(t, before.Meta.Revision, after.Meta.Revision, "a fenced write writes nothing")

	_, err = st.As("pod-2").Update(w.term, &upd)
	require.NoError(t, err, "the new leader writes")
	stop2()
	<-w.term.Done()
}
