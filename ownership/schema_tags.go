package ownership

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// SchemaFor derives a schema from the struct tags of v's type; v may be a
// zero value or a nil pointer, only its type is used. Paths use the JSON
// names of fields (encoding/json rules: json tags, embedded structs
// flattened, "-" skipped). The tag `steady:"..."` on a field says how it
// merges:
//
//	steady:"set"                a list of scalars merged as a set
//	steady:"keys=name,protocol" a list of structs keyed by those JSON fields
//	steady:"atomic"             a list, map or struct replaced whole
//	steady:"granular"           a map merged key by key (the default)
//
// Untagged slices are atomic, maps and structs granular. SchemaFor returns
// an error for an unknown tag, "set" on a list of non-scalars, "keys" on a
// list of non-structs or naming a field the element does not have.
// Reflection is not cheap: call it once per type and keep the Schema.
func SchemaFor(v any) (*Schema, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil, fmt.Errorf("ownership: SchemaFor(nil): no type")
	}
	b := tagSchema{seen: map[reflect.Type]*snode{}}
	root, err := b.typ(t, "")
	if err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

type tagSchema struct {
	seen map[reflect.Type]*snode
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// typ returns the schema of t, or nil when t is a scalar or has nothing
// but defaults below it. at names the place for errors.
func (b *tagSchema) typ(t reflect.Type, at string) (*snode, error) {
	t = deref(t)
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return nil, nil // encodes itself; treat as opaque
	}
	switch t.Kind() {
	case reflect.Struct:
		if n, ok := b.seen[t]; ok {
			return n, nil
		}
		n := &snode{}
		b.seen[t] = n
		if err := b.fields(n, t, at); err != nil {
			return nil, err
		}
		return n, nil
	case reflect.Map:
		el, err := b.typ(t.Elem(), at+"[*]")
		if err != nil || el == nil {
			return nil, err
		}
		return &snode{elem: el}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, nil // []byte encodes as a string
		}
		el, err := b.typ(t.Elem(), at+"[*]")
		if err != nil || el == nil {
			return nil, err
		}
		return &snode{elem: el}, nil
	}
	return nil, nil
}

func (b *tagSchema) fields(n *snode, t reflect.Type, at string) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jtag := f.Tag.Get("json")
		if jtag == "-" {
			continue
		}
		name, _, _ := strings.Cut(jtag, ",")
		ft := deref(f.Type)
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			if err := b.fields(n, ft, at); err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		where := at + "." + name
		c, err := b.typ(f.Type, where)
		if err != nil {
			return err
		}
		if tag, ok := f.Tag.Lookup("steady"); ok {
			if c, err = b.tagged(c, ft, tag, where); err != nil {
				return err
			}
		}
		if c != nil {
			if n.fields == nil {
				n.fields = map[string]*snode{}
			}
			n.fields[name] = c
		}
	}
	return nil
}

// tagged applies a steady tag to the schema c of a field of type ft.
func (b *tagSchema) tagged(c *snode, ft reflect.Type, tag, where string) (*snode, error) {
	st, why := tagStrategy(ft, tag)
	if why != "" {
		return nil, fmt.Errorf("ownership: field %s: steady:%q: %s", where, tag, why)
	}
	n := &snode{strat: st}
	if c != nil {
		n.fields, n.elem = c.fields, c.elem
	}
	return n, nil
}

// tagStrategy returns the strategy steady tag tag gives a field of type
// ft, or why it cannot.
func tagStrategy(ft reflect.Type, tag string) (Strategy, string) {
	k := ft.Kind()
	isList := k == reflect.Slice || k == reflect.Array
	switch {
	case tag == "atomic":
		if !isList && k != reflect.Map && k != reflect.Struct {
			return Strategy{}, "atomic applies to lists, maps and structs"
		}
		return Atomic(), ""
	case tag == "granular":
		if k != reflect.Map && k != reflect.Struct {
			return Strategy{}, "granular applies to maps and structs"
		}
		return Granular(), ""
	case tag == "set":
		if !isList {
			return Strategy{}, "set applies to lists"
		}
		return AsSet(), badSetItems(ft.Elem())
	case strings.HasPrefix(tag, "keys="):
		if !isList || deref(ft.Elem()).Kind() != reflect.Struct {
			return Strategy{}, "keys applies to lists of structs"
		}
		keys := strings.Split(strings.TrimPrefix(tag, "keys="), ",")
		return Keyed(keys...), badKeys(deref(ft.Elem()), keys)
	}
	return Strategy{}, "unknown tag; want set, keys=..., atomic or granular"
}

// badSetItems says why items of type el cannot make a set ("" when they
// can).
func badSetItems(el reflect.Type) string {
	if !isScalar(el) {
		return "set items must be scalars"
	}
	return ""
}

// badKeys says why keys are not key fields of struct el ("" when they are).
func badKeys(el reflect.Type, keys []string) string {
	for i, k := range keys {
		kt, ok := jsonField(el, k)
		if k == "" || !ok {
			return fmt.Sprintf("%s has no field %q", el, k)
		}
		if !isScalar(kt) {
			return fmt.Sprintf("key field %q of %s is a %s; key fields must be scalars", k, el, kt)
		}
		if slices.Contains(keys[:i], k) {
			return fmt.Sprintf("key field %q listed twice", k)
		}
	}
	return ""
}

// isScalar reports whether values of t (or what it points to) are JSON
// scalars: strings, booleans or numbers.
func isScalar(t reflect.Type) bool {
	switch deref(t).Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// jsonField returns the type of t's field whose JSON name is name.
func jsonField(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jtag := f.Tag.Get("json")
		if jtag == "-" {
			continue
		}
		n, _, _ := strings.Cut(jtag, ",")
		if f.Anonymous && n == "" && deref(f.Type).Kind() == reflect.Struct {
			if ft, ok := jsonField(deref(f.Type), name); ok {
				return ft, true
			}
			continue
		}
		if n == "" {
			n = f.Name
		}
		if f.IsExported() && n == name {
			return f.Type, true
		}
	}
	return nil, false
}
