package ownership

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/steady-go/steady/internal/pathname"
)

// Strategy says how a list or map merges. The zero Strategy is the default:
// maps granular, lists atomic.
type Strategy struct {
	kind strategyKind
	keys []string
}

type strategyKind uint8

const (
	stratDefault strategyKind = iota
	stratAtomic
	stratGranular
	stratSet
	stratKeyed
)

// Atomic makes a list or map one value: an apply replaces it whole, and one
// manager owns it whole. Lists are atomic unless the schema says otherwise.
func Atomic() Strategy { return Strategy{kind: stratAtomic} }

// Granular makes a map merge key by key, each key owned on its own. Maps
// are granular unless the schema says otherwise.
func Granular() Strategy { return Strategy{kind: stratGranular} }

// AsSet makes a list of scalars a set: items are identified by value, and
// each manager owns the items it applies.
func AsSet() Strategy { return Strategy{kind: stratSet} }

// Keyed makes a list of objects a map keyed by the given fields, in order:
// items are identified by their key values and merge field by field, like
// Kubernetes' associative lists. Keyed with no keys is invalid.
func Keyed(keys ...string) Strategy {
	return Strategy{kind: stratKeyed, keys: append([]string(nil), keys...)}
}

// String names the strategy as a struct tag would: "atomic", "granular",
// "set", "keys=a,b" or "default".
func (s Strategy) String() string {
	switch s.kind {
	case stratAtomic:
		return "atomic"
	case stratGranular:
		return "granular"
	case stratSet:
		return "set"
	case stratKeyed:
		return "keys=" + strings.Join(s.keys, ",")
	}
	return "default"
}

// Schema says, per path, how lists and maps merge. A nil *Schema is valid
// and gives the defaults everywhere: maps granular, lists atomic.
//
// Build one with NewSchema from path patterns, or with SchemaFor from
// struct tags. A Schema is immutable and safe for concurrent use; build it
// once and reuse it.
type Schema struct {
	root *snode
}

// snode is the strategy at one path and the schemas below it.
type snode struct {
	strat  Strategy
	fields map[string]*snode // by field name
	elem   *snode            // list items and map values not in fields
}

func (n *snode) field(name string) *snode {
	if n == nil {
		return nil
	}
	if c, ok := n.fields[name]; ok {
		return c
	}
	return n.elem
}

func (n *snode) item() *snode {
	if n == nil {
		return nil
	}
	return n.elem
}

func (n *snode) strategy() strategyKind {
	if n == nil {
		return stratDefault
	}
	return n.strat.kind
}

// itemKind is the element kind of the items of a set (elemValue) or a
// keyed list (elemKey).
func (n *snode) itemKind() uint8 {
	if n.strategy() == stratSet {
		return elemValue
	}
	return elemKey
}

func (s *Schema) top() *snode {
	if s == nil {
		return nil
	}
	return s.root
}

// NewSchema builds a schema from rules keyed by path pattern. A pattern is
// a diff path of fields (".spec.ports", `.metadata.annotations["a.b"]`) in
// which "[*]" stands for every item of a list or every value of a map:
// ".spec.containers[*].ports". At each level a named field's rules replace
// those of "[*]": with rules for ".m[*].a" and ".m.x.b", the path ".m.x.a"
// has the default strategy.
//
// It returns an error for a malformed pattern, for Keyed without keys or
// with a key listed twice, and for two rules on one pattern.
func NewSchema(rules map[string]Strategy) (*Schema, error) {
	root := &snode{}
	for pat, st := range rules {
		if st.kind == stratKeyed && len(st.keys) == 0 {
			return nil, fmt.Errorf("ownership: schema rule %q: Keyed needs at least one key", pat)
		}
		for i, k := range st.keys {
			if slices.Contains(st.keys[:i], k) {
				return nil, fmt.Errorf("ownership: schema rule %q: key field %q listed twice", pat, k)
			}
		}
		segs, err := parsePattern(pat)
		if err != nil {
			return nil, err
		}
		n := root
		for _, seg := range segs {
			if seg == nil {
				if n.elem == nil {
					n.elem = &snode{}
				}
				n = n.elem
				continue
			}
			if n.fields == nil {
				n.fields = map[string]*snode{}
			}
			c, ok := n.fields[*seg]
			if !ok {
				c = &snode{}
				n.fields[*seg] = c
			}
			n = c
		}
		if n.strat.kind != stratDefault {
			return nil, fmt.Errorf("ownership: schema rule %q given twice", pat)
		}
		n.strat = st
	}
	return &Schema{root: root}, nil
}

// With returns a schema that is s with sub mounted at the field path
// prefix (a pattern as in NewSchema, without "[*]"), for example the schema
// of a Spec type under ".spec". s is not modified.
func (s *Schema) With(prefix string, sub *Schema) (*Schema, error) {
	segs, err := parsePattern(prefix)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("ownership: With needs a non-root prefix")
	}
	root := cloneShallow(s.top())
	n := root
	for i, seg := range segs {
		if seg == nil {
			return nil, fmt.Errorf("ownership: With prefix %q: [*] is not allowed", prefix)
		}
		if i == len(segs)-1 {
			if sub.top() == nil {
				delete(n.fields, *seg)
			} else {
				n.fields[*seg] = sub.top()
			}
			break
		}
		c := cloneShallow(n.fields[*seg])
		n.fields[*seg] = c
		n = c
	}
	return &Schema{root: root}, nil
}

func cloneShallow(n *snode) *snode {
	c := &snode{fields: map[string]*snode{}}
	if n != nil {
		c.strat, c.elem = n.strat, n.elem
		maps.Copy(c.fields, n.fields)
	}
	return c
}

// parsePattern splits a pattern into field names; nil stands for "[*]".
func parsePattern(pat string) ([]*string, error) {
	bad := func(at int, why string) error {
		return fmt.Errorf("ownership: invalid schema pattern %q at offset %d: %s", pat, at, why)
	}
	if pat == "." || pat == "" {
		return nil, nil
	}
	var segs []*string
	for i := 0; i < len(pat); {
		switch {
		case strings.HasPrefix(pat[i:], "[*]"):
			segs = append(segs, nil)
			i += 3
		case pat[i] == '.':
			j := i + 1
			for j < len(pat) && pat[j] != '.' && pat[j] != '[' {
				j++
			}
			name := pat[i+1 : j]
			if name == "*" {
				segs = append(segs, nil)
			} else if !pathname.IsIdent(name) {
				return nil, bad(i, "expected a field name")
			} else {
				segs = append(segs, &name)
			}
			i = j
		case strings.HasPrefix(pat[i:], `["`):
			q, err := strconv.QuotedPrefix(pat[i+1:])
			if err != nil || !strings.HasPrefix(pat[i+1+len(q):], "]") {
				return nil, bad(i, `expected ["name"]`)
			}
			name, _ := strconv.Unquote(q)
			segs = append(segs, &name)
			i += len(q) + 2
		default:
			return nil, bad(i, `expected ".name", ["name"] or [*]`)
		}
	}
	return segs, nil
}
