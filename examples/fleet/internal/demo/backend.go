package demo

import (
	"context"
	"io"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// newBackend builds the store.Backend that holds the desired state, the
// elector of this replica (nil without a Shared store: the controller always
// works), and the function that releases them. It is the one seam for
// another backend. Without a Shared store or -data it is the embedded
// memstore; with -data, a boltstore file in that directory (data.go); with
// a Shared store, whatever its Open returns (etcd, in
// examples/fleet/fleet-etcd, so that only that program compiles the etcd
// client).
func newBackend(ctx context.Context, o options, shared *Shared, w io.Writer, note func(format string, args ...any)) (store.Backend, Elector, func(), error) {
	if shared != nil {
		return shared.Open(ctx, w, note)
	}
	if o.data != "" {
		b, release, err := openData(o.data)
		return b, nil, release, err
	}
	// A cache lists in pages pinned to one revision, and resumes its
	// watch from there; both need the writes made meanwhile to still be in
	// the history. Listing many groups takes long enough for the default
	// history to be overrun under the demo's write storm, and then every
	// list expires and starts again: keep one event per group at least.
	return memstore.New(memstore.WithHistorySize(max(memstore.DefaultHistorySize, o.objects))), nil, func() {}, nil
}
