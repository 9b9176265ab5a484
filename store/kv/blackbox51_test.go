package kv_test

// Black-box tests of the Backend contract's helpers, written from their
// documentation alone: each test quotes the promise it checks.

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// CheckTxn: "an empty key, an unknown WriteKind or CondTarget, or a negative
// cond revision give an error wrapping ErrInvalid, and a value over
// MaxValueSize one wrapping ErrTooLarge. It returns nil for a Txn the
// Backend should attempt."
func TestBlackbox51CheckTxn(t *testing.T) {
	put := func(key string, n int) kv.Write { return kv.Write{Kind: kv.WritePut, Key: key, Value: make([]byte, n)} }
	for i, tc := range []struct {
		conds []kv.Cond
		w     kv.Write
		want  error
	}{
		{nil, put("k", 0), nil},
		{nil, kv.Write{Kind: kv.WriteDelete, Key: "k"}, nil},
		{nil, put("k", kv.MaxValueSize), nil},
		{nil, kv.Write{Kind: kv.WriteDelete, Key: "k", Value: make([]byte, kv.MaxValueSize+1)}, nil}, // a delete's value is not written
		{[]kv.Cond{{Key: "\x00", Target: kv.CreateRevision}, {Key: "ключ", Target: kv.ModRevision, Revision: 1 << 62}}, put("🔑", 1), nil},
		{[]kv.Cond{}, put("k", 0), nil},
		{nil, put("", 0), kv.ErrInvalid},
		{nil, kv.Write{Key: "k"}, kv.ErrInvalid},
		{nil, kv.Write{Kind: kv.WriteDelete + 1, Key: "k"}, kv.ErrInvalid},
		{nil, put("k", kv.MaxValueSize+1), kv.ErrTooLarge},
		{[]kv.Cond{{Key: ""}}, put("k", 0), kv.ErrInvalid},
		{[]kv.Cond{{Key: "c", Target: kv.CreateRevision + 1}}, put("k", 0), kv.ErrInvalid},
		{[]kv.Cond{{Key: "c", Revision: -1}}, put("k", 0), kv.ErrInvalid},
		{[]kv.Cond{{Key: "ok"}, {Key: "c", Revision: -5}}, put("k", 0), kv.ErrInvalid},
	} {
		err := kv.CheckTxn(tc.conds, tc.w)
		if tc.want == nil {
			require.NoError(t, err, "case %d", i)
			continue
		}
		require.ErrorIs(t, err, tc.want, "case %d", i)
	}
}

// "*CondFailedError ... matches ErrCondFailed with errors.Is"; "Package store
// exports the same values (store.ErrNotFound is ErrNotFound)".
func TestBlackbox51SentinelsAndCondFailedError(t *testing.T) {
	var err error = &kv.CondFailedError{Index: 2, Cond: kv.Cond{Key: "_leases/x", Target: kv.CreateRevision, Revision: 7}, Actual: 9}
	wrapped := fmt.Errorf("writing: %w", err)
	require.ErrorIs(t, wrapped, kv.ErrCondFailed)
	require.NotErrorIs(t, wrapped, kv.ErrNotFound)
	var cf *kv.CondFailedError
	require.ErrorAs(t, wrapped, &cf)
	require.Equal(t, 2, cf.Index)
	require.EqualValues(t, 9, cf.Actual)
	require.Contains(t, err.Error(), "_leases/x")

	for _, pair := range [][2]error{
		{kv.ErrNotFound, store.ErrNotFound}, {kv.ErrExpired, store.ErrExpired},
		{kv.ErrTooLarge, store.ErrTooLarge}, {kv.ErrInvalid, store.ErrInvalid},
		{kv.ErrUnavailable, store.ErrUnavailable},
	} {
		require.Same(t, pair[0], pair[1])
	}
	all := []error{kv.ErrNotFound, kv.ErrExpired, kv.ErrTooLarge, kv.ErrInvalid, kv.ErrCondFailed, kv.ErrUnavailable}
	for i, a := range all {
		for j, b := range all {
			require.Equal(t, i == j, errors.Is(a, b), "%v is %v", a, b)
		}
	}
}
