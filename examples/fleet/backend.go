package main

import (
	"context"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// newBackend builds the store.Backend that holds the desired state, the
// elector of this replica (nil without -etcd: the controller always works),
// and the function that releases them. It is the one seam for another
// backend. Without -etcd or -data it is the embedded memstore; with -etcd it
// is etcdstore on that cluster (etcd.go); with -data, a boltstore file in
// that directory (data.go). The etcd client comes from the
// examples module, a nested module: the root module never depends on etcd.
func newBackend(ctx context.Context, o options, note func(format string, args ...any)) (store.Backend, *replicaElector, func(), error) {
	if o.data != "" {
		b, release, err := openData(o.data)
		return b, nil, release, err
	}
	if !o.etcd.on() {
		// A cache lists in pages pinned to one revision, and resumes its
		// watch from there; both need the writes made meanwhile to still
		// be in the history. Listing many groups takes long enough for
		// the default history to be overrun under the demo's write
		// storm, and then every list expires and starts again: keep one
		// event per group at least.
		return memstore.New(memstore.HistorySize(max(memstore.DefaultHistorySize, o.objects))), nil, func() {}, nil
	}
	b, e, release, err := newEtcdBackend(ctx, o.etcd, note)
	if err != nil {
		return nil, nil, nil, err
	}
	return b, e, release, nil
}
