package diff

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"time"
)

// kind classifies a type once, so that walking a value is a switch on a
// small integer rather than on reflect.Kind plus special cases.
type kind uint8

const (
	kOpaque kind = iota // chan, func, unsafe.Pointer: equal when identical
	kBool
	kInt
	kUint
	kFloat
	kComplex
	kString
	kTime
	kBytes
	kStruct
	kPtr
	kSlice
	kArray
	kMap
	kIface
)

// composite reports whether k is a map, slice, array, struct or pointer:
// what counts toward MaxDepth (kStruct through kMap).
func (k kind) composite() bool { return k >= kStruct && k <= kMap }

// typePlan is everything Diff and Hash need to know about a type. Plans are
// built once per type and never change afterwards.
type typePlan struct {
	typ  reflect.Type
	kind kind
	// elem is the element of a pointer, slice or array, or a map's value.
	elem *typePlan
	// key is a map's key.
	key *typePlan
	// fields are a struct's compared fields, in declaration order with
	// embedded structs flattened as encoding/json does.
	fields []fieldPlan
	// byName indexes fields by name, for key lookups.
	byName map[string]int
	// stringKeys: a map whose keys are strings (of any named string type).
	stringKeys bool
}

// fieldPlan is one compared struct field.
type fieldPlan struct {
	name  string
	index []int // through embedded structs; len(index) == 1 for direct fields
	plan  *typePlan
	list  listSpec // from the steady tag
}

// listSpec is how a list field's items are matched.
type listSpec struct {
	mode listMode
	keys []string
}

var (
	// plans caches *typePlan by reflect.Type. It is a cache: entries are
	// written once, fully built, and never change.
	plans   sync.Map
	planMu  sync.Mutex // serializes building, so each type is built once
	timeTyp = reflect.TypeFor[time.Time]()
	numTyp  = reflect.TypeFor[json.Number]()
)

func planOf(t reflect.Type) *typePlan {
	if p, ok := plans.Load(t); ok {
		return p.(*typePlan)
	}
	planMu.Lock()
	defer planMu.Unlock()
	b := planBuilder{built: map[reflect.Type]*typePlan{}}
	p := b.plan(t)
	for t, p := range b.built {
		plans.Store(t, p)
	}
	return p
}

type planBuilder struct {
	built map[reflect.Type]*typePlan // this build's plans, complete or in progress
}

func (b *planBuilder) plan(t reflect.Type) *typePlan {
	if p, ok := plans.Load(t); ok {
		return p.(*typePlan)
	}
	if p, ok := b.built[t]; ok {
		return p // possibly in progress: recursive types share the plan
	}
	p := &typePlan{typ: t, kind: leafKinds[t.Kind()]}
	b.built[t] = p
	switch t.Kind() {
	case reflect.Struct:
		if t == timeTyp || t.ConvertibleTo(timeTyp) {
			p.kind = kTime
			break
		}
		p.kind = kStruct
		b.structFields(p)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			p.kind = kBytes
			break
		}
		p.kind = kSlice
		p.elem = b.plan(t.Elem())
	case reflect.Pointer, reflect.Array:
		p.elem = b.plan(t.Elem())
	case reflect.Map:
		p.key = b.plan(t.Key())
		p.elem = b.plan(t.Elem())
		p.stringKeys = t.Key().Kind() == reflect.String
	}
	return p
}

// leafKinds gives the plan kind of each reflect.Kind that needs no more
// than its kind to classify (the rest is kOpaque).
var leafKinds = [...]kind{
	reflect.Bool:          kBool,
	reflect.Int:           kInt,
	reflect.Int8:          kInt,
	reflect.Int16:         kInt,
	reflect.Int32:         kInt,
	reflect.Int64:         kInt,
	reflect.Uint:          kUint,
	reflect.Uint8:         kUint,
	reflect.Uint16:        kUint,
	reflect.Uint32:        kUint,
	reflect.Uint64:        kUint,
	reflect.Uintptr:       kUint,
	reflect.Float32:       kFloat,
	reflect.Float64:       kFloat,
	reflect.Complex64:     kComplex,
	reflect.Complex128:    kComplex,
	reflect.String:        kString,
	reflect.Pointer:       kPtr,
	reflect.Array:         kArray,
	reflect.Map:           kMap,
	reflect.Interface:     kIface,
	reflect.UnsafePointer: kOpaque,
}

