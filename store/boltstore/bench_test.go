package boltstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// The benchmarks run boltstore beside memstore in one sitting, so their
// figures compare on the same (possibly loaded) machine:
//
//	cd store/boltstore && GOWORK=off go test -run '^$' -bench . -benchtime 2s -count 5
//
// Write/writers=1 pays one commit and one fsync per write; writers=8 shows
// the group commit sharing one fsync among concurrent writers (the bar: at
// least 5× the writes/s of one writer). boltstore's file lives in the test's
// temporary directory, so its fsync is that disk's.

// backends names the two backends the benchmarks compare, each opened
// empty for one benchmark.
var backends = []struct {
	name string
	open func(b *testing.B) kv.Backend
}{
	{"memstore", func(b *testing.B) kv.Backend { return memstore.New() }},
	{"boltstore", func(b *testing.B) kv.Backend {
		s, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}},
}

// seed writes n keys obj/NNNNNN of 100-byte values from 32 writers at once
// (boltstore batches them), and list/NNN keys for the List benchmark.
func seed(b *testing.B, s kv.Backend, n int) {
	b.Helper()
	ctx := context.Background()
	v := make([]byte, 100)
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < n; i += 32 {
				key := fmt.Sprintf("obj/%06d", i)
				if i < 100 {
					key = fmt.Sprintf("list/%03d", i)
				}
				if _, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: v}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkWrite measures unconditional 100-byte puts from 1 and from 8
// concurrent writers; one op is one write, and writes/s is reported.
func BenchmarkWrite(b *testing.B) {
	for _, be := range backends {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/writers=%d", be.name, writers), func(b *testing.B) {
				s := be.open(b)
				ctx := context.Background()
				v := make([]byte, 100)
				tokens := make(chan int)
				var wg sync.WaitGroup
				for w := range writers {
					wg.Go(func() {
						for i := range tokens {
							key := fmt.Sprintf("obj/%d/%03d", w, i%100)
							if _, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: v}); err != nil {
								b.Error(err)
							}
						}
					})
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					tokens <- i // blocks while every writer is busy
					i++
				}
				close(tokens)
				wg.Wait()
				b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "writes/s")
			})
		}
	}
}

// BenchmarkGet reads one key of a store holding 10,000.
func BenchmarkGet(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			seed(b, s, 10_000)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Get(ctx, "obj/004242"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkList lists a prefix of 100 keys in a store holding 10,000, at
// the current revision.
func BenchmarkList(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			seed(b, s, 10_000)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := s.List(ctx, "list/", kv.ListOptions{})
				if err != nil || len(res.KVs) != 100 {
					b.Fatal(len(res.KVs), err)
				}
			}
		})
	}
}
