package ownership

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/jsonscan"
)

// A tree is the JSON-like form the engine works on: map[string]any, []any,
// string, bool, float64 (or float32), any Go integer type, json.Number, and
// nil. Numbers compare by value (see number), so int64(1), 1.0 and
// json.Number("1") are equal, and uint64(1<<63+1) and 1<<63 are not.

// valueKind classifies a tree node.
type valueKind uint8

const (
	kindNull valueKind = iota
	kindScalar
	kindMap
	kindList
	kindInvalid
)

func kindOf(v any) valueKind {
	switch v.(type) {
	case nil:
		return kindNull
	case map[string]any:
		return kindMap
	case []any:
		return kindList
	case string, bool, float64, int64, int, json.Number, float32,
		int8, int16, int32, uint, uint8, uint16, uint32, uint64:
		return kindScalar
	}
	return kindInvalid
}

// number is a normalized numeric scalar, for comparison by value: an
// integer within int64 (class 'i') or beyond it within uint64 ('u') is
// exact, and any other value is the float64 encoding/json reads it as
// ('f': not an integer, or beyond 64 bits). Each value has one form, so 1,
// 1.0, 1e0 and json.Number("1") are one number, and so are -0 and 0, while
// uint64(1<<63+1) and float64(1<<63) differ. Text written with a fraction
// or an exponent is read as a float64 first (json.Number("1e3") is 1000,
// as encoding/json reads it into a float64 field), and an integral float64
// is the integer its JSON text is (see normFloat), so that a value and its
// encoding compare equal.
type number struct {
	class byte
	i     int64
	u     uint64
	f     float64
}

// toNumber normalizes a numeric scalar; ok is false for non-numbers and
// malformed json.Numbers.
func toNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int64:
		return number{class: 'i', i: x}, true
	case float64:
		return normFloat(x), true
	case int:
		return number{class: 'i', i: int64(x)}, true
	case json.Number:
		return textNumber(string(x))
	case float32:
		return normFloat(float64(x)), true
	}
	return sizedNumber(v)
}

// textNumber is toNumber of a number's text: an integer written in digits
// within int64 or uint64 exactly, anything else as the float64 it reads as.
func textNumber(s string) (number, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return number{class: 'i', i: i}, true
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return normUint(u), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return number{}, false
	}
	return normFloat(f), true
}

// sizedNumber is toNumber for the sized integer types, which typed
// values give and decoded JSON does not.
func sizedNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int8:
		return number{class: 'i', i: int64(x)}, true
	case int16:
		return number{class: 'i', i: int64(x)}, true
	case int32:
		return number{class: 'i', i: int64(x)}, true
	case uint:
		return normUint(uint64(x)), true
	case uint8:
		return number{class: 'i', i: int64(x)}, true
	case uint16:
		return number{class: 'i', i: int64(x)}, true
	case uint32:
		return number{class: 'i', i: int64(x)}, true
	case uint64:
		return normUint(x), true
	}
	return number{}, false
}

func normUint(u uint64) number {
	if u > math.MaxInt64 {
		return number{class: 'u', u: u}
	}
	return number{class: 'i', i: int64(u)}
}

// normFloat turns integral floats within int64 or uint64 into integers, so
// that 1 and 1.0 have one form (and -0 is 0). Beyond 2^53, where a float64's
// JSON text (the shortest that reads back as it) is not its exact value, the
// integer is the text's: float64(1<<63+2048) is 9223372036854778000, as
// stored, and the tree and its JSON compare equal.
func normFloat(f float64) number {
	switch {
	case f != math.Trunc(f) || math.IsInf(f, 0): // NaN too
	case f > -(1<<53) && f < 1<<53:
		return number{class: 'i', i: int64(f)}
	case f >= -(1<<63) && f < 1<<64:
		return wideFloat(f)
	}
	return number{class: 'f', f: f}
}

