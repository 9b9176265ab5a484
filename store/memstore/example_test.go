package memstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

func Example() {
	ctx := context.Background()
	s := memstore.New()

	// Create only if absent: CreateRevision 0 means "does not exist".
	absent := kv.Cond{Key: "config/a", Target: kv.CreateRevision, Revision: 0}
	rev, _ := s.Txn(ctx, []kv.Cond{absent}, kv.Write{Kind: kv.WritePut, Key: "config/a", Value: []byte("v1")})
	fmt.Println("created at", rev)

	// A second create fails on its cond and writes nothing.
	_, err := s.Txn(ctx, []kv.Cond{absent}, kv.Write{Kind: kv.WritePut, Key: "config/a", Value: []byte("v2")})
	var cf *kv.CondFailedError
	fmt.Println(errors.As(err, &cf), cf.Index, cf.Actual)

	kv, _ := s.Get(ctx, "config/a")
	fmt.Printf("%s=%s at %d\n", kv.Key, kv.Value, kv.ModRevision)
	// Output:
	// created at 1
	// true 0 1
	// config/a=v1 at 1
}

func ExampleStore_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := memstore.New()
	put := func(key, value string) {
		_, _ = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
	}
	put("jobs/a", "1")
	put("jobs/b", "1")

	// Resume after revision 1: the watch replays revision 2 from history,
	// then follows new writes.
	events, _ := s.Watch(ctx, "jobs/", 1)
	put("jobs/a", "2")
	for range 2 {
		ev := <-events
		fmt.Printf("rev %d: %s=%s (was %q)\n", ev.Revision, ev.KV.Key, ev.KV.Value, ev.Prev.Value)
	}
	// Output:
	// rev 2: jobs/b=1 (was "")
	// rev 3: jobs/a=2 (was "1")
}

func ExampleStore_List() {
	ctx := context.Background()
	s := memstore.New()
	for _, k := range []string{"n/3", "n/1", "n/2", "other"} {
		_, _ = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: k, Value: []byte("x")})
	}
	page, _ := s.List(ctx, "n/", kv.ListOptions{Limit: 2})
	// A write between pages does not show: the next page is pinned to the
	// first page's revision.
	_, _ = s.Txn(ctx, nil, kv.Write{Kind: kv.WriteDelete, Key: "n/3"})
	next, _ := s.List(ctx, "n/", kv.ListOptions{Limit: 2, Continue: page.Continue, Revision: page.Revision})
	for _, p := range []kv.List{page, next} {
		for _, kv := range p.KVs {
			fmt.Print(kv.Key, " ")
		}
		fmt.Println("@", p.Revision)
	}
	// Output:
	// n/1 n/2 @ 4
	// n/3 @ 4
}

func ExampleStore_Stats() {
	ctx := context.Background()
	s := memstore.New()
	before := s.Stats()
	_, _ = s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v")})
	_, _ = s.Get(ctx, "k")
	fmt.Printf("%+v\n", s.Stats().Sub(before))
	// Output: {Gets:1 Lists:0 Txns:1 Watches:0}
}
