package diff

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/internal/pathname"
)

// PathError reports why ParsePath rejected its input, and where.
type PathError struct {
	// Path is the input as given.
	Path string
	// Offset is the byte offset in Path where the problem was found.
	Offset int
	// Reason says what was expected or what is wrong.
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("diff: invalid path %q at offset %d: %s", e.Path, e.Offset, e.Reason)
}

// ParsePath parses the notation described on Path. It accepts the canonical
// spelling that Path.String produces, and a few others that String
// normalizes: a quoted field name that needs no quotes (["spec"]), a path
// starting with "[" instead of ".[", and numbers in any JSON spelling (1.0 is
// the integer 1). The root is ".". Errors are *PathError, giving the offset
// and the reason.
func ParsePath(s string) (Path, error) {
	p := pathParser{s: s}
	path, err := p.parse()
	if err != nil {
		return nil, err
	}
	return path, nil
}

// MustParsePath is ParsePath for paths known to be valid, such as literals in
// code. It panics if s does not parse.
func MustParsePath(s string) Path {
	p, err := ParsePath(s)
	if err != nil {
		panic(err)
	}
	return p
}

type pathParser struct {
	s string
	i int
}

func (p *pathParser) errorf(at int, format string, args ...any) error {
	return &PathError{Path: p.s, Offset: at, Reason: fmt.Sprintf(format, args...)}
}

func (p *pathParser) parse() (Path, error) {
	s := p.s
	switch {
	case s == "":
		return nil, p.errorf(0, `empty path; the root is "."`)
	case s == ".":
		return Path{}, nil
	case s[0] != '.' && s[0] != '[':
		return nil, p.errorf(0, `a path starts with "." or "[", not %q`, s[0])
	}
	// At most one element per "." or "[": one allocation.
	path := make(Path, 0, strings.Count(s, ".")+strings.Count(s, "["))
	if strings.HasPrefix(s, ".[") {
		p.i = 1
	}
	for p.i < len(s) {
		var (
			e   Element
			err error
		)
		switch s[p.i] {
		case '.':
			e, err = p.field()
		case '[':
			e, err = p.bracket()
		default:
			err = p.errorf(p.i, `unexpected %q; expected "." or "["`, s[p.i])
		}
		if err != nil {
			return nil, err
		}
		path = append(path, e)
	}
	return path, nil
}

// field parses ".name" at p.i.
func (p *pathParser) field() (Element, error) {
	start := p.i + 1
	end := scanIdent(p.s, start)
	if end == start {
		if start < len(p.s) && p.s[start] == '[' {
			return Element{}, p.errorf(p.i, `".[" only starts a path; write "[" right after the previous element`)
		}
		if start == len(p.s) {
			return Element{}, p.errorf(start, `expected a field name after "."`)
		}
		return Element{}, p.errorf(start, `expected a field name after "."; names that are not identifiers are quoted: [%q]`, p.s[start:])
	}
	name := p.s[start:end]
	if !pathname.IsIdent(name) {
		return Element{}, p.errorf(start, "field name %q must be quoted: [%q]", name, name)
	}
	p.i = end
	return Element{Kind: FieldElem, Name: name}, nil
}

// scanIdent returns the end of the run of identifier bytes at i.
func scanIdent(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			i++
			continue
		}
		break
	}
	return i
}

// bracket parses one of ["name"], [k=v,...], [=v], [n] at p.i.
func (p *pathParser) bracket() (Element, error) {
	open := p.i
	p.i++
	if p.i >= len(p.s) {
		return Element{}, p.errorf(open, `unterminated "["`)
	}
	switch c := p.s[p.i]; {
	case c == ']':
		return Element{}, p.errorf(open, `empty "[]"; expected ["name"], [key=value], [=value] or [index]`)
	case c == '=':
		p.i++
		return p.setValue()
	case c >= '0' && c <= '9':
		return p.index()
	case c == '-':
		return Element{}, p.errorf(p.i, "an index is a non-negative integer")
	case c == '"':
		name, err := p.quoted()
		if err != nil {
			return Element{}, err
		}
		if p.eat(']') {
			return Element{Kind: FieldElem, Name: name}, nil
		}
		return p.keys(open, name)
	}
	end := scanIdent(p.s, p.i)
	name := p.s[p.i:end]
	if end == p.i || !pathname.IsIdent(name) {
		return Element{}, p.errorf(p.i, `expected a quoted name, a key field, "=" or an index after "["`)
	}
	p.i = end
	return p.keys(open, name)
}

// setValue parses the rest of [=v] after the "=".
func (p *pathParser) setValue() (Element, error) {
	v, err := p.scalar()
	if err != nil {
		return Element{}, err
	}
	if err := p.expect(']'); err != nil {
		return Element{}, err
	}
	return Element{Kind: ValueElem, Value: v}, nil
}

