package ownership

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/steady-go/steady/internal/jsonscan"
)

// NewCodecJSON returns the Codec of the object the JSON text doc holds:
// NewCodec of the tree doc decodes to (as ToTree decodes JSON), read from
// the text in one pass without building that tree, since a Codec depends
// only on the object's shape. Node names are substrings of one copy of
// doc, which the Codec keeps. It returns an error when doc is not one JSON
// object, or holds a number beyond float64's range, as decoding it would.
func NewCodecJSON(doc []byte, schema *Schema) (*Codec, error) {
	if c, ok := codecOfJSON(doc, schema); ok {
		return c, nil
	}
	// What the pass does not read (a key with escapes, a key given twice,
	// a number out of range, malformed text) goes through the tree, which
	// decodes it or says why not.
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

// codecOfJSON is NewCodecJSON's one pass: it adds every node of the
// object to a builder, in the text's order, and freezes it, which lays the
// nodes out in NewCodec's order. It reports false for what it does not
// read.
func codecOfJSON(doc []byte, schema *Schema) (*Codec, bool) {
	w := jsonWalk{b: builder{nodes: make([]bnode, 0, 16+len(doc)/32)}, doc: doc, s: string(doc)}
	w.items = w.itemArr[:0]
	w.b.reset()
	r := jsonscan.NewReader(doc)
	if r.Next() != '{' || !w.value(&r, 0, schema.top()) || !r.End() {
		return nil, false
	}
	all, dup := w.b.freeze()
	if dup >= 0 {
		return nil, false // decoding keeps a repeated key's last value
	}
	return codecOfNodes(all), true
}

// jsonWalk reads the nodes of an object from its JSON text into a builder:
// the nodes objectWalk lays out for the tree the text decodes to.
type jsonWalk struct {
	b      builder
	doc    []byte
	s      string // string(doc), whose substrings name the nodes
	items  []itemRef
	keybuf []byte
	// itemArr holds the items of most lists, in w's own allocation (the
	// walk's recursion through closures puts w on the heap).
	itemArr [8]itemRef
}

// name returns key, a slice of doc, as a substring of s: every slice of
// doc ends where doc's capacity does, so their capacities tell where they
// start.
func (w *jsonWalk) name(key []byte) string {
	at := cap(w.doc) - cap(key)
	return w.s[at : at+len(key)]
}

// value reads the next value of r, that of builder node at (of schema
// sch), adding the nodes below it as objectWalk.walk lays them out. It
// reports false for what it does not read.
func (w *jsonWalk) value(r *jsonscan.Reader, at int32, sch *snode) bool {
	switch r.Next() {
	case '{':
		if sch.strategy() != stratAtomic {
			return r.Object(func(key []byte) bool {
				k := w.name(key)
				return w.value(r, w.b.add(at, elemField, k, true), sch.field(k))
			})
		}
	case '[':
		if st := sch.strategy(); st == stratSet || st == stratKeyed {
			raw, ok := r.Raw()
			return ok && w.list(at, raw, sch)
		}
	}
	raw, ok := r.Raw()
	return ok && numbersInRange(raw)
}

// list adds the items of the set or keyed list raw below builder node at,
// as objectWalk.walkList does: a set of plain strings is read from the
// text, any other list decoded.
func (w *jsonWalk) list(at int32, raw []byte, sch *snode) bool {
	mark := len(w.items)
	if sch.strategy() == stratSet {
		// A plain string's item name (appendScalarText) is its token.
		r := jsonscan.NewReader(raw)
		if r.Array(func() bool {
			token, plain, ok := r.String()
			if !ok || !plain || bytes.IndexByte(token, 0x7f) >= 0 {
				return false
			}
			w.items = append(w.items, itemRef{name: w.name(token)})
			return true
		}) {
			w.addItems(at, mark, nil, sch)
			w.items = w.items[:mark]
			return true
		}
		w.items = w.items[:mark]
	}
	v, err := jsonscan.Decode(raw)
	if err != nil {
		return false
	}
	w.tree(at, v, sch)
	return true
}

// addItems adds the items named in w.items[mark:] below builder node at,
// sorted, the first of a repeated name taking it, and below a keyed item
// its tree (l's item, l nil for a set).
func (w *jsonWalk) addItems(at int32, mark int, l []any, sch *snode) {
	items := w.items[mark:]
	slices.SortStableFunc(items, func(a, b itemRef) int { return strings.Compare(a.name, b.name) })
	items = slices.CompactFunc(items, func(a, b itemRef) bool { return a.name == b.name })
	kind := sch.itemKind()
	for _, ref := range items {
		k := w.b.add(at, kind, ref.name, true)
		if kind == elemKey {
			w.tree(k, l[ref.idx], sch.item())
		}
	}
}

// tree adds the nodes below v, a decoded value at builder node at, as
// objectWalk.walk lays them out.
func (w *jsonWalk) tree(at int32, v any, sch *snode) {
	switch x := v.(type) {
	case map[string]any:
		if sch.strategy() != stratAtomic {
			for k, v := range x {
				w.tree(w.b.add(at, elemField, k, true), v, sch.field(k))
			}
		}
	case []any:
		if st := sch.strategy(); st == stratSet || st == stratKeyed {
			mark := len(w.items)
			for i, it := range x {
				var err error
				if w.keybuf, err = appendItemName(w.keybuf[:0], it, sch); err == nil {
					w.items = append(w.items, itemRef{name: string(w.keybuf), idx: i})
				}
			}
			w.addItems(at, mark, x, sch)
			w.items = w.items[:mark]
		}
	}
}

// numbersInRange reports whether every number in v, well-formed JSON, is
// within float64's range, as decoding it requires.
func numbersInRange(v []byte) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			if i = closingQuote(v, i); i < 0 {
				return true // not well-formed: not ours to judge
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

// closingQuote returns the index of the quote that closes the string
// opened at v[open]: the first one not escaped by an odd run of
// backslashes before it. It returns -1 when there is none.
func closingQuote(v []byte, open int) int {
	i := open
	for {
		j := bytes.IndexByte(v[i+1:], '"')
		if j < 0 {
			return -1
		}
		i += 1 + j
		k := i - 1
		for k >= 0 && v[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i
		}
	}
}
