package lease_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
	"github.com/steady-go/steady/store/memstore"
)

// A controller campaigns, works with the term context while it leads, and
// resigns by cancelling ctx. The store rejects writes that carry the fence
// of a term that is over.
func ExampleStoreElector() {
	b := memstore.New()
	e, err := lease.New(b, "_leases/my-controller", "pod-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, resign := context.WithCancel(context.Background())
	defer resign()
	term, fence, err := e.Campaign(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	holder, _ := e.Holder(ctx)
	fmt.Println("leader:", holder)

	// Writes made with term carry the fence; here one by hand.
	f, _ := store.FenceFrom(term)
	_, err = b.Txn(term, []kv.Cond{kv.Cond{Key: f.Key, Target: kv.CreateRevision, Revision: f.Revision}}, kv.Write{Kind: kv.WritePut, Key: "work", Value: []byte("1")})
	fmt.Println("write while leading:", err)

	resign()
	<-term.Done()
	fmt.Println("term over:", context.Cause(term))

	// Campaign again only after the release: the next Campaign waits for it.
	ctx2, stop := context.WithCancel(context.Background())
	defer stop()
	if _, _, err := e.Campaign(ctx2); err != nil {
		fmt.Println(err)
		return
	}
	_, err = b.Txn(context.Background(), []kv.Cond{kv.Cond{Key: fence.Key, Target: kv.CreateRevision, Revision: fence.Revision}}, kv.Write{Kind: kv.WritePut, Key: "work", Value: []byte("2")})
	fmt.Println("write with the old fence rejected:", errors.Is(err, kv.ErrCondFailed))
	// Output:
	// leader: pod-1
	// write while leading: <nil>
	// term over: context canceled
	// write with the old fence rejected: true
}
