package memstore

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store/kv"
)

// GetIn of a key's two parts is Get of the whole key, whatever the split
// and the length (keys on either side of the stack buffer's maxStackKey),
// for keys held and keys not held: the same KeyValue, or the same error.
// A key found is the entry's own string, not a copy of the parts. The
// Store offers it to a store.Store through its hooks.
func TestGetInIsGetOfTheKey(t *testing.T) {
	ctx := context.Background()
	s := New()
	g, ok := storeaccess.Of(s).(storeaccess.PartsGetter)
	require.True(t, ok, "the hooks carry a PartsGetter")
	require.Same(t, s, g.Backend())
	rng := rand.New(rand.NewPCG(7, 8))
	key := func() string {
		n := rng.IntN(2*maxStackKey + 10)
		if rng.IntN(4) == 0 {
			n = maxStackKey - 2 + rng.IntN(5) // about the buffer's length
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab/"[rng.IntN(3)]
		}
		return string(b)
	}
	var held []string
	for range 300 {
		k := key()
		if k == "" {
			continue
		}
		_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: k, Value: []byte(k)})
		require.NoError(t, err)
		held = append(held, k)
	}
	tries, gets := 0, s.Stats().Gets
	try := func(k string) {
		t.Helper()
		tries++
		cut := rng.IntN(len(k) + 1)
		want, wantErr := s.Get(ctx, k)
		got, err := g.GetIn(ctx, k[:cut], k[cut:])
		require.Equal(t, want, got, "key %q cut at %d", k, cut)
		if wantErr != nil {
			require.EqualError(t, err, wantErr.Error())
			return
		}
		require.NoError(t, err)
		e := s.kvs.get(k)
		require.Equal(t, unsafe.StringData(e.Key), unsafe.StringData(got.Key), "the entry's own key")
	}
	for _, k := range held {
		try(k)
		try(k + "x") // not held
		if len(k) > 1 {
			try(k[:len(k)-1])
		}
	}
	for range 300 {
		if k := key(); k != "" {
			try(k)
		}
	}
	require.Equal(t, gets+int64(2*tries), s.Stats().Gets, "a GetIn counts as a Get")
	_, err := g.GetIn(ctx, "", "")
	_, wantErr := s.Get(ctx, "")
	require.EqualError(t, err, wantErr.Error(), "an empty key")
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = g.GetIn(done, held[0][:1], held[0][1:])
	require.ErrorIs(t, err, context.Canceled)
}

// A GetIn of a key no longer than maxStackKey allocates nothing: the key
// is built on the stack (a store.Store's Get built it on the heap).
func TestGetInOfAShortKeyAllocatesNothing(t *testing.T) {
	if raceScale > 1 {
		t.Skip("counts allocations")
	}
	ctx := context.Background()
	s := New()
	prefix, name := "App/", strings.Repeat("n", maxStackKey-len("App/"))
	_, err := s.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: prefix + name, Value: []byte("v")})
	require.NoError(t, err)
	f := follower{s}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := f.GetIn(ctx, prefix, name); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}
