package etcdstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/storetest"
	"github.com/stretchr/testify/require"
)

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestStalledWatchIsBoundedAndExpires: behind a reader that stopped reading,
// the etcd client used to buffer every event (+238 MiB after 5,000 events of
// 8 KB) and the watch never expired. Now the watch holds at most its limits,
// ends with ErrExpired, and a Cache behind a stalled handler relists and
// converges once the handler returns.
func TestStalledWatchIsBoundedAndExpires(t *testing.T) {
	c := startCluster(t, 1)
	cli := c.client()
	ctx := context.Background()
	const n, size = 3000, 8 << 10
	value := bytes.Repeat([]byte("x"), size)
	write := func(b kv.Backend, prefix string) {
		for i := range n {
			_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("%sk%d", prefix, i%100), Value: value})
			require.NoError(t, err)
		}
	}
	b, err := etcdstore.New(cli, etcdstore.WithPrefix("/"+t.Name()+"/"), etcdstore.WithWatchLimits(200, 1<<20))
	require.NoError(t, err)

	// The heap growth of n writes that nobody watches (etcd's own) ...
	before := heapAlloc()
	write(b, "unwatched/")
	unwatched := heapAlloc() - before

	// ... and of n writes behind a watch whose reader reads nothing.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := b.Watch(wctx, "watched/", 0)
	require.NoError(t, err)
	before = heapAlloc()
	write(b, "watched/")
	time.Sleep(time.Second) // let etcd deliver what it has
	stalled := heapAlloc() - before
	extra := stalled - unwatched
	t.Logf("heap growth over %d writes of %d bytes: %d MiB unwatched, %d MiB behind a stalled watch (%d MiB more; %d MiB written)",
		n, size, unwatched>>20, stalled>>20, extra>>20, n*size>>20)
	require.Less(t, extra, int64(16<<20), "a stalled watch holds at most its limits, not every event")

	got := 0
	var last kv.Event
	for ev := range events {
		last = ev
		if ev.Err == nil && !ev.Progress {
			got++
		}
	}
	require.ErrorIs(t, last.Err, store.ErrExpired, "the watch ended because its reader fell behind")
	require.LessOrEqual(t, got, 200+64+1, "it held no more than its limit and its channel")

	// A Cache behind a stalled handler relists once the handler returns.
	st, err := store.New[storetest.WidgetSpec, storetest.WidgetStatus](b, "Widget")
	require.NoError(t, err)
	relists := make(chan error, 100)
	ch := cache.New(st, cache.WithErrorHandler(func(err error) {
		select {
		case relists <- err:
		default:
		}
	}))
	release := make(chan struct{})
	stall := make(chan struct{}, 1)
	ch.AddHandler(func(_, new *storetest.Widget) {
		if new != nil && new.Meta.Name == "stall" {
			stall <- struct{}{}
			<-release
		}
	})
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- ch.Run(cctx) }()
	defer func() { ccancel(); require.NoError(t, <-done) }()
	require.NoError(t, ch.WaitForSync(ctx))
	w := st.As("alice")
	_, err = w.Create(ctx, &storetest.Widget{Meta: store.Meta{Name: "stall"}})
	require.NoError(t, err)
	<-stall
	var lastRev int64
	for i := range 400 {
		obj := &storetest.Widget{Meta: store.Meta{Name: fmt.Sprintf("w%d", i)}, Spec: storetest.WidgetSpec{Image: string(value[:4096])}}
		lastRev, err = w.Create(ctx, obj)
		require.NoError(t, err)
	}
	time.Sleep(time.Second)
	close(release)
	require.NoError(t, ch.WaitFor(ctx, lastRev))
	require.Equal(t, 401, ch.Len())
	select {
	case err := <-relists:
		require.True(t, errors.Is(err, store.ErrExpired), "the cache relisted after ErrExpired, got %v", err)
	default:
		t.Fatal("the cache never relisted")
	}
	require.GreaterOrEqual(t, ch.Relists(), int64(1))
}
