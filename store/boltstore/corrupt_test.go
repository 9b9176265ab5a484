package boltstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
)

// contents is what a file holds, as the Backend shows it.
type contents struct {
	rev     int64
	live    []kv.KeyValue
	history []kv.Event // revisions 2 to rev
}

// readContents reads everything s shows: the live keys (by List and by Get)
// and the whole history.
func readContents(t *testing.T, s *boltstore.Store) contents {
	t.Helper()
	c := contents{rev: s.Revision()}
	res, err := s.List(t.Context(), "", kv.ListOptions{})
	require.NoError(t, err)
	c.live = res.KVs
	for _, kvp := range c.live {
		got, err := s.Get(t.Context(), kvp.Key)
		require.NoError(t, err, "Get(%q) finds a listed key", kvp.Key)
		require.Equal(t, kvp, got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch, err := s.Watch(ctx, "", 1)
	require.NoError(t, err)
	for len(c.history) < int(c.rev-1) {
		ev := recv(t, ch)
		require.NoError(t, ev.Err)
		if !ev.Progress {
			c.history = append(c.history, ev)
		}
	}
	return c
}

// fixture writes a file with puts, updates and deletes of values of up to
// 200 bytes, and one in ten up to 9 KiB (spanning pages), closes it, and
// returns its path and contents.
func fixture(t *testing.T) (string, contents) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.db")
	s, err := boltstore.Open(path)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		key := fmt.Sprintf("obj/%03d", rng.IntN(60))
		if _, err := s.Get(t.Context(), key); err == nil && i%5 == 0 {
			_, err := s.Txn(t.Context(), nil, kv.Write{Kind: kv.WriteDelete, Key: key})
			require.NoError(t, err)
			continue
		}
		size := rng.IntN(200)
		if i%10 == 0 {
			size = rng.IntN(9000)
		}
		put(t, s, key, strings.Repeat(string(rune('a'+i%26)), size))
	}
	c := readContents(t, s)
	require.NoError(t, s.Close())
	return path, c
}

// openDamaged opens a damaged copy: it must either fail with ErrCorrupt or
// show exactly the original contents. It reports whether it failed.
func openDamaged(t *testing.T, path string, want contents, what string) bool {
	t.Helper()
	s, err := boltstore.Open(path, boltstore.WithLockTimeout(0))
	if err != nil {
		require.ErrorIs(t, err, boltstore.ErrCorrupt, "%s: a damaged file gives ErrCorrupt", what)
		return true
	}
	defer s.Close()
	got := readContents(t, s)
	require.Equal(t, want, got, "%s: a file that opens shows exactly what was written", what)
	return false
}

// TestTruncatedFile: a file cut short anywhere opens with ErrCorrupt (or,
// cut only in the unused space at its end, with everything intact).
func TestTruncatedFile(t *testing.T) {
	path, want := fixture(t)
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	page := os.Getpagesize()
	sizes := []int{100, page, 2 * page, 3 * page, len(orig) / 2, len(orig) - 2*page - 1, len(orig) - page}
	refused := 0
	for _, size := range sizes {
		if size <= 0 || size >= len(orig) {
			continue
		}
		cut := filepath.Join(t.TempDir(), "cut.db")
		require.NoError(t, os.WriteFile(cut, orig[:size], 0o600))
		if openDamaged(t, cut, want, fmt.Sprintf("cut to %d of %d bytes", size, len(orig))) {
			refused++
		}
	}
	require.GreaterOrEqual(t, refused, 5, "cuts into the data are refused")
}

// TestFlippedBytes flips bytes at random places in copies of a file: each
// copy either fails to open with ErrCorrupt or shows exactly the original
// contents (the flip hit unused space), and never panics. 300 copies, or
// 10 per -soak kill with a seed of the clock.
func TestFlippedBytes(t *testing.T) {
	path, want := fixture(t)
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	seed, trials := uint64(3), 300
	if *soak > 0 {
		seed, trials = uint64(time.Now().UnixNano()), 10**soak
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 4))
	refused := 0
	for i := range trials {
		b := append([]byte(nil), orig...)
		var at []int
		for range 1 + i%3 {
			off := rng.IntN(len(b))
			b[off] ^= byte(1 + rng.IntN(255))
			at = append(at, off)
		}
		damaged := filepath.Join(t.TempDir(), "flipped.db")
		require.NoError(t, os.WriteFile(damaged, b, 0o600))
		if openDamaged(t, damaged, want, fmt.Sprintf("bytes flipped at %v", at)) {
			refused++
		}
	}
	t.Logf("%d of %d damaged copies refused; the rest were damaged only in unused space", refused, trials)
	require.Positive(t, refused)
}

// TestMetaPageDamage: damage to either of bbolt's two meta pages is
// refused, rather than opening at the transaction before the last.
func TestMetaPageDamage(t *testing.T) {
	path, want := fixture(t)
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	page := os.Getpagesize()
	for _, off := range []int{16, 40, page + 16, page + 70} { // magic, root, magic, checksum
		b := append([]byte(nil), orig...)
		b[off] ^= 0x5a
		damaged := filepath.Join(t.TempDir(), "meta.db")
		require.NoError(t, os.WriteFile(damaged, b, 0o600))
		require.True(t, openDamaged(t, damaged, want, fmt.Sprintf("meta byte %d", off)))
	}
}

// TestNotABoltstoreFile: a file of another format, or another program's
// bbolt file, is refused with ErrCorrupt and left as it was.
func TestNotABoltstoreFile(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	content := []byte(strings.Repeat("not a database\n", 1000))
	require.NoError(t, os.WriteFile(text, content, 0o600))
	_, err := boltstore.Open(text)
	require.ErrorIs(t, err, boltstore.ErrCorrupt)
	after, err := os.ReadFile(text)
	require.NoError(t, err)
	require.Equal(t, content, after, "a refused file is not modified")

	other := filepath.Join(dir, "other.db")
	db, err := bolt.Open(other, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("users"))
		return err
	}))
	require.NoError(t, db.Close())
	_, err = boltstore.Open(other)
	require.ErrorIs(t, err, boltstore.ErrCorrupt)
	require.ErrorContains(t, err, "not a boltstore file")
}