// index parses the rest of [n] at its first digit.
func (p *pathParser) index() (Element, error) {
	end := p.i
	for end < len(p.s) && p.s[end] >= '0' && p.s[end] <= '9' {
		end++
	}
	if end == len(p.s) || p.s[end] != ']' {
		return Element{}, p.errorf(end, `expected "]" after index %s`, p.s[p.i:end])
	}
	n, err := strconv.Atoi(p.s[p.i:end])
	if err != nil {
		return Element{}, p.errorf(p.i, "index %s out of range", p.s[p.i:end])
	}
	p.i = end + 1
	return Element{Kind: IndexElem, Index: n}, nil
}

// eat consumes byte c if it comes next, and reports whether it did.
func (p *pathParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// keys parses the rest of [k=v,...] after the first key name.
func (p *pathParser) keys(open int, name string) (Element, error) {
	var keys []KeyField
	for {
		if err := p.expect('='); err != nil {
			return Element{}, err
		}
		v, err := p.scalar()
		if err != nil {
			return Element{}, err
		}
		for _, k := range keys {
			if k.Name == name {
				return Element{}, p.errorf(open, "key field %q appears twice", name)
			}
		}
		keys = append(keys, KeyField{Name: name, Value: v})
		if p.eat(']') {
			return Element{Kind: KeyElem, Keys: keys}, nil
		}
		if err := p.expect(','); err != nil {
			return Element{}, p.errorf(p.i, `expected "," or "]" after a key value`)
		}
		if p.i < len(p.s) && p.s[p.i] == '"' {
			if name, err = p.quoted(); err != nil {
				return Element{}, err
			}
			continue
		}
		end := scanIdent(p.s, p.i)
		name = p.s[p.i:end]
		if !pathname.IsIdent(name) {
			return Element{}, p.errorf(p.i, "expected a key field name")
		}
		p.i = end
	}
}

func (p *pathParser) expect(c byte) error {
	if p.eat(c) {
		return nil
	}
	if p.i >= len(p.s) {
		return p.errorf(p.i, "expected %q, found the end", c)
	}
	return p.errorf(p.i, "expected %q, found %q", c, p.s[p.i])
}

// quoted parses a Go-syntax double-quoted string at p.i.
func (p *pathParser) quoted() (string, error) {
	start := p.i
	for j := start + 1; j < len(p.s); j++ {
		switch p.s[j] {
		case '\\':
			j++
		case '\n':
			return "", p.errorf(j, "newline in quoted string")
		case '"':
			v, err := strconv.Unquote(p.s[start : j+1])
			if err != nil {
				return "", p.errorf(start, "invalid quoted string %s", p.s[start:j+1])
			}
			p.i = j + 1
			return v, nil
		}
	}
	return "", p.errorf(start, "unterminated quoted string")
}

// scalar parses a key or set value at p.i: a quoted string, a JSON number,
// true, false, null, NaN, +Inf or -Inf.
func (p *pathParser) scalar() (any, error) {
	if p.i >= len(p.s) {
		return nil, p.errorf(p.i, "expected a value, found the end")
	}
	rest := p.s[p.i:]
	for _, lit := range [...]struct {
		text string
		v    any
	}{{"null", nil}, {"true", true}, {"false", false}} {
		if len(rest) >= len(lit.text) && rest[:len(lit.text)] == lit.text {
			p.i += len(lit.text)
			return lit.v, nil
		}
	}
	switch c := rest[0]; {
	case c == '"':
		return p.quoted()
	case c == '-' || c == '+' || c == 'N' || c >= '0' && c <= '9':
		end := scanNumber(p.s, p.i)
		v, err := parseNumber(p.s[p.i:end])
		if err != nil {
			return nil, p.errorf(p.i, "%v", err)
		}
		p.i = end
		return v, nil
	}
	return nil, p.errorf(p.i, "expected a value (a quoted string, a number, true, false or null)")
}

// scanNumber returns the end of the run of bytes that may belong to a number
// at i; parseNumber checks the grammar.
func scanNumber(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E',
			c == 'N', c == 'a', c == 'I', c == 'n', c == 'f':
			i++
		default:
			return i
		}
	}
	return i
}

var errNumber = errors.New("invalid number")

// parseNumber parses a JSON number, or NaN, +Inf, -Inf, into an int64 when
// integral and in range, a uint64 when integral beyond int64 and within
// uint64, else a float64.
func parseNumber(s string) (any, error) {
	switch s {
	case "NaN", "+Inf", "-Inf":
		f, _ := strconv.ParseFloat(s, 64)
		return f, nil
	}
	if !jsonscan.IsNumber(s) {
		return nil, fmt.Errorf("%w %q", errNumber, s)
	}
	n, f, isInt, ok := jsonscan.ParseNumber(s)
	switch {
	case !ok:
		return nil, fmt.Errorf("number %s out of range", s)
	case isInt:
		return n, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil // beyond int64, where a float64 would round it
	}
	return normalizeFloat(f), nil
}
