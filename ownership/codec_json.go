package ownership

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/steady-go/steady/internal/jsonscan"
)

// NewCodecJSON returns the Codec of the object the JSON text doc holds:
// NewCodec of the tree doc decodes to (as ToTree decodes JSON), read from
// the text without building that tree, since a Codec depends only on the
// object's shape. Node names are substrings of one copy of doc, which the
// Codec keeps. It returns an error when doc is not one JSON object, or
// holds a number beyond float64's range, as decoding it would.
func NewCodecJSON(doc []byte, schema *Schema) (*Codec, error) {
	r := jsonscan.NewReader(doc)
	if raw, ok := r.Raw(); ok && r.End() && firstByte(raw) == '{' {
		var keys [16]jsonMember
		w := jsonWalk{objectWalk: objectWalk{nodes: make([]node, 1, 64)}, doc: doc, s: string(doc), members: keys[:0]}
		if w.walk(0, raw, schema.top()) {
			return w.codec(), nil
		}
	}
	// What the walk does not read (a key with escapes, a number out of
	// range, malformed text) goes through the tree, which decodes it or
	// says why not.
	tree, err := jsonscan.DecodeShape(doc)
	if err != nil {
		return nil, err
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, errors.New("ownership: the document is not a JSON object")
	}
	return NewCodec(obj, schema), nil
}

// jsonWalk is objectWalk over JSON text: the same nodes in the same order
// (see objectWalk.walk), with an object's members read from the text, and
// only a set or keyed list decoded, for its items' identities.
type jsonWalk struct {
	objectWalk
	doc     []byte
	s       string // string(doc), whose substrings name the nodes
	members []jsonMember
}

// jsonMember is an object's member: its key and its value's text.
type jsonMember struct {
	k string
	v []byte
}

// name returns key, a plain key read from doc, as a substring of s: every
// slice of doc ends where doc's capacity does, so their capacities tell
// where they start.
func (w *jsonWalk) name(key []byte) string {
	at := cap(w.doc) - cap(key)
	return w.s[at : at+len(key)]
}

// walk lays out the value v (at node at, of schema sch) as objectWalk.walk
// lays out its tree, and reports false for what it does not read.
func (w *jsonWalk) walk(at int32, v []byte, sch *snode) bool {
	w.nodes[at].member = true
	switch firstByte(v) {
	case '{':
		if sch.strategy() != stratAtomic {
			return w.walkObject(at, v, sch)
		}
	case '[':
		if st := sch.strategy(); st == stratSet || st == stratKeyed {
			l, err := jsonscan.Decode(v)
			if err != nil {
				return false
			}
			w.walkList(at, l.([]any), sch)
			return true
		}
	}
	return numbersInRange(v)
}

// walkObject lays out the members of object v, sorted by key, the last of
// a repeated key taking it (as decoding keeps the last).
func (w *jsonWalk) walkObject(at int32, v []byte, sch *snode) bool {
	mark := len(w.members)
	r := jsonscan.NewReader(v)
	if !r.Object(func(key []byte) bool {
		raw, ok := r.Raw()
		w.members = append(w.members, jsonMember{w.name(key), raw})
		return ok
	}) {
		return false
	}
	ms := w.members[mark:]
	if len(ms) > 12 {
		slices.SortStableFunc(ms, func(a, b jsonMember) int { return strings.Compare(a.k, b.k) })
	} else {
		for i := 1; i < len(ms); i++ {
			for j := i; j > 0 && ms[j].k < ms[j-1].k; j-- {
				ms[j], ms[j-1] = ms[j-1], ms[j]
			}
		}
	}
	n := 0
	for i := range ms {
		if i+1 < len(ms) && ms[i+1].k == ms[i].k {
			continue
		}
		ms[n] = ms[i]
		n++
	}
	w.members = w.members[:mark+n]
	lo := w.reserve(at, n)
	for j := range n {
		m := w.members[mark+j] // w.members may grow below
		w.nodes[lo+int32(j)].kind, w.nodes[lo+int32(j)].name = elemField, m.k
		if !w.walk(lo+int32(j), m.v, sch.field(m.k)) {
			return false
		}
	}
	w.members = w.members[:mark]
	return true
}

// codec is NewCodec's result for the nodes laid out.
func (w *jsonWalk) codec() *Codec {
	w.nodes[0].member = false
	all := &Set{}
	if len(w.nodes) > 1 {
		all.nodes = w.nodes
	}
	return codecOfNodes(all)
}

// firstByte is the first byte of v after white space, 0 when none.
func firstByte(v []byte) byte {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// numbersInRange reports whether every number in v, well-formed JSON, is
// within float64's range, as decoding it requires.
func numbersInRange(v []byte) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			for i++; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' {
					i++
				}
			}
		case c == '-' || '0' <= c && c <= '9':
			start, long := i, false
			for ; i < len(v) && strings.IndexByte("+-.eE0123456789", v[i]) >= 0; i++ {
				long = long || v[i] == 'e' || v[i] == 'E'
			}
			// Only an exponent or a long mantissa can be out of range.
			if long || i-start > 15 {
				if _, err := strconv.ParseFloat(string(v[start:i]), 64); err != nil {
					return false
				}
			}
			i--
		}
	}
	return true
}
