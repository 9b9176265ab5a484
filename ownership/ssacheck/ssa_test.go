package ssacheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/ownership"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The object type both engines see. steady's schema and the reference's
// say the same thing: items is keyed by name, pairs by (name, port), tags
// is a set, args an atomic list, sel an atomic map, and any other field
// (m nests the object up to depth 2) is untyped: maps granular, lists
// atomic, as steady treats fields without a schema.
//
// steady has no declared map fields: every map key is owned as structured-
// merge-diff owns a field its schema does not declare. So m is not
// declared here either: obj's undeclared fields are of type obj, which is
// also a scalar or an atomic list, as an untyped field is.
const schemaYAML = `types:
- name: obj
  scalar: untyped
  list:
    elementType: {namedType: __untyped_atomic_}
    elementRelationship: atomic
  map:
    fields:
    - name: items
      type: {namedType: items}
    - name: pairs
      type: {namedType: pairs}
    - name: tags
      type: {namedType: tags}
    - name: args
      type: {namedType: args}
    - name: sel
      type: {namedType: sel}
    elementType: {namedType: obj}
- name: items
  list:
    elementType: {namedType: item}
    elementRelationship: associative
    keys: [name]
- name: item
  map:
    fields:
    - name: name
      type: {scalar: string}
    elementType: {namedType: __untyped_deduced_}
- name: pairs
  list:
    elementType: {namedType: pair}
    elementRelationship: associative
    keys: [name, port]
- name: pair
  map:
    fields:
    - name: name
      type: {scalar: string}
    - name: port
      type: {scalar: numeric}
    elementType: {namedType: __untyped_deduced_}
- name: tags
  list:
    elementType: {scalar: untyped}
    elementRelationship: associative
- name: args
  list:
    elementType: {scalar: untyped}
    elementRelationship: atomic
- name: sel
  map:
    elementType: {scalar: untyped}
    elementRelationship: atomic
- name: __untyped_atomic_
  scalar: untyped
  list:
    elementType: {namedType: __untyped_atomic_}
    elementRelationship: atomic
  map:
    elementType: {namedType: __untyped_atomic_}
    elementRelationship: atomic
- name: __untyped_deduced_
  scalar: untyped
  list:
    elementType: {namedType: __untyped_atomic_}
    elementRelationship: atomic
  map:
    elementType: {namedType: __untyped_deduced_}
    elementRelationship: separable
`

var steadySchema = func() *ownership.Schema {
	rules := map[string]ownership.Strategy{}
	for _, at := range []string{"", ".m", ".m.m"} {
		rules[at+".items"] = ownership.Keyed("name")
		rules[at+".pairs"] = ownership.Keyed("name", "port")
		rules[at+".tags"] = ownership.AsSet()
		rules[at+".sel"] = ownership.Atomic()
	}
	s, err := ownership.NewSchema(rules)
	if err != nil {
		panic(err)
	}
	return s
}()

// converter is the identity: one version, v1.
type converter struct{}

func (converter) Convert(v *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return v, nil
}
func (converter) IsMissingVersionError(error) bool { return false }

// reference is structured-merge-diff's state: the object and the managed
// fields, keyed as Kubernetes keys them, by (manager, operation).
type reference struct {
	typ      typed.ParseableType
	updater  *merge.Updater
	obj      *typed.TypedValue
	managers fieldpath.ManagedFields
}

func newReference(t *testing.T) *reference {
	p, err := typed.NewParser(schemaYAML)
	if err != nil {
		t.Fatal(err)
	}
	r := &reference{typ: p.Type("obj"), updater: (&merge.UpdaterBuilder{Converter: converter{}}).BuildUpdater()}
	r.reset(t, map[string]any{}, nil)
	return r
}

func (r *reference) typed(t *testing.T, v map[string]any) *typed.TypedValue {
	tv, err := r.typ.FromUnstructured(ownership.DeepCopy(v))
	if err != nil {
		t.Fatalf("the reference rejects %s: %v", js(v), err)
	}
	return tv
}

func key(manager string, op ownership.Operation) string { return manager + "/" + string(op) }

// outcome is one step's result, as both engines report it.
type outcome struct {
	conflicts []string            // "manager/op path", sorted; nil when none
	noop      bool                // nothing changed (meaningless on conflict)
	object    map[string]any      // the object after the step
	owned     map[string][]string // "manager/op" -> owned leaf paths, sorted
}

