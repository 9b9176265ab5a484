package diff

// An Option changes how Diff and Hash see values. Options are values: they
// compose, can be grouped with Options, stored and reused, and are safe to
// share between goroutines. The same options given to Diff and Hash describe
// the same view of a value, so that values Diff finds equal hash equal.
//
// Options of the same kind accumulate: Ignore(a), Ignore(b) ignores both.
// When options disagree the more specific one wins as documented on each.
type Option interface {
	apply(*config)
}

// Options groups several options into one. The group is combined once,
// when Options is called, so that a group built ahead and reused costs a
// call of Diff or Hash no allocation to apply.
func Options(opts ...Option) Option {
	var g group
	for _, o := range opts {
		if o != nil {
			o.apply(&g.cfg)
		}
	}
	return &g
}

// group is the combined effect of several options.
type group struct{ cfg config }

func (g *group) apply(c *config) {
	c.only = appendShared(c.only, g.cfg.only)
	c.ignore = appendShared(c.ignore, g.cfg.ignore)
	c.lists = appendShared(c.lists, g.cfg.lists)
	c.equateEmpty = c.equateEmpty || g.cfg.equateEmpty
	c.exactNums = c.exactNums || g.cfg.exactNums
}

// appendShared appends b to a; when a is empty it returns b itself, capped
// so that a later append copies it rather than writing into the group's
// array.
func appendShared[E any](a, b []E) []E {
	if len(a) == 0 {
		return b[:len(b):len(b)]
	}
	return append(a, b...)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is the combined effect of a call's options. The zero config is the
// default view: everything compared, positional lists, numbers in trees
// compared by value.
type config struct {
	only        []Path
	ignore      []Path
	lists       []listRule
	equateEmpty bool
	exactNums   bool
}

// Only restricts Diff and Hash to the given paths and everything below them.
// With several Only options, or several paths, their union is kept. Ignore
// wins over Only: a node below both is left out.
//
// Path elements that name list items ([name="x"], [="a"], [2]) match an item
// by content whether or not the list is keyed: [name="x"] matches the items
// whose field name is "x", [="a"] the scalar items equal to "a", [2] the
// item at position 2 of a positional list.
//
// When the values on the way to an Only path differ in shape (nil against
// non-nil, a map key present on one side only, different dynamic types), Diff
// reports the change at the deepest node both sides share, since the kept
// path exists on one side only.
func Only(paths ...Path) Option {
	ps := clonePaths(paths)
	return optionFunc(func(c *config) { c.only = append(c.only, ps...) })
}

// Ignore leaves the given paths, and everything below them, out of Diff and
// Hash. Matching follows the rules given on Only. Ignoring the root ignores
// everything: Diff is empty and Hash is the hash of nothing.
func Ignore(paths ...Path) Option {
	ps := clonePaths(paths)
	return optionFunc(func(c *config) { c.ignore = append(c.ignore, ps...) })
}

// EquateEmpty makes a nil slice or map equal to an empty one of the same
// type, in typed values and in trees. Without it they differ, as null and []
// differ in JSON.
func EquateEmpty() Option {
	return optionFunc(func(c *config) { c.equateEmpty = true })
}

// ExactNumbers turns off numeric equality for values held in interfaces.
//
// By default, numbers inside interface values (JSON-like trees, fields of
// type any) compare by value, whatever their dynamic type: int(1),
// int64(1), uint8(1), float64(1.0) and json.Number("1.0") are equal, and 1
// differs from 1.5. This is what decoding the same JSON through different
// paths needs. With ExactNumbers, two numbers in interfaces are equal only if
// they have the same dynamic type and value. Typed fields always have one
// type on both sides and compare exactly.
//
// It does not change how list items are matched: the items of a set
// (ListSets) are named by their values ([=1]), so int(1) and float64(1.0)
// are one item of a set even with ExactNumbers, and the key fields of a
// keyed list (ListKeys) match by value too, the key field itself then
// compared exactly ([k=1].k: 1 → 1). Hash hashes numbers by value with or
// without it, which keeps its promise: values equal with ExactNumbers are
// equal without.
func ExactNumbers() Option {
	return optionFunc(func(c *config) { c.exactNums = true })
}

// ListKeys makes the lists at path keyed: their items are matched by the
// values of the given fields rather than by position, and changes name items
// as [name="x"] or [port=80,protocol="TCP"] instead of [2]. Items present on
// one side only are Added or Removed as a whole.
//
// path is a schema path: its field elements name the list, and list-item
// elements along the way are left out, so ListKeys(MustParsePath(
// ".spec.containers.ports"), "containerPort", "protocol") keys the ports of
// every container. Fields are found by the name Diff uses (json tag names for
// structs, keys for maps).
//
// When an item lacks a key field, or two items on one side share their keys,
// the list is compared by position instead. Struct fields can declare the
// same thing with the tag `steady:"keys=name,protocol"`, the tag the
// ownership package reads; an option wins over a tag.
func ListKeys(path Path, fields ...string) Option {
	r := listRule{path: schemaPath(path), mode: listKeyed, keys: append([]string(nil), fields...)}
	return optionFunc(func(c *config) { c.lists = append(c.lists, r) })
}

// ListSets makes the lists at the given schema paths (see ListKeys) sets of
// scalars: order and duplicates do not matter, and changes name items by
// value, as [="a"]. A list holding a non-scalar item is compared by position
// instead. The struct tag `steady:"set"` declares the same.
func ListSets(paths ...Path) Option {
	rs := make([]listRule, len(paths))
	for i, p := range paths {
		rs[i] = listRule{path: schemaPath(p), mode: listSet}
	}
	return optionFunc(func(c *config) { c.lists = append(c.lists, rs...) })
}

// listMode says how a list's items are matched.
type listMode uint8

const (
	listPositional listMode = iota
	listKeyed
	listSet
)

type listRule struct {
	path []string
	mode listMode
	keys []string
}

// schemaPath keeps the field names of p, dropping list-item elements.
func schemaPath(p Path) []string {
	names := make([]string, 0, len(p))
	for _, e := range p {
		if e.Kind == FieldElem {
			names = append(names, e.Name)
		}
	}
	return names
}

func clonePaths(paths []Path) []Path {
	out := make([]Path, len(paths))
	for i, p := range paths {
		out[i] = p.Append()
	}
	return out
}
