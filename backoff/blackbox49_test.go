package backoff_test

// Black-box tests of the documented contract, written from the package
// documentation alone.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/backoff"
)

// "Nil entries are skipped" by Max, a typed nil among them (a nil
// *PerKey or *Bucket, as a constructor's result left unchecked gives):
// the limiter Max returns never calls one, where calling it would panic.
func TestBlackbox49MaxSkipsTypedNilLimiters(t *testing.T) {
	var perKey *backoff.PerKey[string]
	var bucket *backoff.Bucket[string]
	real := &fakeLimiter{delay: time.Second, requeues: 2}
	m := backoff.Max[string](perKey, nil, real, bucket)
	require.Equal(t, time.Second, m.When("k"))
	require.Equal(t, 2, m.NumRequeues("k"))
	m.Forget("k")
	require.Equal(t, []string{"k"}, real.forgets)

	only := backoff.Max[string](perKey)
	require.Zero(t, only.When("k"), "with no limiters When returns 0")
	require.Zero(t, only.NumRequeues("k"))
	only.Forget("k")
}