// wideFloat is normFloat of an integral f in [-2^63, 2^64) beyond 2^53: the
// integer its JSON text, in digits below 1e21, is.
func wideFloat(f float64) number {
	var buf [24]byte
	text := strconv.AppendFloat(buf[:0], f, 'f', -1, 64)
	if i, err := strconv.ParseInt(string(text), 10, 64); err == nil {
		return number{class: 'i', i: i}
	}
	u, _ := strconv.ParseUint(string(text), 10, 64) // the shortest text of f < 2^64 is below 2^64
	return normUint(u)
}

func (n number) equal(m number) bool {
	if n.class != m.class {
		return false
	}
	switch n.class {
	case 'i':
		return n.i == m.i
	case 'u':
		return n.u == m.u
	}
	return n.f == m.f || (math.IsNaN(n.f) && math.IsNaN(m.f))
}

func (n number) appendText(b []byte) []byte {
	switch n.class {
	case 'i':
		return strconv.AppendInt(b, n.i, 10)
	case 'u':
		return strconv.AppendUint(b, n.u, 10)
	}
	switch {
	case math.IsNaN(n.f):
		return append(b, "NaN"...)
	case math.IsInf(n.f, 1):
		return append(b, "+Inf"...)
	case math.IsInf(n.f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, n.f, 'g', -1, 64)
}

// scalarEqual compares two scalars (or nils) semantically.
func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case int64:
		if y, ok := b.(int64); ok { // the common number: no normalizing
			return x == y
		}
	}
	n, ok := toNumber(a)
	if !ok {
		return false
	}
	m, ok := toNumber(b)
	return ok && n.equal(m)
}

// deepEqual compares two trees semantically (numbers by value). budget is
// how many nested maps and lists a may hold, itself included: past it
// deepEqual reports false, so that a cycle ends; callers then find the
// tree too deep with validTree, given the same budget. It inlines, so
// that comparing scalars, the common case, costs no call of its own.
func deepEqual(a, b any, budget int) bool {
	switch a.(type) {
	case map[string]any, []any:
		return treeEqual(a, b, budget)
	}
	return scalarEqual(a, b)
}

// treeEqual is deepEqual of a map or list a.
func treeEqual(a, b any, budget int) bool {
	if budget <= 0 {
		return false
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !deepEqual(xv, yv, budget-1) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !deepEqual(x[i], y[i], budget-1) {
				return false
			}
		}
		return true
	}
	return false
}

// appendScalarText appends the canonical text of a scalar as it appears in
// a path element: a quoted string, a normalized number, true, false or null.
func appendScalarText(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		if plainASCII(x) {
			b = append(b, '"')
			b = append(b, x...)
			return append(b, '"'), nil
		}
		return strconv.AppendQuote(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case nil:
		return append(b, "null"...), nil
	}
	n, ok := toNumber(v)
	if !ok {
		return b, fmt.Errorf("%T is not a scalar", v)
	}
	return n.appendText(b), nil
}

// deepCopy copies a tree so that the copy shares no map or slice with v.
// Scalars are normalized as Decode gives them (see jsonscan.Number), so that
// encoding the copy writes each integer as it was: the integer types become
// int64, or uint64 beyond int64; float32 becomes float64; a json.Number
// becomes int64 or float64 unless it is an integer an int64 would not write
// back as it is (-0, beyond int64, 1e3), which stays as it is.
//
// It copies MaxDepth nested maps and lists; one nested deeper (or held by
// itself) is returned as it is, shared, so that the copy ends.
func deepCopy(v any) any { return deepCopyAt(v, MaxDepth) }

// deepCopyAt is deepCopy of a value that may hold budget more nested maps
// and lists, itself included.
func deepCopyAt(v any, budget int) any {
	switch x := v.(type) {
	case map[string]any:
		if budget <= 0 {
			return x
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopyAt(e, budget-1)
		}
		return m
	case []any:
		if budget <= 0 {
			return x
		}
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopyAt(e, budget-1)
		}
		return l
	case string, bool, nil, int64, float64:
		return v
	case json.Number:
		if jsonscan.IsNumber(string(x)) {
			if n, ok := jsonscan.Number(string(x)); ok {
				return n
			}
		}
	}
	n, ok := toNumber(v)
	switch {
	case !ok:
		return v
	case n.class == 'i':
		return n.i
	case n.class == 'u':
		return n.u
	}
	return n.f
}

