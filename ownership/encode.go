package ownership

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/steady-go/steady/internal/pathname"
)

// Encode returns the set's compact text form. It is deterministic (equal
// sets encode identically) and round-trip stable: DecodeSet(s.Encode())
// equals s. The empty set encodes as "".
//
// The form is a trie: siblings are separated by commas, a node's children
// follow it in parentheses. Field names are bare when they are identifiers
// (as in diff paths) and quoted otherwise; list items use the diff path
// bracket notation. A node without children is a member. A node with
// children is a member when it is a list item and not when it is a field;
// "!" after a node marks the opposite. For example
//
//	metadata(labels(app)),spec(ports([port=80](port,protocol)),replicas)
//
// holds .metadata.labels.app, .spec.replicas, the item .spec.ports[port=80]
// and that item's two fields.
func (s *Set) Encode() string {
	if s.Empty() {
		return ""
	}
	var b strings.Builder
	b.Grow(len(s.nodes) * 8)
	s.encodeKids(&b, 0)
	return b.String()
}

func (s *Set) encodeKids(b *strings.Builder, i int32) {
	var scratch [64]byte
	n := s.nodes[i]
	for c := n.lo; c < n.hi; c++ {
		if c > n.lo {
			b.WriteByte(',')
		}
		k := s.nodes[c]
		switch k.kind {
		case elemField:
			b.Write(appendName(scratch[:0], k.name))
		case elemKey:
			b.WriteByte('[')
			b.WriteString(k.name)
			b.WriteByte(']')
		case elemValue:
			b.WriteString("[=")
			b.WriteString(k.name)
			b.WriteByte(']')
		}
		if k.lo == k.hi {
			continue
		}
		if k.member != (k.kind != elemField) {
			b.WriteByte('!')
		}
		b.WriteByte('(')
		s.encodeKids(b, c)
		b.WriteByte(')')
	}
}

// DecodeSet parses the form Encode produces. Non-canonical spellings of
// numbers and strings inside items are normalized. It returns an error that
// gives the offset of the first problem; "" decodes as the empty set.
// Every set Encode gives decodes back: it reads paths of up to MaxDepth+1
// elements, the longest NewSet takes.
func DecodeSet(text string) (*Set, error) {
	if text == "" {
		return &Set{}, nil
	}
	d := decoder{s: text}
	d.b.reset()
	d.b.nodes = growNodes(d.b.nodes, len(text)/6)
	if err := d.kids(0, 0); err != nil {
		return nil, err
	}
	if d.i != len(d.s) {
		return nil, d.errorf("unexpected %q", d.s[d.i])
	}
	s, dup := d.b.freeze()
	if dup >= 0 {
		return nil, fmt.Errorf("ownership: invalid field set: duplicate element %q", d.b.nodes[dup].name)
	}
	return s, nil
}

func growNodes(n []bnode, extra int) []bnode {
	if extra > cap(n)-len(n) {
		m := make([]bnode, len(n), len(n)+extra)
		copy(m, n)
		return m
	}
	return n
}

type decoder struct {
	s   string
	i   int
	b   builder
	buf []byte
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("ownership: invalid field set at offset %d: %s", d.i, fmt.Sprintf(format, args...))
}

// maxDecodeDepth is the deepest level of children DecodeSet reads: a path
// of MaxDepth+1 elements, the longest NewSet takes, so that every set
// Encode gives decodes back (at 1000, the encoding of a set holding a
// field of a tree 1,001 to 10,001 levels deep did not).
const maxDecodeDepth = MaxDepth

// kids parses a comma-separated list of children of parent.
func (d *decoder) kids(parent int32, depth int) error {
	if depth > maxDecodeDepth {
		return d.errorf("nested too deeply")
	}
	for {
		if err := d.child(parent, depth); err != nil {
			return err
		}
		if !d.eat(',') {
			return nil
		}
	}
}

func (d *decoder) child(parent int32, depth int) error {
	kind, name, err := d.element()
	if err != nil {
		return err
	}
	flip := d.eat('!')
	n := d.b.add(parent, kind, name, false)
	if !d.eat('(') {
		if flip {
			return d.errorf("! on a node without children")
		}
		d.b.nodes[n].member = true
		return nil
	}
	if err := d.kids(n, depth+1); err != nil {
		return err
	}
	if !d.eat(')') {
		return d.errorf("missing )")
	}
	d.b.nodes[n].member = (kind != elemField) != flip
	return nil
}

