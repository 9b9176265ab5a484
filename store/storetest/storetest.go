package storetest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// Compactor is an optional capability of a Backend whose history can be
// discarded on demand (memstore, etcd). Run uses it to check that expired
// history gives ErrExpired; backends without it skip those tests.
//
// After Compact(ctx, rev) succeeds, a List pinned to a revision below rev and
// a Watch from a revision below rev-1 fail with an error wrapping
// store.ErrExpired; List and Watch at rev and above keep working.
type Compactor interface {
	Compact(ctx context.Context, rev int64) error
}

// WaitTimeout bounds every wait of the suite for a watch event. It guards
// against a hung backend; it is not a performance target.
const WaitTimeout = 10 * time.Second

// Run checks that the backends newBackend returns keep the kv.Backend
// contract, as subtests of t. newBackend is called once per subtest and must
// return an empty key space (or one with a key prefix of its own) in which
// nothing else writes while the subtest runs, since the suite counts
// revisions. Cleanup belongs in t.Cleanup.
//
// The suite covers Get, List (order, prefixes, pagination, revision
// pinning, a Continue outside the prefix), Txn (conds on the written key and
// on other keys, failure index, nothing written on failure, one revision per
// write, value sizes), Watch (from a revision, from 0, from a listing's
// revision with no gap, even on a fresh store, order, prefixes, Prev,
// progress, cancellation), expired
// history when the backend is a Compactor, Close when it is an io.Closer
// (kv.ErrClosed), and concurrency: CAS increments
// that must lose no update, and concurrent writers and watchers that must see
// every revision exactly once, in order. Run it with -race.
func Run(t *testing.T, newBackend func(t *testing.T) kv.Backend) {
	t.Helper()
	groups := []struct {
		name  string
		tests []test
	}{
		{"Get", getTests},
		{"List", listTests},
		{"Txn", txnTests},
		{"Watch", watchTests},
		{"Input", inputTests},
		{"Concurrency", concurrencyTests},
		{"Close", closeTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, newBackend(t)) })
			}
		})
	}
	RunTyped(t, newBackend)
}

type test struct {
	name string
	run  func(t *testing.T, b kv.Backend)
}

func put(t *testing.T, b kv.Backend, key, value string, conds ...kv.Cond) int64 {
	t.Helper()
	rev, err := b.Txn(t.Context(), conds, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
	require.NoError(t, err, "put %q", key)
	require.Positive(t, rev)
	return rev
}

func del(t *testing.T, b kv.Backend, key string, conds ...kv.Cond) int64 {
	t.Helper()
	rev, err := b.Txn(t.Context(), conds, kv.Write{Kind: kv.WriteDelete, Key: key})
	require.NoError(t, err, "delete %q", key)
	return rev
}

func get(t *testing.T, b kv.Backend, key string) kv.KeyValue {
	t.Helper()
	kv, err := b.Get(t.Context(), key)
	require.NoError(t, err, "get %q", key)
	return kv
}

// currentRevision returns the store revision, read from an empty List: the
// contract has no other way to ask for it.
func currentRevision(t *testing.T, b kv.Backend) int64 {
	t.Helper()
	res, err := b.List(t.Context(), "\xff\xfe-storetest-none/", kv.ListOptions{})
	require.NoError(t, err)
	return res.Revision
}

// requireKV checks a KV field by field, comparing values as bytes so nil and
// empty are equal.
func requireKV(t *testing.T, want, got kv.KeyValue, msg string) {
	t.Helper()
	require.Equal(t, want.Key, got.Key, "%s: key", msg)
	require.True(t, bytes.Equal(want.Value, got.Value), "%s: value of %q: want %q, got %q", msg, want.Key, want.Value, got.Value)
	require.Equal(t, want.CreateRevision, got.CreateRevision, "%s: CreateRevision of %q", msg, want.Key)
	require.Equal(t, want.ModRevision, got.ModRevision, "%s: ModRevision of %q", msg, want.Key)
}

// requireNextRevision checks that nothing was written since last: the next
// write gets last+1.
func requireNextRevision(t *testing.T, b kv.Backend, last int64) {
	t.Helper()
	require.Equal(t, last+1, put(t, b, "storetest-probe", "x"), "a failed txn must not advance the revision")
}
