package boltstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
)

// Desired state written before a restart is there after it, at the same
// revision, and the revisions continue from there.
func Example() {
	dir, err := os.MkdirTemp("", "boltstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "steady.db")
	ctx := context.Background()

	s, err := boltstore.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	rev, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "groups/web", Value: []byte(`{"replicas":3}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("written at revision", rev)
	s.Close() // or the process dies: the write was fsynced before Txn returned

	s, err = boltstore.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	kvp, err := s.Get(ctx, "groups/web")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("after the restart: %s at revision %d\n", kvp.Value, kvp.ModRevision)
	_, err = boltstore.Open(path, boltstore.WithLockTimeout(0))
	fmt.Println("a second opener:", err != nil)
	// Output:
	// written at revision 1
	// after the restart: {"replicas":3} at revision 1
	// a second opener: true
}

// A typed store.Store runs on a boltstore like on any Backend.
func Example_typed() {
	dir, err := os.MkdirTemp("", "boltstore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := boltstore.Open(filepath.Join(dir, "steady.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	type Spec struct{ Replicas int }
	type Status struct{ Ready int }
	groups, err := store.New[Spec, Status](s, "Group")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	g := &store.Object[Spec, Status]{Meta: store.Meta{Name: "web"}, Spec: Spec{Replicas: 3}}
	if _, err := groups.As("deployer").Create(ctx, g); err != nil {
		log.Fatal(err)
	}
	got, err := groups.Get(ctx, "web")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Meta.Name, got.Spec.Replicas, got.Meta.Generation)
	// Output: web 3 1
}
