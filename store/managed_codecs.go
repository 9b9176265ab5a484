package store

import (
	"encoding/json"
	"sync"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/ownership"
)

// Judging a change decodes the ownership record of both states of the
// object (FieldChanges), and the Codec it decodes with depends only on the
// side's shape: which fields, map keys and list items exist. A controller's
// objects mostly share one shape per side (a status of the same fields, a
// spec whose lists and maps differ from object to object is the exception),
// so the Store keeps the Codecs of the shapes it last decoded with, keyed by
// a text of the shape read from the side's JSON without building its tree.
// Equal keys mean trees of equal shape, hence equal Codecs; a shape the key
// cannot tell (a key with escapes) is decoded the general way. The records
// repeat too (one manager owns the same fields of every object), so the
// Store also keeps the sets a remembered Codec decoded, by their text: Sets
// are immutable and may be shared. Writes use the same Codecs, for the
// record they merge into and the one they encode: a controller's status
// apply to one object after another decodes and encodes against one shape.

// maxCodecs bounds the shapes a Store remembers; when full, it forgets them
// all (one controller's objects use few).
const maxCodecs = 64

// maxDecodedSets bounds the decoded sets a Store remembers, likewise.
const maxDecodedSets = 256

// codecCache holds the Codecs of recently decoded shapes. It is safe for
// concurrent use; a nil cache remembers nothing.
type codecCache struct {
	mu     sync.Mutex
	codecs map[string]*ownership.Codec
	sets   map[decodedKey]*ownership.Set
}

type decodedKey struct {
	codec *ownership.Codec
	text  string
}

// decodeNodes is codec.DecodeNodes(text), remembered when it succeeds.
func (c *codecCache) decodeNodes(codec *ownership.Codec, text string) (*ownership.Set, bool) {
	if c == nil {
		return codec.DecodeNodes(text)
	}
	key := decodedKey{codec, text}
	c.mu.Lock()
	set, ok := c.sets[key]
	c.mu.Unlock()
	if ok {
		return set, true
	}
	if set, ok = codec.DecodeNodes(text); !ok {
		return set, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sets) >= maxDecodedSets {
		clear(c.sets)
	}
	if c.sets == nil {
		c.sets = map[decodedKey]*ownership.Set{}
	}
	c.sets[key] = set
	return set, true
}

func (c *codecCache) get(key []byte) *ownership.Codec {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.codecs[string(key)]
}

func (c *codecCache) put(key []byte, codec *ownership.Codec) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.codecs) >= maxCodecs {
		clear(c.codecs)
	}
	if c.codecs == nil {
		c.codecs = map[string]*ownership.Codec{}
	}
	c.codecs[string(key)] = codec
}

// sideShapeKey appends to buf the key of the shape of one side of raw, or
// reports false when it has none (see the comment at the top of the file).
// The key is the side, the shape key of its JSON (jsonscan.AppendShapeKey)
// and, as the rest of the side's tree, the conditions or the metadata
// shape in full.
func sideShapeKey(buf []byte, raw *rawObject, side string) ([]byte, bool) {
	var ok bool
	if side == statusSide {
		buf = append(buf, 's')
		if buf, ok = jsonscan.AppendShapeKey(buf, orNull(raw.Status)); !ok {
			return buf, false
		}
		if len(raw.Conditions) > 0 {
			conds, err := json.Marshal(raw.Conditions)
			if err != nil {
				return buf, false
			}
			buf = append(append(buf, 0), conds...)
		}
		return buf, true
	}
	buf = append(buf, 'p')
	if buf, ok = jsonscan.AppendShapeKey(buf, orNull(raw.Spec)); !ok {
		return buf, false
	}
	if md := metaTree(&raw.Meta, true); md != nil {
		text, err := json.Marshal(md)
		if err != nil {
			return buf, false
		}
		buf = append(append(buf, 0), text...)
	}
	return buf, true
}

// codecOf returns the Codec of one side of raw, remembered by shape. tree,
// when not nil, is that side's tree (or its shape), which a shape not
// remembered is read from; else it is decoded from raw.
func (sc schemas) codecOf(raw *rawObject, side string, tree map[string]any) (*ownership.Codec, error) {
	var arr [256]byte
	key, keyed := sideShapeKey(arr[:0], raw, side)
	if keyed {
		if c := sc.codecs.get(key); c != nil {
			return c, nil
		}
	}
	if tree == nil {
		var err error
		if tree, err = sideTreeOf(raw, side, true); err != nil {
			return nil, err
		}
	}
	c := ownership.NewCodec(tree, sc.of(side))
	if keyed {
		sc.codecs.put(key, c)
	}
	return c, nil
}

// decodeManagedOf is decodeManaged for the stored raw, with the Codec and
// the decoded sets remembered by shape and text: a controller's writes
// decode the same record against the same shape object after object.
func (sc schemas) decodeManagedOf(raw *rawObject, side string, tree map[string]any) ownership.Managed {
	d, _ := sc.decodeSideWith(&raw.Meta, side, func() (*ownership.Codec, error) { return sc.codecOf(raw, side, tree) }, sc.codecs.decodeNodes)
	return d.managed
}

// setManagedOf is setManaged for next, the object about to be stored, with
// its side's Codec remembered by shape: tree (that side's tree, or nil) is
// read only for a shape not remembered.
func (sc schemas) setManagedOf(next *rawObject, side string, managed ownership.Managed, tree map[string]any) error {
	var codec *ownership.Codec
	if len(managed) > 0 {
		var err error
		if codec, err = sc.codecOf(next, side, tree); err != nil {
			return err
		}
	}
	sc.setManagedWith(&next.Meta, side, managed, codec)
	return nil
}