// apply runs an apply (or a forced one) through structured-merge-diff,
// with rule own-update-entry; with rules nil, as it is.
func (r *reference) apply(t *testing.T, cfg map[string]any, manager string, force bool, rules *ruleHits) outcome {
	mk := key(manager, ownership.OpApply)
	newObj, managers, err := r.updater.Apply(r.obj, r.typed(t, cfg), "v1", cloneManagers(r.managers), mk, force)
	var conflicts merge.Conflicts
	if errors.As(err, &conflicts) && rules != nil {
		// Rule own-update-entry: steady never lets a manager's own Update
		// entry conflict with its Apply; the apply takes those fields from
		// it, which is what a forced apply does to that entry.
		var rest merge.Conflicts
		for _, c := range conflicts {
			if c.Manager != key(manager, ownership.OpUpdate) {
				rest = append(rest, c)
			}
		}
		if len(rest) < len(conflicts) {
			rules.hit("own-update-entry")
			if len(rest) == 0 {
				newObj, managers, err = r.updater.Apply(r.obj, r.typed(t, cfg), "v1", cloneManagers(r.managers), mk, true)
			} else {
				err = rest
			}
		}
	}
	if errors.As(err, &conflicts) {
		var out []string
		for _, c := range conflicts {
			out = append(out, c.Manager+" "+smdPath(c.Path))
		}
		sort.Strings(out)
		return outcome{conflicts: out, object: r.object(), owned: r.owned()}
	}
	if err != nil {
		t.Fatalf("reference apply: %v", err)
	}
	return r.commit(newObj, managers)
}

func (r *reference) update(t *testing.T, next map[string]any, manager string) outcome {
	newObj, managers, err := r.updater.Update(r.obj, r.typed(t, next), "v1", cloneManagers(r.managers), key(manager, ownership.OpUpdate))
	if err != nil {
		t.Fatalf("reference update: %v", err)
	}
	return r.commit(newObj, managers)
}

// commit stores a successful write; a nil object means unchanged.
func (r *reference) commit(newObj *typed.TypedValue, managers fieldpath.ManagedFields) outcome {
	noop := managers.Equals(r.managers)
	if newObj != nil {
		// A null root and {} are the same object (object() shows both
		// as {}): Kubernetes objects are never null.
		before := r.object()
		r.obj = newObj
		if js(r.object()) != js(before) {
			noop = false
		}
	}
	r.managers = managers
	return outcome{noop: noop, object: r.object(), owned: r.owned()}
}

