package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
)

// The data mode: with -data DIR, the desired state (the Groups and their
// status) lives in DIR/fleet.db, a store/boltstore file, instead of memory.
// It survives the process: kill the demo and start it again on the same
// directory, and the controller, with empty memory, converges the groups it
// finds there (the fleet itself is simulated and starts empty) without
// recreating them. One process owns the file at a time.

// dataFile is the file of the data mode in dir.
func dataFile(dir string) string { return filepath.Join(dir, "fleet.db") }

// openData opens (or creates) the data mode's file in dir.
func openData(dir string) (*boltstore.Store, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	s, err := boltstore.Open(dataFile(dir))
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close() }, nil
}

// reportData says where the groups live and how many an earlier run left
// there.
func reportData(ctx context.Context, w io.Writer, dir string, b store.Backend, groups *store.Store[GroupSpec, GroupStatus]) error {
	s, ok := b.(*boltstore.Store)
	if !ok {
		return nil
	}
	list, err := groups.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fleet: desired state in %s at revision %d: %d groups kept from an earlier run\n",
		dataFile(dir), s.Revision(), len(list.Items))
	return nil
}
