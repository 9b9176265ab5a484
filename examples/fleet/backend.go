package main

import (
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// newBackend builds the store.Backend that holds the desired state, and the
// function that releases it. It is the one seam for another backend: the etcd
// backend lives in the nested module store/etcdstore, which this (root)
// module cannot import without inheriting etcd's dependencies, so an
// `-etcd host:port` flag belongs in a build inside that module, which adds
// the flag to options and the etcd case here.
func newBackend(o options) (store.Backend, func(), error) {
	_ = o
	return memstore.New(), func() {}, nil
}