func (r *reference) object() map[string]any {
	m, _ := r.obj.AsValue().Unstructured().(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

func (r *reference) owned() map[string][]string {
	out := map[string][]string{}
	for k, vs := range r.managers {
		var paths []string
		vs.Set().Leaves().Iterate(func(p fieldpath.Path) { paths = append(paths, smdPath(p)) })
		if len(paths) > 0 {
			sort.Strings(paths)
			out[k] = paths
		}
	}
	return out
}

// members lists each entry's member paths, not only its leaves, as far as
// steady's sets can say the same: an Apply entry's map keys that hold
// other members are left out (steady's Apply sets hold the leaves, not
// the maps above them; see doc.go). (An Update entry's keyed
// lists and sets stay: steady's Update owns those it creates too, so one
// engine's entry holding such a list where the other's does not is
// drift.) Chained runs compare these to find differences that leaves do
// not show yet.
func (r *reference) members() map[string][]string {
	out := map[string][]string{}
	for k, vs := range r.managers {
		all := map[string]bool{}
		vs.Set().Iterate(func(p fieldpath.Path) { all[smdPath(p)] = true })
		var paths []string
		for p := range all {
			typ := typeAt(p)
			if strings.HasSuffix(k, "/Apply") && (typ == "obj" || typ == "deduced") && !strings.HasSuffix(p, "]") {
				below := false
				for q := range all {
					below = below || q != p && atOrBelow(q, p)
				}
				if below {
					continue
				}
			}
			paths = append(paths, p)
		}
		if len(paths) > 0 {
			sort.Strings(paths)
			out[k] = paths
		}
	}
	return out
}

// holds reports whether entry k's set holds path p itself (a member, not
// only a leaf).
func (r *reference) holds(k, p string) bool {
	vs, ok := r.managers[k]
	if !ok {
		return false
	}
	found := false
	vs.Set().Iterate(func(q fieldpath.Path) { found = found || smdPath(q) == p })
	return found
}

// reset puts the reference in steady's state, so that the next step starts
// from the same place after a disagreement. steady's member paths become
// the reference's, plus, for Apply entries, the map keys structured-merge-
// diff counts as members where steady does not (fields that the schema
// does not declare). (steady's Update entries list the maps they created;
// the keyed lists and sets they created are lost here.)
func (r *reference) reset(t *testing.T, obj map[string]any, managed ownership.Managed) {
	if obj == nil {
		obj = map[string]any{}
	}
	r.obj = r.typed(t, obj)
	r.managers = fieldpath.ManagedFields{}
	for _, e := range managed {
		set := fieldpath.NewSet()
		for _, p := range e.Set.Paths() {
			fp := make(fieldpath.Path, 0, len(p))
			typ := "obj"
			for _, el := range p {
				fp = append(fp, toSMD(el))
				var member bool
				typ, member = childType(typ, el)
				if member && e.Operation == ownership.OpApply {
					set.Insert(slices.Clone(fp))
				}
			}
			set.Insert(fp)
		}
		r.managers[key(e.Manager, e.Operation)] = fieldpath.NewVersionedSet(set, "v1", e.Operation == ownership.OpApply)
	}
}

// childType follows the schema one element down. member reports whether
// structured-merge-diff makes that element a member of every set that
// holds something below it: a field its map does not declare.
func childType(typ string, el diff.Element) (string, bool) {
	switch typ {
	case "obj":
		switch el.Name {
		case "items", "pairs", "tags", "args", "sel":
			return el.Name, false
		}
		return "obj", true
	case "items":
		return "item", false
	case "pairs":
		return "pair", false
	case "item", "pair":
		if el.Name == "name" || (typ == "pair" && el.Name == "port") {
			return "scalar", false
		}
		return "deduced", true
	case "deduced":
		return "deduced", true
	}
	return "scalar", false
}

func toSMD(el diff.Element) fieldpath.PathElement {
	switch el.Kind {
	case diff.KeyElem:
		var fl value.FieldList
		for _, k := range el.Keys {
			fl = append(fl, value.Field{Name: k.Name, Value: value.NewValueInterface(k.Value)})
		}
		fl.Sort()
		return fieldpath.PathElement{Key: &fl}
	case diff.ValueElem:
		v := value.NewValueInterface(el.Value)
		return fieldpath.PathElement{Value: &v}
	}
	name := el.Name
	return fieldpath.PathElement{FieldName: &name}
}

func cloneManagers(m fieldpath.ManagedFields) fieldpath.ManagedFields {
	out := make(fieldpath.ManagedFields, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Paths in one notation for both: .field, [k=v,...] (keys sorted), [=v],
// values as JSON.
func smdPath(p fieldpath.Path) string {
	var b strings.Builder
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			b.WriteString("." + *pe.FieldName)
		case pe.Key != nil:
			b.WriteString("[")
			for i, f := range *pe.Key {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(f.Name + "=" + js(f.Value.Unstructured()))
			}
			b.WriteString("]")
		case pe.Value != nil:
			b.WriteString("[=" + js((*pe.Value).Unstructured()) + "]")
		case pe.Index != nil:
			fmt.Fprintf(&b, "[%d]", *pe.Index)
		}
	}
	return b.String()
}

func steadyPath(p diff.Path) string {
	var b strings.Builder
	for _, el := range p {
		switch el.Kind {
		case diff.KeyElem:
			keys := slices.Clone(el.Keys)
			slices.SortFunc(keys, func(a, b diff.KeyField) int { return strings.Compare(a.Name, b.Name) })
			b.WriteString("[")
			for i, k := range keys {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(k.Name + "=" + js(k.Value))
			}
			b.WriteString("]")
		case diff.ValueElem:
			b.WriteString("[=" + js(el.Value) + "]")
		case diff.IndexElem:
			fmt.Fprintf(&b, "[%d]", el.Index)
		default:
			b.WriteString("." + el.Name)
		}
	}
	return b.String()
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// steady's side of a step.
type engine struct {
	live    map[string]any
	managed ownership.Managed
}

func (e *engine) apply(t *testing.T, cfg map[string]any, manager string, force bool) outcome {
	opts := []ownership.Option{ownership.WithSchema(steadySchema)}
	if force {
		opts = append(opts, ownership.Force())
	}
	r, err := ownership.Apply(e.live, cfg, manager, e.managed, opts...)
	var ce *ownership.ConflictError
	if errors.As(err, &ce) {
		var out []string
		for _, c := range ce.Conflicts {
			out = append(out, key(c.Manager, c.Operation)+" "+steadyPath(c.Path))
		}
		sort.Strings(out)
		return outcome{conflicts: slices.Compact(out), object: e.object(), owned: e.owned()}
	}
	if err != nil {
		t.Fatalf("steady apply: %v", err)
	}
	e.live, e.managed = r.Object, r.Managed
	return outcome{noop: !r.Changed, object: e.object(), owned: e.owned()}
}

func (e *engine) update(t *testing.T, next map[string]any, manager string) outcome {
	r, err := ownership.Update(e.live, next, manager, e.managed, ownership.WithSchema(steadySchema))
	if err != nil {
		t.Fatalf("steady update: %v", err)
	}
	e.live, e.managed = r.Object, r.Managed
	return outcome{noop: !r.Changed, object: e.object(), owned: e.owned()}
}

func (e *engine) object() map[string]any {
	if e.live == nil {
		return map[string]any{}
	}
	return e.live
}

// members lists each entry's member paths.
func (e *engine) members() map[string][]string {
	out := map[string][]string{}
	for _, en := range e.managed {
		var paths []string
		for _, p := range en.Set.Paths() {
			paths = append(paths, steadyPath(p))
		}
		if len(paths) > 0 {
			sort.Strings(paths)
			out[key(en.Manager, en.Operation)] = paths
		}
	}
	return out
}

// owned lists each entry's leaf members: members with no member below.
func (e *engine) owned() map[string][]string {
	out := map[string][]string{}
	for _, en := range e.managed {
		paths := en.Set.Paths()
		var leaves []string
		for i, p := range paths {
			// Paths come parent first: a member's descendants follow it.
			if i+1 < len(paths) && paths[i+1].HasPrefix(p) {
				continue
			}
			leaves = append(leaves, steadyPath(p))
		}
		if len(leaves) > 0 {
			sort.Strings(leaves)
			out[key(en.Manager, en.Operation)] = leaves
		}
	}
	return out
}

// ruleHits counts the steps each documented difference was applied to.
type ruleHits map[string]int

func (r *ruleHits) hit(name string) { (*r)[name]++ }

// stripNulls applies rule applied-null: steady treats a null field in an
// applied config as not applied (doc.go); the reference gets the config
// without them.
func stripNulls(m map[string]any) (map[string]any, bool) {
	out := make(map[string]any, len(m))
	stripped := false
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			stripped = true
			continue
		case map[string]any:
			var s bool
			v, s = stripNulls(x)
			stripped = stripped || s
		case []any:
			l := make([]any, len(x))
			for i, it := range x {
				if im, ok := it.(map[string]any); ok {
					var s bool
					it, s = stripNulls(im)
					stripped = stripped || s
				}
				l[i] = it
			}
			v = l
		}
		out[k] = v
	}
	return out, stripped
}

// sameObject compares two objects; rule list-order lets keyed lists and
// sets differ in order (steady keeps live's order and appends new items).
// Rule prune-null: where structured-merge-diff's prune empties a list or
// map that others owned fields in, it can leave null (typed.RemoveItems);
// steady removes the field or leaves it empty.
//
// Rule applied-empty-list-kept: a list that pruning empties while the
// config still applies it as [] stays in steady (re-applying then changes
// nothing); structured-merge-diff removes it and writes [] back on the
// next re-apply.
//
// Rule owned-kept: steady's prune never removes what another entry still
// owns, nor a map holding it; structured-merge-diff's can (see
// dropOwnedKept). The subtrees steady keeps that the reference removed
// and that steady's entries own something at or below are dropped from
// got; kept returns their paths, whose owned paths sameOwned then drops.
func sameObject(c *cmp, got map[string]any, rules *ruleHits) (ok bool, kept []string) {
	want := c.want.object
	if js(got) == js(want) {
		return true, nil
	}
	var used []string
	if c.applied != nil {
		if g, ok := dropKeptEmptyLists(got, want, c.applied); ok {
			got, used = g, append(used, "applied-empty-list-kept")
		}
		// Only another entry keeps a field from the applier's prune, and
		// only one that was there before the step.
		others := maps.Clone(c.got.owned)
		delete(others, key(c.manager, ownership.OpApply))
		if g, k := dropOwnedKept(got, want, c, others); len(k) > 0 {
			got, kept, used = g, k, append(used, "owned-kept")
		}
	}
	switch {
	case js(got) == js(want):
	case js(sortLists(got, "obj")) == js(sortLists(want, "obj")):
		used = append(used, "list-order")
	default:
		w, ok := dropPruneNulls(got, want, c.wantBefore, c.got.owned)
		if !ok || js(sortLists(got, "obj")) != js(sortLists(w, "obj")) {
			return false, nil
		}
		used = append(used, "prune-null")
		if js(got) != js(w) {
			used = append(used, "list-order")
		}
	}
	for _, name := range used {
		rules.hit(name)
	}
	return true, kept
}

// dropOwnedKept removes from got the fields that want does not have (or
// has as the null its prune left), that were there before (in steady)
// and that another entry of steady (owned, the applier's own entry left
// out) owns something at or below, and returns their paths.
// structured-merge-diff's prune removes a map that the applier owned or
// emptied even where another entry owns fields inside it (its
// addBackOwnedItems adds back only the paths a set lists itself, and an
// Update entry lists a map only if it created it), and a map that holds
// only empty sets or keyed lists even when it is owned
// (addBackDanglingItems cannot see it); where that empties the map above,
// it leaves null there (seed 47).
//
// Only what pruning keeps for another entry is excused: not a subtree
// where steady still holds a path the applier owned before (c.gotPrev)
// that no other entry owns at or below (a prune that failed), nor one
// holding something the applier applies inside (an empty map it applies
// there is fine: others' fields fill it; seed 240).
func dropOwnedKept(got, want map[string]any, c *cmp, owned map[string][]string) (map[string]any, []string) {
	applier := key(c.manager, ownership.OpApply)
	prunable := func(p string) bool {
		// The applier's own map ({} applied) may hold what others own;
		// a field it applies inside may not go.
		if slices.ContainsFunc(c.got.owned[applier], func(q string) bool { return q != p && atOrBelow(q, p) }) {
			return true
		}
		return slices.ContainsFunc(c.gotPrev[applier], func(q string) bool {
			_, in := lookup(c.got.object, q)
			return atOrBelow(q, p) && in && !ownedAtOrBelow(owned, q)
		})
	}
	return ownedKept(got, want, c.gotBefore, "", "obj", owned, prunable)
}

func ownedKept(got, want, before map[string]any, path, typ string, owned map[string][]string, prunable func(string) bool) (map[string]any, []string) {
	var kept []string
	out := make(map[string]any, len(got))
	for k, gv := range got {
		p := path + "." + k
		ct, _ := childType(typ, diff.Element{Kind: diff.FieldElem, Name: k})
		wv, ok := want[k]
		bv, bok := before[k]
		if (!ok || wv == nil && bv != nil && nonEmptyMap(gv)) && bok && ownedAtOrBelow(owned, p) && !prunable(p) {
			kept = append(kept, p)
			continue
		}
		switch g := gv.(type) {
		case map[string]any:
			wm, wok := wv.(map[string]any)
			bm, _ := bv.(map[string]any)
			if wok {
				var k2 []string
				if gv, k2 = ownedKept(g, wm, bm, p, ct, owned, prunable); len(k2) > 0 {
					kept = append(kept, k2...)
				}
			}
		case []any:
			// Items of a keyed list, matched by key.
			wl, wok := wv.([]any)
			if !wok || ct != "items" && ct != "pairs" {
				break
			}
			bl, _ := bv.([]any)
			it := map[string]string{"items": "item", "pairs": "pair"}[ct]
			l := make([]any, len(g))
			for i, x := range g {
				l[i] = x
				gm, ok := x.(map[string]any)
				if !ok {
					continue
				}
				ip := p + itemElem(gm, keySeg(ct))
				wm := itemAt(wl, ip, ct)
				if wm == nil {
					continue
				}
				if m, k2 := ownedKept(gm, wm, itemAt(bl, ip, ct), ip, it, owned, prunable); len(k2) > 0 {
					l[i], kept = m, append(kept, k2...)
				}
			}
			gv = l
		}
		out[k] = gv
	}
	return out, kept
}

// ownsExactly reports whether an entry owns path p itself.
func ownsExactly(owned map[string][]string, p string) bool {
	for _, paths := range owned {
		if slices.Contains(paths, p) {
			return true
		}
	}
	return false
}

// ownedAtOrBelow reports whether an entry owns path p or a path below it.
func ownedAtOrBelow(owned map[string][]string, p string) bool {
	for _, paths := range owned {
		for _, q := range paths {
			if atOrBelow(q, p) {
				return true
			}
		}
	}
	return false
}

func atOrBelow(q, p string) bool {
	return q == p || strings.HasPrefix(q, p+".") || strings.HasPrefix(q, p+"[")
}

// nullMapPaths returns the paths (map fields only) where an update's new
// object holds null and the old one a map with fields, or the reverse.
// ({} and null are values to both engines.)
func nullMapPaths(before, next map[string]any, path string) []string {
	var out []string
	for k, nv := range next {
		bv, ok := before[k]
		if !ok {
			continue
		}
		p := path + "." + k
		bm, bIsMap := bv.(map[string]any)
		nm, nIsMap := nv.(map[string]any)
		switch {
		case bIsMap && len(bm) > 0 && nv == nil, bv == nil && nIsMap && len(nm) > 0:
			out = append(out, p)
		case bIsMap && nIsMap:
			out = append(out, nullMapPaths(bm, nm, p)...)
		}
	}
	return out
}

// dropPruneNulls removes from want the nulls structured-merge-diff's prune
// left (null now, not null before, in the reference) where got has
// nothing, or an empty list or map that an entry of steady owns itself.
func dropPruneNulls(got, want, before map[string]any, gotOwned map[string][]string) (map[string]any, bool) {
	return dropNulls(got, want, before, "", "obj", gotOwned)
}

func dropNulls(got, want, before map[string]any, path, typ string, gotOwned map[string][]string) (map[string]any, bool) {
	out := make(map[string]any, len(want))
	dropped := false
	for k, wv := range want {
		p := path + "." + k
		ct, _ := childType(typ, diff.Element{Kind: diff.FieldElem, Name: k})
		gv, gok := got[k]
		bv, bok := before[k]
		// steady removes the field, or keeps the empty list or map that
		// one of its entries owns itself (gotOwned).
		if wv == nil && (!gok || emptyContainer(gv) && ownsExactly(gotOwned, p)) && bok && bv != nil {
			dropped = true
			if gok {
				out[k] = gv
			}
			continue
		}
		switch w := wv.(type) {
		case map[string]any:
			gm, _ := gv.(map[string]any)
			bm, _ := bv.(map[string]any)
			if m, d := dropNulls(gm, w, bm, p, ct, gotOwned); d {
				wv, dropped = m, true
			}
		case []any:
			if ct != "items" && ct != "pairs" {
				break
			}
			// Keyed items: the same item (by key) in got and before.
			gl, _ := gv.([]any)
			bl, _ := bv.([]any)
			l := make([]any, len(w))
			for i, it := range w {
				l[i] = it
				wm, ok := it.(map[string]any)
				if !ok {
					continue
				}
				ip := p + itemElem(wm, keySeg(ct))
				gm, bm := itemAt(gl, ip, ct), itemAt(bl, ip, ct)
				if m, d := dropNulls(gm, wm, bm, ip, map[string]string{"items": "item", "pairs": "pair"}[ct], gotOwned); d {
					l[i], dropped = m, true
				}
			}
			wv = l
		}
		out[k] = wv
	}
	return out, dropped
}

// keySeg is a path element with the key names of keyed list type typ, for
// itemElem.
func keySeg(typ string) string {
	if typ == "pairs" {
		return "[name=,port=]"
	}
	return "[name=]"
}

// itemAt returns the item of keyed list l whose element ends path p.
func itemAt(l []any, p, typ string) map[string]any {
	seg := p[strings.LastIndex(p, "["):]
	for _, it := range l {
		if m, ok := it.(map[string]any); ok && itemElem(m, keySeg(typ)) == seg {
			return m
		}
	}
	return nil
}

func kindOf(v any) int {
	switch v.(type) {
	case nil:
		return 0
	case map[string]any:
		return 2
	case []any:
		return 3
	}
	return 1
}

// dropKeptEmptyLists removes from got the empty lists that the config
// applies as [] and want does not have (or has as the null its prune
// left); want's nulls go with them.
func dropKeptEmptyLists(got, want, applied map[string]any) (map[string]any, bool) {
	out := make(map[string]any, len(got))
	dropped := false
	for k, gv := range got {
		av := applied[k]
		if l, ok := gv.([]any); ok && len(l) == 0 && emptyContainer(av) {
			// The reference removed it, or its prune left null.
			if wv, ok := want[k]; !ok || wv == nil {
				dropped = true
				continue
			}
		}
		if gm, ok := gv.(map[string]any); ok {
			wm, _ := want[k].(map[string]any)
			am, _ := av.(map[string]any)
			if m, d := dropKeptEmptyLists(gm, wm, am); d {
				gv, dropped = m, true
			}
		}
		out[k] = gv
	}
	return out, dropped
}

func nonEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) > 0
}

