package demo

import (
	"context"
	"fmt"
	"io"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// newBackend builds the kv.Backend that holds the desired state, the
// elector of this replica (nil without a Shared store: the controller always
// works), and the function that releases them. It is the one seam for
// another backend: without a Shared store or -data it is the embedded
// memstore; with -data, what the Program's Data opens in that directory
// (a store/boltstore file, in examples/fleet/fleet-full); with a Shared
// store, whatever its Open returns (etcd, in examples/fleet/fleet-etcd).
// Only those programs compile those backends.
func newBackend(ctx context.Context, o options, p Program, w io.Writer, note func(format string, args ...any)) (kv.Backend, Elector, func(), error) {
	if p.Shared != nil {
		return p.Shared.Open(ctx, w, note)
	}
	if o.data != "" {
		b, file, release, err := p.Data(o.data)
		if err != nil {
			return nil, nil, nil, err
		}
		if err := reportData(ctx, w, file, b); err != nil {
			release()
			return nil, nil, nil, err
		}
		return b, nil, release, nil
	}
	// A cache lists in pages pinned to one revision, and resumes its
	// watch from there; both need the writes made meanwhile to still be in
	// the history. Listing many groups takes long enough for the default
	// history to be overrun under the demo's write storm, and then every
	// list expires and starts again: keep one event per group at least.
	return memstore.New(memstore.WithHistorySize(max(memstore.DefaultHistorySize, o.objects))), nil, func() {}, nil
}

// reportData says where the groups of -data live and how many an earlier
// run left there.
func reportData(ctx context.Context, w io.Writer, file string, b kv.Backend) error {
	groups, err := store.New[GroupSpec, GroupStatus](b, "Group")
	if err != nil {
		return err
	}
	list, err := groups.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "fleet: desired state in %s at revision %d: %d groups kept from an earlier run\n",
		file, list.Revision, len(list.Items))
	return nil
}
