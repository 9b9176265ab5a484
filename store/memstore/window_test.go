package memstore_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// The default watch window grows with the keys: it holds at least a tenth
// as many writes as the Store holds keys. A watcher that falls out of the
// window relists, which costs a listing of every key: at 1M keys, with the
// 10,000-write window, a controller's cache relisted again and again (each
// relist longer than the window lasted, the writer running ahead) and spent
// half its CPU listing. A window set with WithHistorySize stays as set.
func TestDefaultWindowGrowsWithTheKeys(t *testing.T) {
	const keys = 20 * memstore.DefaultHistorySize
	behind := memstore.DefaultHistorySize + memstore.DefaultHistorySize/2 // past the default, within keys/10
	for _, tc := range []struct {
		name    string
		opts    []memstore.Option
		expires bool
	}{
		{"default", nil, false},
		{"default, old values as deltas", []memstore.Option{memstore.WithHistoryBytes(0)}, false},
		{"set", []memstore.Option{memstore.WithHistorySize(memstore.DefaultHistorySize)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := memstore.New(tc.opts...)
			for i := range keys {
				_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: []byte(`{}`)})
				require.NoError(t, err)
			}
			from := s.Revision()
			for i := range behind {
				_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%07d", i), Value: []byte(`{"a":1}`)})
				require.NoError(t, err)
			}
			ch, err := s.Watch(ctx, "k/", from)
			require.NoError(t, err)
			ev := <-ch
			if tc.expires {
				require.ErrorIs(t, ev.Err, kv.ErrExpired)
				return
			}
			require.NoError(t, ev.Err)
			require.Equal(t, from+1, ev.Revision, "the watch resumes %d writes behind", behind)
			require.Equal(t, "k/0000000", ev.KV.Key)
			require.Equal(t, `{"a":1}`, string(ev.KV.Value))
			require.Equal(t, `{}`, string(ev.Prev.Value))
			l, err := s.List(ctx, "k/", kv.ListOptions{Revision: from, Limit: 2})
			require.NoError(t, err, "and a page pinned there is served")
			require.Len(t, l.KVs, 2)
			for _, got := range l.KVs {
				require.Equal(t, `{}`, string(got.Value), "%s as it was", got.Key)
			}
		})
	}
}