func emptyContainer(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func sortLists(v any, typ string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ct, _ := childType(typ, diff.Element{Kind: diff.FieldElem, Name: k})
			out[k] = sortLists(e, ct)
		}
		return out
	case []any:
		if typ != "items" && typ != "pairs" && typ != "tags" {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sortLists(e, map[string]string{"items": "item", "pairs": "pair"}[typ])
		}
		slices.SortFunc(out, func(a, b any) int { return strings.Compare(js(a), js(b)) })
		return out
	}
	return v
}

// sameOwned compares owned leaf paths, steady's (got) and the
// reference's (c.want.owned).
//
// Rule update-containers: structured-merge-diff's Update entry also owns
// the keyed lists and sets it created (typed.Comparison.Added holds them);
// when others take or remove the items, the list becomes its leaf. steady's
// Update entry owns the maps it created but not such lists. A reference
// Update entry's path that is a keyed list or set in the reference's
// object (or the null its prune left of one, where steady has nothing) and
// that steady's same entry does not list is dropped.
//
// Rule owned-kept: the paths another entry of steady owns in subtrees
// that sameObject's rule owned-kept excused (kept) are dropped from
// steady's lists.
//
// Rule update-null-map: where an Update replaces a map that holds fields
// with null, or null with such a map, structured-merge-diff sees only the
// fields inside removed or added: the updater gets nothing at the path
// itself, and whoever listed it keeps it. steady's Update owns the null
// it wrote, and whoever owned the null loses it. The paths an update
// changes so (nullMaps) are dropped from both, and a map above such a
// path that the reference's entry still holds becomes its leaf again
// (uncoverHeldMaps).
func sameOwned(c *cmp, got map[string][]string, kept []string, rules *ruleHits) bool {
	want := c.want.owned
	if ownedEqual(got, want) {
		return true
	}
	var used []string
	drop := func(owned map[string][]string, name string, f func(entry, p string) bool) map[string][]string {
		out := map[string][]string{}
		dropped := false
		for k, paths := range owned {
			keep := slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return f(k, p) })
			dropped = dropped || len(keep) < len(paths)
			if len(keep) > 0 {
				out[k] = keep
			}
		}
		if dropped {
			used = append(used, name)
		}
		return out
	}
	if len(kept) > 0 {
		applier := key(c.manager, ownership.OpApply)
		got = drop(got, "owned-kept", func(k, p string) bool {
			return k != applier && !slices.Contains(want[k], p) && slices.ContainsFunc(kept, func(kp string) bool { return atOrBelow(p, kp) })
		})
	}
	notSteadys := func(k, p string) bool {
		return !slices.ContainsFunc(got[k], func(q string) bool { return atOrBelow(q, p) })
	}
	if len(c.nullMaps) > 0 {
		isNullMap := func(_, p string) bool { return slices.Contains(c.nullMaps, p) }
		got = drop(got, "update-null-map", isNullMap)
		want = drop(uncoverHeldMaps(want, c, isNullMap), "update-null-map", isNullMap)
	}
	if c.applied != nil {
		// Rule null-to-map: the reference's entry keeps a stored null the
		// config made a map (it sees no change of the field itself);
		// steady's entry lost it to the type change, and holds the map
		// above it if it held that before (uncoverHeldMaps; seed 232).
		isNullToMap := func(k, p string) bool {
			b, bok := lookup(c.gotBefore, p)
			a, _ := lookup(c.applied, p)
			_, isMap := a.(map[string]any)
			return k != key(c.manager, ownership.OpApply) && bok && b == nil && isMap && notSteadys(k, p)
		}
		want = drop(uncoverHeldMaps(want, c, isNullToMap), "null-to-map", isNullToMap)
	}
	containers := map[string][]string{} // entry -> the lists dropped from it
	want = drop(want, "update-containers", func(k, p string) bool {
		if !strings.HasSuffix(k, "/Update") || !notSteadys(k, p) {
			return false
		}
		v, ok := lookup(c.want.object, p)
		_, isList := v.([]any)
		if ok && v == nil {
			// The null structured-merge-diff's prune left of the list,
			// where steady has nothing.
			_, inGot := lookup(c.got.object, p)
			isList = !inGot
		}
		typ := typeAt(p)
		if ok && isList && (typ == "items" || typ == "pairs" || typ == "tags") {
			containers[k] = append(containers[k], p)
			return true
		}
		return false
	})
	if len(containers) > 0 {
		// A map steady's Update entry created is its leaf where the
		// reference's same entry holds, below it, only such lists.
		got = drop(got, "update-containers", func(k, p string) bool {
			return !slices.Contains(want[k], p) && !slices.ContainsFunc(want[k], func(q string) bool { return atOrBelow(q, p) }) &&
				slices.ContainsFunc(containers[k], func(q string) bool { return atOrBelow(q, p) && q != p })
		})
	}
	if !ownedEqual(got, want) {
		return false
	}
	for _, name := range slices.Compact(slices.Sorted(slices.Values(used))) {
		rules.hit(name)
	}
	return true
}

