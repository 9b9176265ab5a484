package cache_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// What a sharded replica's cache pays per handover at 10,000 objects in
// 256 shards on memstore, holding 64 shards: taking 21 more (Refilter: a
// listing of the kind that decodes only their objects) and letting them go
// (Prune, from memory; before Prune, a Refilter listing as well).
//
//	GOWORK=off go test -run '^$' -bench BenchmarkKeepHandover -benchtime 20x ./store/cache/
func BenchmarkKeepHandover(b *testing.B) {
	const objects, shards = 10_000, 256
	st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range objects {
		if _, err := st.As("alice").Create(ctx, &cobj{Meta: store.Meta{Name: fmt.Sprintf("w-%05d", i)}}); err != nil {
			b.Fatal(err)
		}
	}
	var upTo atomic.Int64 // shards [0, upTo) are kept
	upTo.Store(64)
	shardOf := func(name string) int64 {
		h := fnv.New32a()
		h.Write([]byte(name))
		return int64(h.Sum32() % shards)
	}
	c := cache.New[cacheSpec, cacheStatus](st, cache.WithKeep(func(name string) bool { return shardOf(name) < upTo.Load() }))
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	for _, how := range []string{"Refilter", "Prune"} {
		b.Run("let-go="+how, func(b *testing.B) {
			var take, let time.Duration
			for b.Loop() {
				upTo.Store(85)
				start := time.Now()
				if err := c.Refilter(ctx); err != nil {
					b.Fatal(err)
				}
				take += time.Since(start)
				upTo.Store(64)
				start = time.Now()
				if how == "Prune" {
					err = c.Prune(ctx)
				} else {
					err = c.Refilter(ctx)
				}
				if err != nil {
					b.Fatal(err)
				}
				let += time.Since(start)
			}
			b.ReportMetric(float64(take.Microseconds())/float64(b.N), "take-µs/op")
			b.ReportMetric(float64(let.Microseconds())/float64(b.N), "let-go-µs/op")
		})
	}
}
