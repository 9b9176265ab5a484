// Package boltstore is a durable store.Backend in one file on one machine,
// built on bbolt (go.etcd.io/bbolt, etcd's own storage engine, pure Go).
package boltstore
