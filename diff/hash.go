package diff

import (
	"encoding/binary"
	"math"
	"math/bits"
	"reflect"
	"time"
)

// Hash returns a 64-bit hash of v in the view the options select: Ignore'd
// paths are left out, and with Only, everything but the kept paths.
//
// Values that Diff finds equal under the same options hash equal: map
// iteration order, the order of keyed lists and sets, the location of a
// time.Time, and (in trees) the Go type of a number do not change the hash.
// The hash depends only on the value, never on the process, the run, the
// architecture or the map seed, so it can be stored (in a label or an
// annotation) and compared by another process. Steady changes the encoding
// behind it only in a major version.
//
// Cyclic values hash in finite time (a reference met again on its own path
// hashes as a marker), but the promise above holds for them only when their
// cycles have the same shape: a pointer to itself and two equal nodes that
// point to each other are equal under Diff, which compares cycles as
// reflect.DeepEqual does, and hash apart.
//
// Maps, slices, arrays, structs and pointers nested past MaxDepth hash as a
// marker, in finite stack: Diff reports such values Changed, and Hash
// ends.
//
// Struct fields that hold an empty value (zero scalars, zero times, nil
// pointers, empty or nil slices and maps, structs whose fields are all
// empty) are left out, so adding a field to a type does not change the hash
// of values that do not set it. Fields are identified by name, so reordering
// them does not change it either.
//
// This is the hash of the essay's self-referential label: compute it over
// the fields the controller does not write, for example
//
//	h := diff.Hash(obj, diff.Ignore(diff.MustParsePath(`.metadata.labels["steady.dev/hash"]`), diff.MustParsePath(".status")))
//
// Hash is not cryptographic: it detects changes, it does not resist
// deliberate collisions. Format it with strconv.FormatUint(h, 16) for a
// label value.
func Hash(v any, opts ...Option) uint64 {
	var h hasher
	h.path = make([]Element, 0, 16)
	for _, o := range opts {
		if o != nil {
			o.apply(&h.cfg)
		}
	}
	h.s = hashSeed
	if s, ok := h.rootScope(); ok {
		h.any(v, s)
	}
	return fmix(h.s)
}

// Tags mark each kind of value in the hashed stream.
const (
	tNull uint64 = iota + 1
	tFalse
	tTrue
	tInt
	tUint
	tFloat
	tString
	tBytes
	tTime
	tList
	tMap
	tComplex
	tOpaque
	tCycle
	tTooDeep
)

const (
	hashSeed = 0x9e3779b97f4a7c15
	prime1   = 0xff51afd7ed558ccd
	prime2   = 0xc4ceb9fe1a85ec53
)

// fmix is the 64-bit finalizer of MurmurHash3: every input bit affects
// every output bit.
func fmix(x uint64) uint64 {
	x ^= x >> 33
	x *= prime1
	x ^= x >> 33
	x *= prime2
	x ^= x >> 33
	return x
}

type hasher struct {
	walker
	s     uint64
	depth int
	stack map[ref]bool // references on the current path, past cycleDepth
	nest  int          // maps, slices, arrays, structs and pointers walked into (see MaxDepth)
}

func (h *hasher) u64(x uint64) {
	h.s = bits.RotateLeft64((h.s^x)*prime1, 31) * prime2
}

func (h *hasher) str(tag uint64, s string) {
	h.u64(tag)
	h.u64(uint64(len(s)))
	for len(s) >= 8 {
		h.u64(binary.LittleEndian.Uint64([]byte(s[:8])))
		s = s[8:]
	}
	var tail uint64
	for i := 0; i < len(s); i++ {
		tail |= uint64(s[i]) << (8 * i)
	}
	h.u64(tail)
}

func (h *hasher) number(n number) {
	switch n.class {
	case 'i':
		h.u64(tInt)
		h.u64(uint64(n.i))
	case 'u':
		h.u64(tUint)
		h.u64(n.u)
	default:
		h.u64(tFloat)
		if math.IsNaN(n.f) {
			h.u64(0x7ff8000000000001)
		} else {
			h.u64(math.Float64bits(n.f))
		}
	}
}