// uncoverHeldMaps serves rules update-null-map and null-to-map: for each
// of an entry's leaves in want that the rule drops (dropped: the step
// changed it between a map and null), it adds
// the deepest map above it that the entry held before the step, when the
// entry holds nothing else below that map. structured-merge-diff's update
// takes nothing from a map the object keeps, so the entry still holds
// that map; the null leaf hid it, and once the rule drops the null it is
// the entry's leaf, as it is in steady's entry.
func uncoverHeldMaps(want map[string][]string, c *cmp, dropped func(k, p string) bool) map[string][]string {
	out := make(map[string][]string, len(want))
	for k, paths := range want {
		out[k] = paths
		for _, p := range paths {
			if !dropped(k, p) {
				continue
			}
			q := p
			for {
				i := strings.LastIndex(q, ".")
				if i <= 0 {
					q = ""
					break
				}
				if q = q[:i]; c.heldBefore(k, q) {
					break
				}
			}
			if q == "" || slices.Contains(out[k], q) || slices.ContainsFunc(paths, func(o string) bool {
				return !dropped(k, o) && atOrBelow(o, q)
			}) {
				continue
			}
			out[k] = append(slices.Clone(out[k]), q)
			slices.Sort(out[k])
		}
	}
	return out
}

// typeAt returns the schema type (as childType names it) of path p in
// steadyPath's notation.
func typeAt(p string) string {
	typ := "obj"
	for p != "" {
		if p[0] == '[' {
			end := strings.Index(p, "]")
			if end < 0 {
				return ""
			}
			p = p[end+1:]
			typ = map[string]string{"items": "item", "pairs": "pair"}[typ]
			if typ == "" {
				typ = "scalar"
			}
			continue
		}
		end := strings.IndexAny(p[1:], ".[")
		if end < 0 {
			end = len(p) - 1
		}
		typ, _ = childType(typ, diff.Element{Kind: diff.FieldElem, Name: p[1 : end+1]})
		p = p[end+1:]
	}
	return typ
}

