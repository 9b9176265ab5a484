package jsonscan

import "slices"

// Decode decodes JSON into the tree form package ownership works on:
// map[string]any, []any, string, bool, nil, and numbers as Number gives
// them: int64, float64, or a json.Number for an integer no int64 writes back
// as it was written, so that encoding the tree keeps every integer's text. It
// gives what encoding/json (with UseNumber, numbers then converted by Number)
// gives, at a fraction of the cost.
// Malformed input, and a number beyond float64's range, is an error.
//
// Keys and plain strings are substrings of one copy of the input, so the
// tree keeps that copy alive: it is meant for short-lived trees.
func Decode(b []byte) (any, error) {
	return (&scanner{b: b, s: string(b)}).decode()
}

// DecodeShape is Decode with every scalar that is not inside a list replaced
// by nil: a tree of the same shape (maps, lists and list items, which carry
// their identity), for readers of the shape alone (an ownership.Codec), built
// without allocating the scalars.
func DecodeShape(b []byte) (any, error) {
	return (&scanner{b: b, s: string(b), shape: true}).decode()
}

func (p *scanner) decode() (any, error) {
	v, err := p.value(0)
	if err == nil && !p.atEnd() {
		err = p.errorf("trailing data")
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (p *scanner) value(depth int) (any, error) {
	if depth > maxDepth {
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
		p.inList++
		v, err := p.array(depth)
		p.inList--
		return v, err
	case p.shape && p.inList == 0:
		_, err := p.scalar()
		return nil, err
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

func (p *scanner) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.byte('}') {
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
		if !p.byte(':') {
			return nil, p.errorf("want ':'")
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.space()
		switch {
		case p.byte(','):
		case p.byte('}'):
			return m, nil
		case p.i >= len(p.b):
			return nil, p.errorf("unexpected end in object")
		default:
			return nil, p.errorf("want ',' or '}'")
		}
	}
}

func (p *scanner) array(depth int) (any, error) {
	p.i++ // [
	p.space()
	if p.byte(']') {
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
		switch {
		case p.byte(','):
		case p.byte(']'):
			a := slices.Clone(p.items[mark:])
			clear(p.items[mark:])
			p.items = p.items[:mark]
			return a, nil
		case p.i >= len(p.b):
			return nil, p.errorf("unexpected end in array")
		default:
			return nil, p.errorf("want ',' or ']'")
		}
	}
}
