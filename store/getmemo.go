package store

import (
	"bytes"
	"sync"

	"github.com/steady-go/steady/store/kv"
)

// decodedGets holds, for a Store that keeps no memory of values
// (WithLastValues(0)), the objects its latest Gets decoded, as the read of
// a write decodes them: a client that reads an object and writes it back
// (Get, then Update) still reads it twice, but decodes its value once. It
// spares no read (that is the memory's part) and changes no result: an
// entry serves only a read of the same key, revision and bytes, which
// decode to what it holds. It keeps at most maxDecodedGets entries, of
// values of at most maxDecodedGetBytes. It is safe for concurrent use; a
// nil *decodedGets holds nothing.
type decodedGets struct {
	mu      sync.Mutex
	entries [maxDecodedGets]decodedGet
	next    int
}

// decodedGet is one value a Get decoded, and its raw read.
type decodedGet struct {
	key   string
	rev   int64
	value []byte
	raw   *rawObject
}

const (
	// maxDecodedGets is how many of its latest Gets a Store keeps decoded:
	// a read-modify-write's read comes right after its Get.
	maxDecodedGets = 16
	// maxDecodedGetBytes bounds the values kept decoded, so that the
	// entries hold at most 16 × 64 KiB and their decoding.
	maxDecodedGetBytes = 64 << 10
)

// put keeps raw, kv's raw read, where kv is a Get's read.
func (g *decodedGets) put(kv kv.KeyValue, raw *rawObject) {
	if g == nil || kv.ModRevision == 0 || len(kv.Value) > maxDecodedGetBytes {
		return
	}
	g.mu.Lock()
	g.entries[g.next] = decodedGet{key: kv.Key, rev: kv.ModRevision, value: kv.Value, raw: raw}
	g.next = (g.next + 1) % maxDecodedGets
	g.mu.Unlock()
}

// lookup returns the raw read of kv when a Get decoded it, else nil. The
// caller must not modify it, nor hand out what it holds.
func (g *decodedGets) lookup(kv kv.KeyValue) *rawObject {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range g.entries {
		if e := &g.entries[i]; e.rev == kv.ModRevision && e.key == kv.Key && bytes.Equal(e.value, kv.Value) {
			return e.raw
		}
	}
	return nil
}