// eat consumes byte c if it comes next, and reports whether it did.
func (d *decoder) eat(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// element reads one element: a field name, bare or quoted, or a bracketed
// list item.
func (d *decoder) element() (uint8, string, error) {
	if d.i >= len(d.s) {
		return 0, "", d.errorf("missing element")
	}
	switch d.s[d.i] {
	case '"':
		name, err := d.quoted()
		return elemField, name, err
	case '[':
		return d.item()
	}
	name, err := d.bare(",()[]!\"", "name")
	return elemField, name, err
}

// bare reads a bare name, which ends before any byte of stop and must be
// an identifier; what names it in the error.
func (d *decoder) bare(stop, what string) (string, error) {
	start := d.i
	for d.i < len(d.s) && strings.IndexByte(stop, d.s[d.i]) < 0 {
		d.i++
	}
	name := d.s[start:d.i]
	if !pathname.IsIdent(name) {
		d.i = start
		return "", d.errorf("invalid %s %q", what, name)
	}
	return name, nil
}

// quoted reads a Go-quoted string at d.i.
func (d *decoder) quoted() (string, error) {
	q, err := strconv.QuotedPrefix(d.s[d.i:])
	if err != nil {
		return "", d.errorf("bad quoted string")
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", d.errorf("bad quoted string")
	}
	d.i += len(q)
	return v, nil
}

// item reads a bracketed list item: [=scalar] or [k=scalar,...].
func (d *decoder) item() (uint8, string, error) {
	d.i++ // [
	start := d.i
	kind := elemKey
	var buf []byte
	var err error
	if d.eat('=') {
		kind, start = elemValue, d.i
		buf, err = d.scalar(d.buf[:0])
	} else {
		buf, err = d.keyFields(d.buf[:0])
	}
	if err != nil {
		return 0, "", err
	}
	if d.i >= len(d.s) || d.s[d.i] != ']' {
		return 0, "", d.errorf("missing ]")
	}
	raw := d.s[start:d.i]
	d.i++
	d.buf = buf
	if raw == string(buf) {
		return kind, raw, nil
	}
	return kind, string(buf), nil
}

// keyFields reads a keyed item's fields, k=scalar,..., each key at most
// once, and appends their canonical text to buf.
func (d *decoder) keyFields(buf []byte) ([]byte, error) {
	var names []string // the key fields so far
	for {
		name, err := d.keyName()
		if err != nil {
			return buf, err
		}
		if !d.eat('=') {
			return buf, d.errorf("missing = after key name")
		}
		if slices.Contains(names, name) {
			return buf, d.errorf("key field %s listed twice", name)
		}
		names = append(names, name)
		buf = append(appendName(buf, name), '=')
		if buf, err = d.scalar(buf); err != nil {
			return buf, err
		}
		if !d.eat(',') {
			return buf, nil
		}
		buf = append(buf, ',')
	}
}

// keyName reads a key field's name, bare or quoted.
func (d *decoder) keyName() (string, error) {
	if d.i < len(d.s) && d.s[d.i] == '"' {
		return d.quoted()
	}
	return d.bare("=]", "key name")
}

// scalar reads one scalar and appends its canonical text to buf.
func (d *decoder) scalar(buf []byte) ([]byte, error) {
	if d.i >= len(d.s) {
		return buf, d.errorf("missing value")
	}
	if d.s[d.i] == '"' {
		v, err := d.quoted()
		if err != nil {
			return buf, err
		}
		return strconv.AppendQuote(buf, v), nil
	}
	start := d.i
	for d.i < len(d.s) && d.s[d.i] != ',' && d.s[d.i] != ']' {
		d.i++
	}
	tok := d.s[start:d.i]
	switch tok {
	case "true", "false", "null":
		return append(buf, tok...), nil
	}
	n, ok := textNumber(tok)
	if !ok || tok == "" {
		d.i = start
		return buf, d.errorf("invalid value %q", tok)
	}
	return n.appendText(buf), nil
}
