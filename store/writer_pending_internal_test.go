package store

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
)

// failingTxnBackend fails its next Txn when fail is set.
type failingTxnBackend struct {
	*txnHookBackend
	fail bool
}

var errTxnFailed = errors.New("txn failed")

func (b *failingTxnBackend) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if b.fail {
		b.fail = false
		return 0, errTxnFailed
	}
	return b.txnHookBackend.Txn(ctx, conds, w)
}

// A status write notes its value as under way (writing) while the Backend
// has it, for a judge of its event that comes first, and forgets the note
// once it returns: after it lands (wroteGiven forgets it as it remembers
// the value), when it fails, and when its value is too large to remember.
func TestStatusWriteForgetsItsNoteUnderWay(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		last int // WithLastValues
		fail bool
	}{
		{name: "landed", last: 1 << 20},
		{name: "failed", last: 1 << 20, fail: true},
		{name: "too large to remember", last: 300},
	} {
		t.Run(c.name, func(t *testing.T) {
			backend := &failingTxnBackend{txnHookBackend: &txnHookBackend{mapBackend: newMapBackend()}}
			st, err := New[keepSpec, keepStatus](backend, "Keep", WithLastValues(c.last))
			require.NoError(t, err)
			_, err = st.As("user").Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: "a"}, Spec: keepSpec{Replicas: 1}})
			require.NoError(t, err)
			noted := func() bool {
				st.last.mu.Lock()
				defer st.last.mu.Unlock()
				return slices.ContainsFunc(st.last.pending, func(p pendingWrite) bool { return p.key == st.prefix+"a" })
			}
			for i := range 3 {
				var under bool
				backend.after = func() { under = noted() }
				backend.fail = c.fail && i == 2
				_, err = st.As("ctrl").ApplyStatus(ctx, "a", keepStatus{Ready: i + 1}, nil, WithForce())
				if c.fail && i == 2 {
					require.ErrorIs(t, err, errTxnFailed)
				} else {
					require.NoError(t, err)
					require.True(t, under, "apply %d is noted while under way", i)
				}
				require.False(t, noted(), "apply %d leaves no note", i)
			}
		})
	}
}
