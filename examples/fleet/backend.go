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
		return memstore.New(), nil, func() {}, nil
	}
	b, e, release, err := newEtcdBackend(ctx, o.etcd, note)
	if err != nil {
		return nil, nil, nil, err
	}
	return b, e, release, nil
}
