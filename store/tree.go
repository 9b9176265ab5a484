package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// decodeTree decodes JSON into the tree form package ownership works on:
// map[string]any, []any, string, bool, nil, and numbers as int64 when
// integral and in range, float64 otherwise. It gives what encoding/json
// (with UseNumber, numbers then converted) gives, for the values the store
// keeps, at a fraction of the cost: the store builds two trees per write to
// maintain field ownership. Malformed input is an error wrapping ErrInvalid.
func decodeTree(raw []byte) (any, error) {
	return (&treeParser{b: raw, s: string(raw)}).decode()
}

// decodeShape is decodeTree with every scalar that is not inside a list
// replaced by nil: a tree of the same shape (maps, lists and list items,
// which carry their identity) for an ownership.Codec, which reads only that,
// built without allocating the scalars.
func decodeShape(raw []byte) (any, error) {
	return (&treeParser{b: raw, s: string(raw), shape: true}).decode()
}

func (p *treeParser) decode() (any, error) {
	v, err := p.value(0)
	if err == nil {
		p.space()
		if p.i != len(p.b) {
			err = p.errorf("trailing data")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: decoding JSON: %v", ErrInvalid, err)
	}
	return v, nil
}

// maxTreeDepth bounds nesting, as encoding/json does, so hostile input
// cannot exhaust the stack.
const maxTreeDepth = 10000

// Keys and plain strings are substrings of s, one copy of the input, so
// that they cost no allocation of their own; the tree then keeps the input's
// memory alive, which is fine for the short-lived trees of a write.
type treeParser struct {
	b []byte
	s string // string(b)
	i int
	// items collects array elements, so that each array is allocated once,
	// at its final size.
	items []any
	// shape makes scalars outside lists nil (see decodeShape); inList is
	// the depth of lists being read.
	shape  bool
	inList int
}

func (p *treeParser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: "+format, append([]any{p.i}, args...)...)
}

func (p *treeParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *treeParser) value(depth int) (any, error) {
	if depth > maxTreeDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.space()
	if p.i >= len(p.b) {
		return nil, p.errorf("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case p.shape && p.inList == 0:
		return nil, p.skipScalar()
	case c == '"':
		return p.string()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	default:
		return nil, p.errorf("unexpected %q", c)
	}
}

func (p *treeParser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.errorf("want a string key")
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.errorf("want ':'")
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.space()
		if p.i >= len(p.b) {
			return nil, p.errorf("unexpected end in object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, p.errorf("want ',' or '}'")
		}
	}
}

// skipScalar reads a scalar as value does, keeping nothing.
func (p *treeParser) skipScalar() error {
	var err error
	switch c := p.b[p.i]; {
	case c == '"':
		_, err = p.string()
	case c == 't':
		_, err = p.literal("true", nil)
	case c == 'f':
		_, err = p.literal("false", nil)
	case c == 'n':
		_, err = p.literal("null", nil)
	case c == '-' || '0' <= c && c <= '9':
		_, _, _, err = p.numberParts()
	default:
		err = p.errorf("unexpected %q", c)
	}
	return err
}

func (p *treeParser) array(depth int) (any, error) {
	p.inList++
	v, err := p.items1(depth)
	p.inList--
	return v, err
}

func (p *treeParser) items1(depth int) (any, error) {
	p.i++ // [
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return []any{}, nil
	}
	mark := len(p.items)
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, p.errorf("unexpected end in array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			a := slices.Clone(p.items[mark:])
			clear(p.items[mark:])
			p.items = p.items[:mark]
			return a, nil
		default:
			return nil, p.errorf("want ',' or ']'")
		}
	}
}

// string reads a string token. Plain ASCII strings without escapes, the
// common case, are sliced; anything else goes through encoding/json, which
// handles escapes, surrogates and invalid UTF-8 exactly.
func (p *treeParser) string() (string, error) {
	start := p.i
	p.i++ // "
	plain := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if plain {
				return p.s[start+1 : p.i-1], nil
			}
			var s string
			if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
				return "", p.errorf("bad string: %v", err)
			}
			return s, nil
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			return "", p.errorf("control character in string")
		case c >= utf8.RuneSelf:
			plain = false
			p.i++
		default:
			p.i++
		}
	}
	return "", p.errorf("unterminated string")
}

func (p *treeParser) literal(word string, v any) (any, error) {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return nil, p.errorf("bad literal")
	}
	p.i += len(word)
	return v, nil
}

// number reads a JSON number: int64 when integral and in range, float64
// otherwise.
func (p *treeParser) number() (any, error) {
	n, f, isInt, err := p.numberParts()
	if err != nil {
		return nil, err
	}
	if isInt {
		return n, nil
	}
	return f, nil
}

// numberParts reads a JSON number: n when integral and in range (isInt),
// f otherwise.
func (p *treeParser) numberParts() (n int64, f float64, isInt bool, err error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || (n > 1 && p.b[intStart] == '0') {
		return 0, 0, false, p.errorf("bad number")
	}
	integral := true
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		integral = false
		if digits() == 0 {
			return 0, 0, false, p.errorf("bad number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		integral = false
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return 0, 0, false, p.errorf("bad number")
		}
	}
	text := p.s[start:p.i]
	if integral {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, 0, true, nil
		}
	}
	f, err = strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, 0, false, p.errorf("number %s out of range", text)
	}
	return 0, f, false, nil
}

// metaTree returns the metadata part of the spec-side tree, nil when the
// object has no labels, annotations, owners or finalizers. It matches what
// encoding/json gives for ApplyMeta.
//
// With shape, label and annotation values are nil, as in decodeShape.
func metaTree(m *Meta, shape bool) map[string]any {
	out := map[string]any{}
	if len(m.Labels) > 0 {
		out["labels"] = stringMap(m.Labels, shape)
	}
	if len(m.Annotations) > 0 {
		out["annotations"] = stringMap(m.Annotations, shape)
	}
	if len(m.Owners) > 0 {
		owners := make([]any, len(m.Owners))
		for i, o := range m.Owners {
			ref := map[string]any{"kind": o.Kind, "name": o.Name, "uid": o.UID}
			if o.Controller {
				ref["controller"] = true
			}
			owners[i] = ref
		}
		out["owners"] = owners
	}
	if len(m.Finalizers) > 0 {
		fins := make([]any, len(m.Finalizers))
		for i, f := range m.Finalizers {
			fins[i] = f
		}
		out["finalizers"] = fins
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func stringMap(m map[string]string, shape bool) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if shape {
			out[k] = nil
		} else {
			out[k] = v
		}
	}
	return out
}