// DeepCopy returns a copy of the tree v that shares no map or slice with it.
// Numbers of other Go types become int64, uint64 (integers beyond int64) or
// float64, and a json.Number stays one only where it holds an integer that
// int64 would write otherwise (-0, beyond int64, 1e3), so that encoding the
// copy keeps every integer's value and text. Values that are not tree nodes
// are returned as they are. DeepCopy has no error to return: it copies
// MaxDepth maps and lists, each inside the one before, and returns a map or
// list nested deeper as it is, shared with v, rather than overflow the
// stack; so a tree that holds itself is copied to MaxDepth and then
// shared. (Apply and Update, which copy what they take from a config, first
// refuse trees nested deeper than MaxDepth: see ErrTooDeep.)
func DeepCopy(v any) any { return deepCopy(v) }

// ToTree converts a typed value into a tree by encoding it with
// encoding/json and decoding the result. The fields present after encoding
// are the fields an Apply claims: a field tagged omitempty is left out (and
// so not claimed) when it is the zero value, and a nil pointer encodes as
// null, which Apply treats as absent. To apply an explicit zero for an
// optional field, make it a pointer with omitempty: nil leaves the field
// unclaimed, a pointer to 0 claims it with the value 0.
//
// Numbers decode as DeepCopy leaves them: integers as int64, or as
// json.Number where int64 would change their text (beyond int64, -0, 1e3),
// other numbers as float64. A tree (a
// map[string]any) is returned as it is. ToTree returns an error if v cannot
// be encoded as JSON or does not encode as a JSON object or null.
func ToTree(v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("ownership: encoding %T: %w", v, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("ownership: decoding %T: %w", v, err)
	}
	switch x := deepCopy(out).(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x, nil
	default:
		return nil, fmt.Errorf("ownership: %T encodes as JSON %T, not an object", v, out)
	}
}

// plainASCII reports whether strconv.Quote(s) is s between double quotes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// validTree checks that v holds only tree node types, and no more than
// budget nested maps and lists, itself included (see MaxDepth). Its
// *depthError holds the path below v where that ran out.
func validTree(v any, budget int) error {
	switch x := v.(type) {
	case map[string]any:
		if budget <= 0 {
			return &depthError{}
		}
		for k, e := range x {
			if err := validTree(e, budget-1); err != nil {
				return below(err, diff.Element{Kind: diff.FieldElem, Name: k})
			}
		}
	case []any:
		if budget <= 0 {
			return &depthError{}
		}
		for i, e := range x {
			if err := validTree(e, budget-1); err != nil {
				return below(err, diff.Element{Kind: diff.IndexElem, Index: i})
			}
		}
	default:
		if kindOf(v) == kindInvalid {
			return fmt.Errorf("unsupported value of type %T", v)
		}
	}
	return nil
}

// MaxDepth is how many maps and lists, each inside the one before, a tree
// given to Apply, Update or NewCodec may nest: as many as encoding/json
// reads, so that every tree it decodes is accepted. Apply and Update
// return an error wrapping ErrTooDeep for a deeper one, and so for a map
// or list that holds itself (which no JSON gives), instead of following
// it until the goroutine's stack overflows, which would end the process.
const MaxDepth = 10000

// ErrTooDeep is wrapped by the error Apply and Update return for a tree
// nested deeper than MaxDepth maps and lists.
var ErrTooDeep = errors.New("tree nested deeper than 10000 maps and lists (MaxDepth): too deep, or it holds itself")

// depthError is validTree's error for a tree too deep: rel is the path
// from the value it was given to the map or list past the budget, collected
// on the way out, innermost first.
type depthError struct{ rel []diff.Element }

