package diff

import (
	"cmp"
	"math"
	"strings"
)

// Path addresses one node of a value, as a sequence of Elements. It has one
// textual notation shared by the whole library (diff, ownership, oscillation
// reports, condition messages):
//
//	.spec.replicas                           fields (and map keys that are identifiers)
//	.metadata.labels["app.kubernetes.io/name"]  a map key that needs quoting
//	.items[name="x"].v                       a list item keyed by one field
//	.ports[port=80,protocol="TCP"]           a list item keyed by several fields
//	.tags[="a"]                              a set item, by value
//	.args[2]                                 a list position (atomic lists, diffs)
//
// The empty Path is the root and formats as ".". A path whose first element
// is not a field starts with ".[", as in ".[0].name".
//
// A field name is written after a dot when it is a plain identifier: an ASCII
// letter or underscore followed by ASCII letters, digits, underscores or
// hyphens. Any other name (empty, with dots, slashes, spaces, non-ASCII
// letters...) is written quoted in brackets, ["like this"]. Strings are quoted
// with Go syntax (strconv.Quote), which is JSON's for printable text and also
// keeps invalid UTF-8 byte for byte.
//
// Key and set values are JSON scalars: a string, a bool, nil (null), or a
// number. Numbers are int64 when integral and within range, uint64 when
// integral beyond int64 and within uint64 (exact: 1<<63+1 is not 1<<63),
// float64 otherwise (NaN, +Inf and -Inf are written as such). Path methods that build elements
// normalize Go numeric types to that form; Equal and Compare compare numbers
// by value, so an Element holding float64(2) equals one holding int64(2).
//
// String and ParsePath round-trip: ParsePath(p.String()) is Equal to p for
// every valid Path, and String of a parsed path is the canonical spelling of
// the input. A Path is a plain slice: the methods that extend it return a new
// slice and never share the receiver's backing array.
type Path []Element

// ElementKind says which of the Element forms is used.
type ElementKind uint8

const (
	// FieldElem is a struct field or map key: Name.
	FieldElem ElementKind = iota + 1
	// KeyElem is a list item identified by key fields: Keys.
	KeyElem
	// ValueElem is a set item identified by its own scalar value: Value.
	ValueElem
	// IndexElem is a list position: Index.
	IndexElem
)

// Element is one step of a Path.
type Element struct {
	Kind ElementKind
	// Name is the field or map key, for FieldElem.
	Name string
	// Keys identify a list item, for KeyElem, in the order the schema lists
	// its key fields. A valid KeyElem has at least one key.
	Keys []KeyField
	// Value identifies a set item, for ValueElem: a string, bool, float64,
	// int64, or nil.
	Value any
	// Index is the position, for IndexElem. A valid index is >= 0.
	Index int
}

// KeyField is one field=value pair of a KeyElem. Value is a string, bool,
// float64, int64, or nil.
type KeyField struct {
	Name  string
	Value any
}

// String formats the path in the library's notation; the root is ".".
func (p Path) String() string {
	if len(p) == 0 {
		return "."
	}
	var b strings.Builder
	b.Grow(16 * len(p))
	for i, e := range p {
		if i == 0 && e.Kind != FieldElem {
			b.WriteByte('.')
		}
		e.appendTo(&b)
	}
	return b.String()
}

// String formats e as it appears inside a Path, for example ".spec",
// `["a.b"]`, `[name="x"]`, `[="a"]` or "[2]".
func (e Element) String() string {
	var b strings.Builder
	e.appendTo(&b)
	return b.String()
}

// Equal reports whether p and q address the same node: same length and
// pairwise Equal elements.
func (p Path) Equal(q Path) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if e, f := &p[i], &q[i]; e.Kind == FieldElem && f.Kind == FieldElem {
			// Most steps are fields: their names alone, without
			// copying the elements into Compare.
			if e.Name != f.Name {
				return false
			}
		} else if e.Compare(*f) != 0 {
			return false
		}
	}
	return true
}

// HasPrefix reports whether prefix is p itself or one of its ancestors. Every
// path has the root as a prefix.
func (p Path) HasPrefix(prefix Path) bool {
	return len(prefix) <= len(p) && p[:len(prefix)].Equal(prefix)
}