// enterRef guards against cycles: past cycleDepth it remembers the
// references on the current path and reports a reference met again.
func (h *hasher) enterRef(p uintptr, t reflect.Type) (cycle bool) {
	h.depth++
	if h.depth < cycleDepth {
		return false
	}
	if h.stack == nil {
		h.stack = make(map[ref]bool)
	}
	r := ref{p, t}
	if h.stack[r] {
		return true
	}
	h.stack[r] = true
	return false
}

func (h *hasher) leaveRef(p uintptr, t reflect.Type) {
	if h.depth >= cycleDepth {
		delete(h.stack, ref{p, t})
	}
	h.depth--
}

// ref is a reference and its type: a struct and its first field share an
// address.
type ref struct {
	p uintptr
	t reflect.Type
}

// begin starts hashing one member of an unordered collection on its own;
// end returns the member's contribution to the collection's sum and
// restores the collection's state.
func (h *hasher) begin(key string) (saved uint64) {
	saved = h.s
	h.s = hashSeed
	h.str(tString, key)
	return saved
}

func (h *hasher) end(saved uint64) uint64 {
	e := fmix(h.s)
	h.s = saved
	return e
}

// any hashes a dynamic value: trees directly, the rest through plans.
func (h *hasher) any(v any, s scope) {
	switch x := v.(type) {
	case nil:
		h.u64(tNull)
		return
	case string:
		h.str(tString, x)
		return
	case bool:
		h.bool(x)
		return
	case map[string]any:
		h.treeMap(x, s)
		return
	}
	if n, ok := numberOf(v); ok {
		h.number(n)
		return
	}
	h.value(planOf(reflect.TypeOf(v)), reflect.ValueOf(v), s)
}

func (h *hasher) bool(b bool) {
	if b {
		h.u64(tTrue)
	} else {
		h.u64(tFalse)
	}
}

func (h *hasher) treeMap(m map[string]any, s scope) {
	if m == nil && !h.cfg.equateEmpty {
		h.u64(tNull)
		return
	}
	if h.nest >= MaxDepth {
		h.u64(tTooDeep)
		return
	}
	h.nest++
	defer func() { h.nest-- }()
	p := reflect.ValueOf(m).Pointer()
	if h.enterRef(p, nil) {
		h.u64(tCycle)
		h.leaveRef(p, nil)
		return
	}
	var sum uint64
	for k, v := range m {
		cs, ok := h.enter(s, Element{Kind: FieldElem, Name: k}, item{})
		if ok {
			saved := h.begin(k)
			h.any(v, cs)
			sum += h.end(saved)
		}
		h.leave(cs)
	}
	h.leaveRef(p, nil)
	h.u64(tMap)
	h.u64(sum)
}

// value hashes v of plan p's type. It reports whether v is empty in the
// sense of Hash's doc, so that struct fields holding nothing are left out.
func (h *hasher) value(p *typePlan, v reflect.Value, s scope) (empty bool) {
	if !p.kind.composite() {
		if p.kind == kIface {
			if v.IsNil() {
				h.u64(tNull)
				return true
			}
			h.any(v.Interface(), s)
			return false
		}
		return h.leaf(p, v)
	}
	if h.nest >= MaxDepth {
		h.u64(tTooDeep)
		return false
	}
	h.nest++
	empty = h.composite(p, v, s)
	h.nest--
	return empty
}

// composite is value for maps, slices, arrays, structs and pointers.
func (h *hasher) composite(p *typePlan, v reflect.Value, s scope) (empty bool) {
	switch p.kind {
	case kStruct:
		return h.structs(p, v, s)
	case kPtr:
		return h.pointer(p, v, s)
	case kSlice:
		return h.slice(p, listSpec{}, v, s)
	case kArray:
		h.positional(p.elem, v, s)
		return v.Len() == 0
	}
	return h.maps(p, v, s)
}

