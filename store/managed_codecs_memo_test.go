package store

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

// statusCodec is a Codec of a status side of one field, a, each call a
// new one (a Codec is remembered by its address).
func statusCodec() *ownership.Codec {
	return ownership.NewCodec(map[string]any{"status": map[string]any{"a": "x"}}, nil)
}

// A codecCache remembers up to its bound of Codecs, sets and status field
// texts, finds each it remembers, and forgets all at once when one more
// comes: what it holds never passes the bound.
func TestCodecCacheForgetsAllWhenFull(t *testing.T) {
	c := &codecCache{}
	codec := statusCodec()
	for i := range maxCodecs {
		c.put(fmt.Appendf(nil, "k%d", i), codec)
	}
	for i := range maxCodecs {
		require.Same(t, codec, c.get(fmt.Appendf(nil, "k%d", i)), "Codec %d of %d", i, maxCodecs)
	}
	c.put([]byte("one more"), codec)
	require.Len(t, *c.codecs.Load(), 1)
	require.Same(t, codec, c.get([]byte("one more")))
	require.Nil(t, c.get([]byte("k0")))

	keys := [][]byte{[]byte("a")}
	text := codec.Encode(ownership.MustNewSet(statusPath("a")))
	codecs := make([]*ownership.Codec, maxDecodedSets+1)
	for i := range codecs {
		codecs[i] = statusCodec()
	}
	for _, cd := range codecs[:maxDecodedSets] {
		_, ok := c.decodeNodes(cd, text)
		require.True(t, ok)
		require.Equal(t, text, c.statusFields(cd, keys))
	}
	require.Len(t, *c.sets.Load(), maxDecodedSets)
	require.Len(t, *c.fields.Load(), maxDecodedSets)
	for i, cd := range codecs[:maxDecodedSets] {
		require.Contains(t, *c.sets.Load(), decodedKey{cd, text}, "set %d", i)
		require.Contains(t, *c.fields.Load(), decodedKey{cd, "a\x00"}, "fields %d", i)
	}
	c.decodeNodes(codecs[maxDecodedSets], text)
	c.statusFields(codecs[maxDecodedSets], keys)
	require.Len(t, *c.sets.Load(), 1)
	require.Len(t, *c.fields.Load(), 1)
}

func statusPath(field string) diff.Path {
	return diff.Path{{Kind: diff.FieldElem, Name: statusSide}, {Kind: diff.FieldElem, Name: field}}
}

// Goroutines that read and write one codecCache at once each find what
// they remembered, or nothing (another's write forgot it), never another
// key's value; -race checks that readers, which take no lock, read only
// maps no writer changes.
func TestCodecCacheConcurrentReadersAndWriters(t *testing.T) {
	c := &codecCache{}
	codecs := make([]*ownership.Codec, 2*maxCodecs)
	for i := range codecs {
		codecs[i] = statusCodec()
	}
	text := codecs[0].Encode(ownership.MustNewSet(statusPath("a")))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 500 {
				i := (g*131 + n*7) % len(codecs)
				key := fmt.Appendf(nil, "k%d", i)
				if got := c.get(key); got != nil && got != codecs[i] {
					t.Errorf("key %d: another key's Codec", i)
					return
				}
				c.put(key, codecs[i])
				if got := c.get(key); got != nil && got != codecs[i] {
					t.Errorf("key %d: another key's Codec", i)
					return
				}
				if _, ok := c.decodeNodes(codecs[i], text); !ok {
					t.Errorf("key %d: set not decoded", i)
					return
				}
				c.statusFields(codecs[i], [][]byte{[]byte("a")})
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, len(*c.codecs.Load()), maxCodecs)
	require.LessOrEqual(t, len(*c.sets.Load()), maxDecodedSets)
	require.LessOrEqual(t, len(*c.fields.Load()), maxDecodedSets)
}