// lookup returns the value at path p (in steadyPath's notation) in obj.
func lookup(obj map[string]any, p string) (any, bool) {
	var v any = obj
	for p != "" {
		var seg string
		switch p[0] {
		case '.':
			end := strings.IndexAny(p[1:], ".[")
			if end < 0 {
				end = len(p) - 1
			}
			seg, p = p[1:end+1], p[end+1:]
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[seg]; !ok {
				return nil, false
			}
		case '[':
			end := strings.Index(p, "]")
			if end < 0 {
				return nil, false
			}
			seg, p = p[:end+1], p[end+1:]
			l, ok := v.([]any)
			if !ok {
				return nil, false
			}
			found := false
			for _, it := range l {
				if itemElem(it, seg) == seg {
					v, found = it, true
					break
				}
			}
			if !found {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return v, true
}

// itemElem spells list item it as a path element of seg's form: [=v] for
// a set, [k=v,...] with seg's key names for a keyed list.
func itemElem(it any, seg string) string {
	if strings.HasPrefix(seg, "[=") {
		return "[=" + js(it) + "]"
	}
	m, ok := it.(map[string]any)
	if !ok {
		return ""
	}
	var parts []string
	for _, kv := range strings.Split(seg[1:len(seg)-1], ",") {
		name, _, _ := strings.Cut(kv, "=")
		parts = append(parts, name+"="+js(m[name]))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func ownedEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// sameConflicts compares (manager, path) conflict pairs. Rule
// null-to-map: steady's extra pairs at a stored null the config makes a
// map are dropped (structured-merge-diff sees no change of the field
// itself). A step only one engine refused is judge's to excuse, never
// this rule's.
func sameConflicts(c *cmp, got []string, rules *ruleHits) bool {
	want := c.want.conflicts
	if slices.Equal(got, want) {
		return true
	}
	if got == nil || want == nil || c.applied == nil {
		return false // one refused: only judge's whole-step rules may excuse it
	}
	rest := slices.Clone(got)
	for _, w := range want {
		n := len(rest)
		if rest = slices.DeleteFunc(rest, func(g string) bool { return g == w }); len(rest) == n {
			return false
		}
	}
	rest = slices.DeleteFunc(rest, func(g string) bool {
		_, p, _ := strings.Cut(g, " ")
		b, bok := lookup(c.gotBefore, p)
		a, _ := lookup(c.applied, p)
		_, isMap := a.(map[string]any)
		return bok && b == nil && isMap
	})
	if len(rest) > 0 {
		return false
	}
	rules.hit("null-to-map")
	return true
}

// nullToMap reports whether steady refused an apply that the reference
// wrote for rule null-to-map only: each of steady's conflicts is on a path
// that held null before (in steady) and that the config makes a map.
func nullToMap(c *cmp) bool {
	if c.applied == nil || c.got.conflicts == nil || c.want.conflicts != nil {
		return false
	}
	for _, g := range c.got.conflicts {
		p := g[strings.Index(g, " ")+1:]
		b, bok := lookup(c.gotBefore, p)
		a, aok := lookup(c.applied, p)
		if _, isMap := a.(map[string]any); !bok || b != nil || !aok || !isMap {
			return false
		}
	}
	return true
}

// gen makes configs and updates over a small vocabulary, so that managers
// collide often.
type gen struct{ r *rand.Rand }

func (g *gen) scalar(null bool) any {
	n := 5
	if null {
		n = 6
	}
	switch g.r.IntN(n) {
	case 0:
		return int64(1)
	case 1:
		return int64(2)
	case 2:
		return "x"
	case 3:
		return "y"
	case 4:
		return true
	}
	return nil
}

// obj makes an object of type obj; some fields are null.
func (g *gen) obj(depth int) map[string]any {
	m := map[string]any{}
	for n := g.r.IntN(5); n > 0; n-- {
		switch g.r.IntN(11) {
		case 0, 1, 2:
			m[[]string{"a", "b", "c"}[g.r.IntN(3)]] = g.scalar(true)
		case 3:
			if depth < 2 {
				m["m"] = g.obj(depth + 1)
			}
		case 4:
			m["items"] = g.items()
		case 5:
			m["pairs"] = g.pairs()
		case 6:
			m["tags"] = g.tags()
		case 7:
			var l []any
			for k := g.r.IntN(3); k > 0; k-- {
				l = append(l, g.scalar(false))
			}
			m["args"] = append([]any{}, l...)
		case 8:
			if g.r.IntN(4) == 0 {
				m["sel"] = map[string]any{}
			} else {
				m["sel"] = map[string]any{"k": g.scalar(false)}
			}
		case 9, 10:
			// An untyped field whose type changes: scalar, null, map or list.
			switch g.r.IntN(5) {
			case 0, 1:
				m["n"] = g.scalar(true)
			case 2:
				m["n"] = map[string]any{"z": g.scalar(false)}
			case 3:
				m["n"] = map[string]any{}
			default:
				m["n"] = []any{g.scalar(false)}
			}
		}
	}
	return m
}

func (g *gen) items() []any {
	out := []any{}
	for _, name := range []string{"p", "q", "r"} {
		if g.r.IntN(2) == 0 {
			continue
		}
		it := map[string]any{"name": name}
		if g.r.IntN(2) == 0 {
			it["v"] = g.scalar(false)
		}
		if g.r.IntN(4) == 0 {
			it["w"] = map[string]any{"deep": g.scalar(false)}
		}
		out = append(out, it)
	}
	return out
}

func (g *gen) pairs() []any {
	out := []any{}
	for _, name := range []string{"p", "q"} {
		for _, port := range []int64{80, 443} {
			if g.r.IntN(3) != 0 {
				continue
			}
			it := map[string]any{"name": name, "port": port}
			if g.r.IntN(2) == 0 {
				it["v"] = g.scalar(false)
			}
			out = append(out, it)
		}
	}
	return out
}

func (g *gen) tags() []any {
	out := []any{}
	for _, v := range []any{"s", "t", int64(3)} {
		if g.r.IntN(2) == 0 {
			out = append(out, v)
		}
	}
	return out
}

// mutate returns the object an ordinary write stores: a fresh one, or
// live with some fields replaced or removed, or a field added inside an
// existing list item (which another manager may own).
func (g *gen) mutate(live map[string]any) map[string]any {
	if g.r.IntN(6) == 0 {
		return g.obj(0)
	}
	next := ownership.DeepCopy(live).(map[string]any)
	for n := g.r.IntN(3) + 1; n > 0; n-- {
		switch g.r.IntN(4) {
		case 0:
			keys := slices.Sorted(maps.Keys(next))
			if len(keys) > 0 {
				delete(next, keys[g.r.IntN(len(keys))])
			}
		case 1:
			if items, ok := next["items"].([]any); ok && len(items) > 0 {
				it := items[g.r.IntN(len(items))].(map[string]any)
				it["extra"] = g.scalar(false)
				continue
			}
			fallthrough
		default:
			for k, v := range g.obj(0) {
				next[k] = v
			}
		}
	}
	return next
}