// Compare orders paths element by element, a parent before its children. It
// returns -1, 0 or +1, and 0 exactly when Equal. Elements of different kinds
// order as FieldElem < KeyElem < ValueElem < IndexElem; fields by name, keys
// field by field, values as null < false < true < numbers < strings, indexes
// by number.
func (p Path) Compare(q Path) int {
	for i := 0; i < len(p) && i < len(q); i++ {
		e, f := &p[i], &q[i]
		c := 0
		if e.Kind == FieldElem && f.Kind == FieldElem { // as in Equal
			c = strings.Compare(e.Name, f.Name)
		} else {
			c = e.Compare(*f)
		}
		if c != 0 {
			return c
		}
	}
	return cmpInt(len(p), len(q))
}

// Append returns a new path: p followed by elems.
func (p Path) Append(elems ...Element) Path {
	q := make(Path, len(p), len(p)+len(elems))
	copy(q, p)
	return append(q, elems...)
}

// Field returns a new path: p followed by the field or map key name.
func (p Path) Field(name string) Path {
	return p.Append(Element{Kind: FieldElem, Name: name})
}

// Index returns a new path: p followed by list position i.
func (p Path) Index(i int) Path {
	return p.Append(Element{Kind: IndexElem, Index: i})
}

// Key returns a new path: p followed by the list item whose key fields have
// the given values. Values are normalized as described on Path.
func (p Path) Key(keys ...KeyField) Path {
	ks := make([]KeyField, len(keys))
	for i, k := range keys {
		ks[i] = KeyField{Name: k.Name, Value: normalizeScalar(k.Value)}
	}
	return p.Append(Element{Kind: KeyElem, Keys: ks})
}

// Value returns a new path: p followed by the set item v, normalized as
// described on Path.
func (p Path) Value(v any) Path {
	return p.Append(Element{Kind: ValueElem, Value: normalizeScalar(v)})
}

// Parent returns p without its last element; the root's parent is the root.
func (p Path) Parent() Path {
	if len(p) == 0 {
		return p
	}
	return p[: len(p)-1 : len(p)-1]
}

// Equal reports whether e and f are the same step. Numbers compare by value
// (int64(2) equals float64(2), NaN equals NaN); other fields not used by the
// Kind are ignored.
func (e Element) Equal(f Element) bool {
	return e.Compare(f) == 0
}

// Compare orders elements as described on Path.Compare.
func (e Element) Compare(f Element) int {
	if e.Kind != f.Kind {
		return cmpInt(int(e.Kind), int(f.Kind))
	}
	switch e.Kind {
	case FieldElem:
		return strings.Compare(e.Name, f.Name)
	case KeyElem:
		for i := 0; i < len(e.Keys) && i < len(f.Keys); i++ {
			if c := strings.Compare(e.Keys[i].Name, f.Keys[i].Name); c != 0 {
				return c
			}
			if c := compareScalar(e.Keys[i].Value, f.Keys[i].Value); c != 0 {
				return c
			}
		}
		return cmpInt(len(e.Keys), len(f.Keys))
	case ValueElem:
		return compareScalar(e.Value, f.Value)
	case IndexElem:
		return cmpInt(e.Index, f.Index)
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scalarRank orders scalar types: null < bool < number < string < other.
func scalarRank(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case int64, uint64, float64:
		return 2
	case string:
		return 3
	}
	return 4
}

// compareScalar orders normalized scalars; see Path.Compare.
func compareScalar(a, b any) int {
	a, b = normalizeScalar(a), normalizeScalar(b)
	ra, rb := scalarRank(a), scalarRank(b)
	if ra != rb {
		return cmpInt(ra, rb)
	}
	switch x := a.(type) {
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case int64, uint64, float64:
		return compareNumber(a, b)
	case string:
		return strings.Compare(x, b.(string))
	case nil:
		return 0
	}
	return strings.Compare(formatScalar(a), formatScalar(b))
}

// compareNumber orders two normalized numbers: a uint64 is beyond every
// int64, and a float64 is not integral, or beyond both, or NaN.
func compareNumber(a, b any) int {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpInt64(x, y)
		case uint64:
			return -1
		}
		return compareFloat(float64(x), b.(float64))
	case uint64:
		switch y := b.(type) {
		case int64:
			return 1
		case uint64:
			return cmp.Compare(x, y)
		}
		return -floatVsUint(b.(float64))
	}
	switch y := b.(type) {
	case int64:
		return -compareFloat(float64(y), a.(float64))
	case uint64:
		return floatVsUint(a.(float64))
	}
	return compareFloat(a.(float64), b.(float64))
}

// floatVsUint orders a normalized float64 before or after any normalized
// uint64: the float64 is never within (MaxInt64, 2^64), where every float64
// is an integer.
func floatVsUint(f float64) int {
	if math.IsNaN(f) || f < 1<<63 {
		return -1
	}
	return 1
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareFloat orders floats with NaN first and equal to itself.
func compareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
