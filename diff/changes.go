package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ChangeKind says whether a node was added, removed or changed.
type ChangeKind uint8

const (
	// Added: the node is in got and not in want (a map key, a list item
	// beyond want's length, a keyed or set item). New holds it.
	Added ChangeKind = iota + 1
	// Removed: the node is in want and not in got. Old holds it.
	Removed
	// Changed: the node is in both with different values. Old holds want's
	// value and New got's.
	Changed
)

func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Changed:
		return "changed"
	}
	return "ChangeKind(" + strconv.Itoa(int(k)) + ")"
}

// Change is one difference between want and got.
type Change struct {
	Kind ChangeKind
	// Path is the node that differs: a slice of its own, though the Keys of
	// its key elements may be shared with other changes and must not be
	// modified.
	Path Path
	// Old is want's value at Path (nil when Added), New is got's (nil when
	// Removed). A nil pointer, slice or map is held as a typed nil, not as
	// the nil interface.
	Old, New any
}

// String formats the change on one line: ".spec.replicas: 3 → 2",
// `.metadata.labels.app: added "web"`, ".spec.paused: removed true".
// Composite values are shown as compact JSON, cut after 80 bytes with "…";
// one that holds itself shows as "<cyclic>", and one nested deeper than
// MaxDepth as "<too deep>" (encoding it would never end, or overflow the
// stack).
func (c Change) String() string {
	var b strings.Builder
	c.appendTo(&b)
	return b.String()
}

func (c Change) appendTo(b *strings.Builder) {
	b.WriteString(c.Path.String())
	b.WriteString(": ")
	switch c.Kind {
	case Added:
		b.WriteString("added ")
		b.WriteString(formatValue(c.New))
	case Removed:
		b.WriteString("removed ")
		b.WriteString(formatValue(c.Old))
	default:
		b.WriteString(formatValue(c.Old))
		b.WriteString(" → ")
		b.WriteString(formatValue(c.New))
	}
}

// Changes is the result of Diff: the differences in a stable order (struct
// fields in declaration order, map keys sorted, list items by position in
// want then in got). A nil Changes means the values are equal.
type Changes []Change

// Empty reports whether there are no changes: the values are equal under the
// options given to Diff.
func (cs Changes) Empty() bool { return len(cs) == 0 }

// Paths returns the path of each change, in order.
func (cs Changes) Paths() []Path {
	ps := make([]Path, len(cs))
	for i, c := range cs {
		ps[i] = c.Path
	}
	return ps
}

// String formats one change per line, fit for logs and condition messages;
// it is "" when there are no changes.
func (cs Changes) String() string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte('\n')
		}
		c.appendTo(&b)
	}
	return b.String()
}

const maxValueLen = 80

// formatValue shows v as in JSON, with times in RFC 3339 and long values
// cut.
func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return truncate(strconv.Quote(x))
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatFloat(x)
	case json.Number:
		return string(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return formatReflect(v)
}

// formatReflect is formatValue for the types it does not name: by kind.
func formatReflect(v any) string {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return formatFloat(rv.Float())
	case reflect.String:
		return truncate(strconv.Quote(rv.String()))
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool())
	case reflect.Struct:
		if rv.Type().ConvertibleTo(timeTyp) {
			return asTime(rv).Format(time.RFC3339Nano)
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if rv.IsNil() {
			return "null"
		}
		return "<" + rv.Type().String() + ">"
	}
	if mark := unprintable(rv); mark != "" {
		return mark
	}
	data, err := json.Marshal(v)
	if err != nil {
		return truncate(fmt.Sprintf("%v", v))
	}
	return truncate(string(data))
}

func truncate(s string) string {
	if len(s) <= maxValueLen {
		return s
	}
	cut := maxValueLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// unprintable walks v as encoding/json would encode it (struct fields as
// Diff names them) and returns "<cyclic>" when it holds itself, "<too
// deep>" when it nests more than MaxDepth maps, slices, arrays, structs and
// pointers, else "".
func unprintable(v reflect.Value) string {
	var w shapeWalk
	w.value(v)
	return w.mark
}

// shapeWalk is unprintable's walk: references on the current path are
// remembered past cycleDepth, as Hash does.
type shapeWalk struct {
	nest  int
	stack map[shapeRef]bool
	mark  string
}

// shapeRef is a reference on the path: a slice is itself only at the same
// length.
type shapeRef struct {
	p uintptr
	t reflect.Type
	n int
}

func (w *shapeWalk) value(v reflect.Value) {
	if w.mark != "" || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			w.value(v.Elem())
		}
		return
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if v.IsNil() || v.Kind() == reflect.Slice && v.Len() == 0 {
			return
		}
	case reflect.Array, reflect.Struct:
	default:
		return
	}
	if w.nest >= MaxDepth {
		w.mark = "<too deep>"
		return
	}
	w.nest++
	defer func() { w.nest-- }()
	if k := v.Kind(); w.nest > cycleDepth && (k == reflect.Pointer || k == reflect.Map || k == reflect.Slice) {
		r := shapeRef{p: v.Pointer(), t: v.Type()}
		if k == reflect.Slice {
			r.n = v.Len()
		}
		if w.stack[r] {
			w.mark = "<cyclic>"
			return
		}
		if w.stack == nil {
			w.stack = make(map[shapeRef]bool)
		}
		w.stack[r] = true
		defer delete(w.stack, r)
	}
	switch v.Kind() {
	case reflect.Pointer:
		w.value(v.Elem())
	case reflect.Map:
		it := v.MapRange()
		for it.Next() && w.mark == "" {
			w.value(it.Value())
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes
		}
		for i := 0; i < v.Len() && w.mark == ""; i++ {
			w.value(v.Index(i))
		}
	case reflect.Struct:
		p := planOf(v.Type())
		for i := range p.fields {
			if f, ok := p.fields[i].get(v); ok {
				w.value(f)
			}
		}
	}
}