func (e *depthError) Error() string { return ErrTooDeep.Error() }

// below adds elem, the step from a value to its child that err is about,
// to a *depthError's path.
func below(err error, elem diff.Element) error {
	if de, ok := err.(*depthError); ok {
		de.rel = append(de.rel, elem)
	}
	return err
}

// treeError returns validTree's error for the value at path p.
func treeError(p diff.Path, err error) error {
	de, ok := err.(*depthError)
	if !ok {
		return errorf(p, "%v", err)
	}
	full := slices.Grow(slices.Clip(p), len(de.rel))
	for i := len(de.rel) - 1; i >= 0; i-- {
		full = append(full, de.rel[i])
	}
	return tooDeep(full)
}

// tooDeep is the error for a map or list at path p, past MaxDepth. A long
// path is shortened to its ends: the first elements show where a cycle
// starts.
func tooDeep(p diff.Path) error {
	const ends = 8
	if len(p) <= 3*ends {
		return fmt.Errorf("ownership: %s: %w", p, ErrTooDeep)
	}
	var tail strings.Builder
	for _, e := range p[len(p)-ends:] {
		tail.WriteString(e.String())
	}
	return fmt.Errorf("ownership: %s ...(%d more elements)... %s: %w", p[:ends], len(p)-2*ends, tail.String(), ErrTooDeep)
}

// appendKeyText appends a keyed list item's element name: its key fields,
// as name=value pairs separated by commas.
func appendKeyText(b []byte, m map[string]any, keys []string) ([]byte, error) {
	for i, k := range keys {
		v, ok := m[k]
		if !ok || v == nil {
			return b, &keyError{k, "missing"}
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendName(b, k)
		b = append(b, '=')
		var err error
		if b, err = appendScalarText(b, v); err != nil {
			return b, &keyError{k, "not a scalar"}
		}
	}
	return b, nil
}

// appendItemName appends the element name of item it of a set or keyed
// list of schema sch: the canonical text of a set item, the key fields of
// a keyed item. An item without an identity is an error.
func appendItemName(b []byte, it any, sch *snode) ([]byte, error) {
	if sch.strategy() == stratSet {
		if kindOf(it) != kindScalar {
			return b, fmt.Errorf("set item of type %T is not a scalar", it)
		}
		return appendScalarText(b, it)
	}
	m, ok := it.(map[string]any)
	if !ok {
		return b, fmt.Errorf("keyed list item of type %T is not an object", it)
	}
	return appendKeyText(b, m, sch.strat.keys)
}

// itemNames returns the element names of the items of list l of schema
// sch ("" for an item without an identity) and the first item's error;
// buf is scratch.
func itemNames(buf *[]byte, l []any, sch *snode) ([]string, error) {
	names := make([]string, len(l))
	var first error
	for i, it := range l {
		var err error
		if *buf, err = appendItemName((*buf)[:0], it, sch); err == nil {
			names[i] = string(*buf)
		} else if first == nil {
			first = err
		}
	}
	return names, first
}

type keyError struct{ key, why string }

func (e *keyError) Error() string { return "list item key field " + e.key + " is " + e.why }

// keyValue is a map entry.
type keyValue struct {
	k string
	v any
}

// sortKeyValues sorts map entries by key. Fast path
// (BenchmarkApplySecondManager: ≤ 30 µs; BenchmarkEncodeThreeManagers): by
// insertion for the few entries of a typical map, which beats a generic
// sort's indirect calls.
func sortKeyValues(kv []keyValue) {
	if len(kv) > 12 {
		slices.SortFunc(kv, func(a, b keyValue) int { return strings.Compare(a.k, b.k) })
		return
	}
	for i := 1; i < len(kv); i++ {
		for j := i; j > 0 && kv[j].k < kv[j-1].k; j-- {
			kv[j], kv[j-1] = kv[j-1], kv[j]
		}
	}
}

// itemRef is a list item by element name and position.
type itemRef struct {
	name string
	idx  int
}