// structFields collects a struct's fields the way encoding/json names them:
// the json tag's name when present, else the Go name; "-" and unexported
// fields are left out; embedded exported structs (or pointers to them)
// without a tag name have their fields promoted. Of several fields with one
// name, the least embedded wins, and a tie between untagged fields drops
// them all, as in encoding/json.
func (b *planBuilder) structFields(p *typePlan) {
	cands := b.candidates(nil, p.typ, nil, 0, map[reflect.Type]bool{p.typ: true})
	byName := make(map[string][]int, len(cands))
	for i, c := range cands {
		byName[c.name] = append(byName[c.name], i)
	}
	p.byName = make(map[string]int, len(cands))
	for i, c := range cands {
		winner, ok := dominant(byName[c.name], func(j int) (int, bool) { return cands[j].depth, cands[j].tagged })
		if !ok || winner != i {
			continue
		}
		p.byName[c.name] = len(p.fields)
		p.fields = append(p.fields, c.fieldPlan)
	}
}

// fieldCandidate is a field that structFields may keep.
type fieldCandidate struct {
	fieldPlan
	depth  int
	tagged bool
}

// candidates appends the fields of struct t, reached through index at
// embedding depth depth, to cands, with the fields of the embedded structs
// it promotes; seen holds the structs on the way down.
func (b *planBuilder) candidates(cands []fieldCandidate, t reflect.Type, index []int, depth int, seen map[reflect.Type]bool) []fieldCandidate {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		idx := append(append([]int(nil), index...), i)
		if et, ok := promoted(f, name); ok {
			if !seen[et] {
				seen[et] = true
				cands = b.candidates(cands, et, idx, depth+1, seen)
				delete(seen, et)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		c := fieldCandidate{depth: depth, tagged: name != ""}
		if name == "" {
			name = f.Name
		}
		c.name, c.index = name, idx
		c.plan = b.plan(f.Type)
		c.list = parseSteadyTag(f.Tag.Get("steady"))
		cands = append(cands, c)
	}
	return cands
}

// promoted returns the struct whose fields embedded field f (of json name
// name) promotes, if it does.
func promoted(f reflect.StructField, name string) (reflect.Type, bool) {
	if !f.Anonymous || name != "" || !f.IsExported() {
		return nil, false
	}
	ft := f.Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	return ft, ft.Kind() == reflect.Struct && ft != timeTyp
}

// dominant picks among same-named fields the one encoding/json keeps.
func dominant(idx []int, at func(int) (depth int, tagged bool)) (int, bool) {
	if len(idx) == 1 {
		return idx[0], true
	}
	best, bestDepth, n := -1, 1<<30, 0
	for _, j := range idx {
		d, _ := at(j)
		if d < bestDepth {
			bestDepth = d
		}
	}
	for _, j := range idx {
		if d, _ := at(j); d == bestDepth {
			n++
			best = j
		}
	}
	if n == 1 {
		return best, true
	}
	tagged := 0
	for _, j := range idx {
		if d, t := at(j); d == bestDepth && t {
			tagged++
			best = j
		}
	}
	return best, tagged == 1
}

// parseSteadyTag reads the list part of the ownership package's tag:
// "set" or "keys=a,b". Other values leave lists positional.
func parseSteadyTag(tag string) listSpec {
	switch {
	case tag == "set":
		return listSpec{mode: listSet}
	case strings.HasPrefix(tag, "keys="):
		keys := strings.Split(strings.TrimPrefix(tag, "keys="), ",")
		for _, k := range keys {
			if k == "" {
				return listSpec{}
			}
		}
		return listSpec{mode: listKeyed, keys: keys}
	}
	return listSpec{}
}

// field returns struct value v's field f, following embedded pointers; ok
// is false when an embedded pointer on the way is nil.
func (f *fieldPlan) get(v reflect.Value) (reflect.Value, bool) {
	if len(f.index) == 1 {
		return v.Field(f.index[0]), true
	}
	for i, x := range f.index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}
