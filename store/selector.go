package store

import (
	"fmt"
	"slices"
	"strings"
)

// Selector chooses objects by their labels.
type Selector interface {
	// Matches reports whether an object with these labels is selected.
	Matches(labels map[string]string) bool
	// String formats the selector in the syntax ParseSelector reads.
	String() string
}

type everything struct{}

func (everything) Matches(map[string]string) bool { return true }
func (everything) String() string                 { return "" }

// ParseSelector reads a label selector: requirements separated by commas,
// all of which must hold (a comma is AND). The requirements are:
//
//	a=b   a==b         label a is b
//	a!=b               label a is not b, or a is absent
//	a in (x,y)         label a is x or y
//	a notin (x,y)      label a is neither x nor y, or a is absent
//	a                  label a is present
//	!a                 label a is absent
//
// Keys are non-empty and made of ASCII letters, digits, '.', '-', '_' and
// '/'. Values are made of ASCII letters, digits, '.', '-' and '_'; a value
// after = or != may be empty, a value in a list may not, and a list holds at
// least one value. Spaces around tokens are ignored. The empty string selects
// everything.
//
// The result's String is canonical: requirements sorted by key and operator,
// list values sorted and deduplicated, no spaces except around in and notin.
// ParseSelector(sel.String()) gives an equal selector. A malformed selector
// gives an error wrapping ErrInvalid that says where and what was expected.
func ParseSelector(s string) (Selector, error) {
	p := selectorParser{src: s}
	reqs, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("%w: label selector %q: %v", ErrInvalid, s, err)
	}
	return newLabelSelector(reqs), nil
}

// MatchLabels returns the selector that matches objects carrying every one of
// these labels with these values (an equality requirement per entry). An
// empty map selects everything. Its String round-trips through ParseSelector
// when keys and values follow ParseSelector's syntax.
func MatchLabels(labels map[string]string) Selector {
	reqs := make([]requirement, 0, len(labels))
	for k, v := range labels {
		reqs = append(reqs, requirement{key: k, op: opEquals, values: []string{v}})
	}
	return newLabelSelector(reqs)
}

type selectorOp uint8

const (
	opEquals selectorOp = iota
	opNotEquals
	opIn
	opNotIn
	opExists
	opNotExists
)

type requirement struct {
	key    string
	op     selectorOp
	values []string // sorted and unique for opIn and opNotIn
}

func (r requirement) matches(labels map[string]string) bool {
	v, ok := labels[r.key]
	switch r.op {
	case opEquals:
		return ok && v == r.values[0]
	case opNotEquals:
		return !ok || v != r.values[0]
	case opIn:
		return ok && slices.Contains(r.values, v)
	case opNotIn:
		return !ok || !slices.Contains(r.values, v)
	case opExists:
		return ok
	default: // opNotExists
		return !ok
	}
}

func (r requirement) String() string {
	switch r.op {
	case opEquals:
		return r.key + "=" + r.values[0]
	case opNotEquals:
		return r.key + "!=" + r.values[0]
	case opIn:
		return r.key + " in (" + strings.Join(r.values, ",") + ")"
	case opNotIn:
		return r.key + " notin (" + strings.Join(r.values, ",") + ")"
	case opExists:
		return r.key
	default:
		return "!" + r.key
	}
}

// labelSelector is a conjunction of requirements in canonical order.
type labelSelector struct {
	reqs []requirement
	text string
}

func newLabelSelector(reqs []requirement) labelSelector {
	slices.SortFunc(reqs, func(a, b requirement) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := int(a.op) - int(b.op); c != 0 {
			return c
		}
		return slices.Compare(a.values, b.values)
	})
	reqs = slices.CompactFunc(reqs, func(a, b requirement) bool {
		return a.key == b.key && a.op == b.op && slices.Equal(a.values, b.values)
	})
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.String()
	}
	return labelSelector{reqs: reqs, text: strings.Join(parts, ",")}
}

func (s labelSelector) Matches(labels map[string]string) bool {
	for _, r := range s.reqs {
		if !r.matches(labels) {
			return false
		}
	}
	return true
}

func (s labelSelector) String() string { return s.text }

// selectorParser is a hand-written recursive-descent parser over src.
type selectorParser struct {
	src string
	pos int
}

func (p *selectorParser) parse() ([]requirement, error) {
	var reqs []requirement
	p.skipSpace()
	if p.pos == len(p.src) {
		return nil, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
		p.skipSpace()
		if p.pos == len(p.src) {
			return reqs, nil
		}
		if p.src[p.pos] != ',' {
			return nil, p.errorf("want ',' or the end")
		}
		p.pos++
	}
}

func (p *selectorParser) requirement() (requirement, error) {
	p.skipSpace()
	if p.peek() == '!' {
		p.pos++
		p.skipSpace()
		key, err := p.key()
		return requirement{key: key, op: opNotExists}, err
	}
	key, err := p.key()
	if err != nil {
		return requirement{}, err
	}
	p.skipSpace()
	r := requirement{key: key}
	switch rest := p.src[p.pos:]; {
	case rest == "" || rest[0] == ',':
		r.op = opExists
		return r, nil
	case strings.HasPrefix(rest, "!="):
		p.pos += 2
		r.op = opNotEquals
	case strings.HasPrefix(rest, "=="):
		p.pos += 2
	case rest[0] == '=':
		p.pos++
	case p.word("notin"):
		r.op = opNotIn
		r.values, err = p.list()
		return r, err
	case p.word("in"):
		r.op = opIn
		r.values, err = p.list()
		return r, err
	default:
		return r, p.errorf("want an operator (=, ==, !=, in, notin), ',' or the end after key %q", key)
	}
	p.skipSpace()
	r.values = []string{p.value()}
	return r, nil
}

// word consumes w if it is followed by a space or '('.
func (p *selectorParser) word(w string) bool {
	rest := p.src[p.pos:]
	if !strings.HasPrefix(rest, w) || len(rest) == len(w) || (rest[len(w)] != ' ' && rest[len(w)] != '(') {
		return false
	}
	p.pos += len(w)
	return true
}

// list reads "(v1, v2, ...)" and returns its values sorted and unique.
func (p *selectorParser) list() ([]string, error) {
	p.skipSpace()
	if p.peek() != '(' {
		return nil, p.errorf("want '(' to open a value list")
	}
	p.pos++
	var vals []string
	for {
		p.skipSpace()
		v := p.value()
		if v == "" {
			return nil, p.errorf("want a non-empty value in the list")
		}
		vals = append(vals, v)
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
			p.pos++
			slices.Sort(vals)
			return slices.Compact(vals), nil
		default:
			return nil, p.errorf("want ',' or ')' in the value list")
		}
	}
}

func (p *selectorParser) key() (string, error) {
	start := p.pos
	for p.pos < len(p.src) && (isValueChar(p.src[p.pos]) || p.src[p.pos] == '/') {
		p.pos++
	}
	if p.pos == start {
		return "", p.errorf("want a label key (letters, digits, '.', '-', '_', '/')")
	}
	return p.src[start:p.pos], nil
}

func (p *selectorParser) value() string {
	start := p.pos
	for p.pos < len(p.src) && isValueChar(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

func (p *selectorParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *selectorParser) skipSpace() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *selectorParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at offset %d: "+format, append([]any{p.pos}, args...)...)
}

func isValueChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '.' || c == '-' || c == '_'
}
