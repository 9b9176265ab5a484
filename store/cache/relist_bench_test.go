package cache_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// BenchmarkRelist measures one periodic relist (WithRelistPeriod) of
// 100,000 typical objects (about 1 KB encoded each) on memstore: the
// paginated List, the decoding of every object, and the comparison with
// what the Cache holds (no differences). It reports the allocated bytes
// per relist: the transient copy of the kind that the listing decodes.
//
//	go test -run '^$' -bench BenchmarkRelist -benchtime 3x -count 5 ./store/cache/
func BenchmarkRelist(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	bk := memstore.New()
	for i := range n {
		v := fmt.Sprintf(benchObjectJSON, i, i%50, i%1000)
		if _, err := bk.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("Widget/widget-%06d", i), Value: []byte(v)}); err != nil {
			b.Fatal(err)
		}
	}
	st, err := store.New[benchCacheSpec, benchCacheStatus](bk, "Widget")
	if err != nil {
		b.Fatal(err)
	}
	c := cache.New[benchCacheSpec, benchCacheStatus](st, cache.WithRelistPeriod(0), cache.WithMutationDetector(nil))
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(rctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	if c.Len() != n {
		b.Fatalf("cache holds %d objects, want %d", c.Len(), n)
	}
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := c.RelistNow(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if got := c.DriftRepairs(); got != 0 {
		b.Fatalf("%d drift repairs on an unchanged store", got)
	}
}

// BenchmarkApplyUnchangedListing measures applying a listing of 10,000
// objects that all hold the cached revision (a relist after the watch fell
// behind, for the objects nobody wrote meanwhile): the comparison alone,
// without the List that produced it.
//
//	go test -run '^$' -bench BenchmarkApplyUnchangedListing -count 5 ./store/cache/
func BenchmarkApplyUnchangedListing(b *testing.B) {
	const n = 10_000
	objs := make([]*cobj, n)
	for i := range objs {
		objs[i] = mkObj(fmt.Sprintf("o%05d", i), fmt.Sprint("u", i), int64(i+1), nil)
	}
	c := cache.New(newScripted(n, objs...), cache.WithRelistPeriod(0), cache.WithMutationDetector(nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	l := &store.List[cacheSpec, cacheStatus]{Items: c.List(nil), Revision: n}
	b.ReportAllocs()
	for b.Loop() {
		if c.ApplyListing(l) != 0 {
			b.Fatal("changes from an unchanged listing")
		}
	}
}