// leaf is value for the plans that hold no values to walk into: scalars,
// times, []byte, channels, functions.
func (h *hasher) leaf(p *typePlan, v reflect.Value) (empty bool) {
	switch p.kind {
	case kBool:
		h.bool(v.Bool())
		return !v.Bool()
	case kInt:
		h.number(number{class: 'i', i: v.Int()})
		return v.Int() == 0
	case kUint:
		h.number(uintNumber(v.Uint()))
		return v.Uint() == 0
	case kFloat:
		h.number(floatNumber(v.Float()))
		return v.Float() == 0
	case kComplex:
		c := v.Complex()
		h.u64(tComplex)
		h.number(floatNumber(real(c)))
		h.number(floatNumber(imag(c)))
		return c == 0
	case kString:
		h.str(tString, v.String())
		return v.Len() == 0
	case kTime:
		return h.time(asTime(v))
	case kBytes:
		if v.IsNil() && !h.cfg.equateEmpty {
			h.u64(tNull)
		} else {
			h.str(tBytes, string(v.Bytes()))
		}
		return v.Len() == 0
	}
	h.u64(tOpaque)
	if v.Kind() == reflect.Func {
		h.bool(v.IsNil())
	} else {
		h.u64(uint64(v.Pointer()))
	}
	return v.IsNil()
}

func (h *hasher) time(t time.Time) (empty bool) {
	h.u64(tTime)
	h.u64(uint64(t.Unix()))
	h.u64(uint64(t.Nanosecond()))
	return t.IsZero()
}

func (h *hasher) pointer(p *typePlan, v reflect.Value, s scope) (empty bool) {
	if v.IsNil() {
		h.u64(tNull)
		return true
	}
	if h.enterRef(v.Pointer(), p.typ) {
		h.u64(tCycle)
	} else {
		h.value(p.elem, v.Elem(), s)
	}
	h.leaveRef(v.Pointer(), p.typ)
	return false
}

// structs hashes the non-empty fields by name, in any order.
func (h *hasher) structs(p *typePlan, v reflect.Value, s scope) (empty bool) {
	var sum uint64
	empty = true
	for i := range p.fields {
		f := &p.fields[i]
		fv, present := f.get(v)
		if !present {
			continue
		}
		cs, ok := h.enter(s, Element{Kind: FieldElem, Name: f.name}, item{})
		if ok {
			saved := h.begin(f.name)
			var fieldEmpty bool
			if f.plan.kind == kSlice {
				fieldEmpty = h.sliceField(f, fv, cs)
			} else {
				fieldEmpty = h.value(f.plan, fv, cs)
			}
			if e := h.end(saved); !fieldEmpty {
				sum += e
				empty = false
			}
		}
		h.leave(cs)
	}
	h.u64(tMap)
	h.u64(sum)
	return empty
}

// sliceField is value for a slice field with a list declaration.
func (h *hasher) sliceField(f *fieldPlan, v reflect.Value, s scope) (empty bool) {
	if h.nest >= MaxDepth {
		h.u64(tTooDeep)
		return false
	}
	h.nest++
	empty = h.slice(f.plan, f.list, v, s)
	h.nest--
	return empty
}

func (h *hasher) maps(p *typePlan, v reflect.Value, s scope) (empty bool) {
	if v.IsNil() && !h.cfg.equateEmpty {
		h.u64(tNull)
		return true
	}
	if h.enterRef(v.Pointer(), p.typ) {
		h.u64(tCycle)
		h.leaveRef(v.Pointer(), p.typ)
		return false
	}
	var sum uint64
	if m, ok := asStringMap(v); ok {
		for k, x := range m {
			cs, ok := h.enter(s, Element{Kind: FieldElem, Name: k}, item{})
			if ok {
				saved := h.begin(k)
				h.str(tString, x)
				sum += h.end(saved)
			}
			h.leave(cs)
		}
	} else {
		key := reflect.New(p.typ.Key()).Elem()
		val := reflect.New(p.typ.Elem()).Elem()
		it := v.MapRange()
		for it.Next() {
			key.SetIterKey(it)
			val.SetIterValue(it)
			name := keyName(key)
			cs, ok := h.enter(s, Element{Kind: FieldElem, Name: name}, item{})
			if ok {
				saved := h.begin(name)
				h.value(p.elem, val, cs)
				sum += h.end(saved)
			}
			h.leave(cs)
		}
	}
	h.leaveRef(v.Pointer(), p.typ)
	h.u64(tMap)
	h.u64(sum)
	return v.Len() == 0
}
