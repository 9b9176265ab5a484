package ownership

import (
	"fmt"
	"slices"
	"sync"
)

// Update records an ordinary (non-apply) write of new over old by manager,
// as Kubernetes does for create, update and patch. It never conflicts:
//
//   - manager's Update entry gains the fields whose value changed or
//     appeared (and the list items, maps and keyed lists or sets that
//     appeared), and loses the fields that were removed;
//   - fields sent with their old value are not claimed;
//   - every other entry, including manager's own Apply entry, loses the
//     fields that changed or were removed (and what lay below them); an
//     Apply entry left with nothing inside a map the new object keeps
//     owns that map instead.
//
// old is nil for a create. Result.Object is new itself (converted with
// ToTree if it is a typed value); a null in new is a stored value, unlike
// in an applied config. Update never modifies its inputs. It returns an
// error and a zero Result for an empty manager, a value that is not a tree
// node, a keyed list or set in new with duplicate or keyless items, or a
// new object nested deeper than MaxDepth maps and lists, as one that holds
// itself is (wrapping ErrTooDeep, naming the path where the walk stopped).
func Update(old, new any, manager string, managed Managed, opts ...Option) (Result, error) {
	cfg := collect(opts)
	if manager == "" {
		return Result{}, fmt.Errorf("ownership: Update needs a manager name")
	}
	oldTree, err := asTree(old)
	if err != nil {
		return Result{}, err
	}
	newTree, err := asTree(new)
	if err != nil {
		return Result{}, err
	}
	if cfg.schema == nil {
		if cfg.schema, err = typedSchema(new); err != nil {
			return Result{}, err
		}
	}
	if newTree == nil {
		newTree = map[string]any{}
	}
	u := updateWalks.Get().(*updateWalk)
	changed, removed, err := u.sets(oldTree, newTree, cfg.schema.top())
	events := u.events
	u.release()
	if err != nil {
		return Result{}, err
	}
	out := updatedEntries(managed, manager, changed, removed, newTree, cfg.schema.top())
	objChanged := events > 0 || oldTree == nil
	return Result{
		Object:        newTree,
		Managed:       out,
		ObjectChanged: objChanged,
		Changed:       objChanged || !out.Equal(managed),
	}, nil
}

// sets compares oldTree (nil for a create) with newTree and returns the
// paths that changed or appeared, and those removed.
func (u *updateWalk) sets(oldTree, newTree map[string]any, sch *snode) (changed, removed *Set, err error) {
	u.chg.reset()
	u.rem.reset()
	u.depth = 0
	var o any
	if oldTree != nil {
		o = oldTree
	}
	if err := u.compare(o, oldTree != nil, newTree, true, sch, 0, 0); err != nil {
		return nil, nil, err
	}
	u.chg.nodes[0].member, u.rem.nodes[0].member = false, false
	changed, dup := u.chg.freeze()
	if dup >= 0 {
		return nil, nil, errorf(u.chg.pathOf(dup), "duplicate item")
	}
	removed, _ = u.rem.freeze()
	return changed, removed, nil
}

// updatedEntries returns managed after manager's Update changed (and
// took) changed and removed removed, in object newTree of schema sch.
func updatedEntries(managed Managed, manager string, changed, removed *Set, newTree map[string]any, sch *snode) Managed {
	taken := changed.Union(removed)
	out := make(Managed, 0, len(managed)+1)
	found := false
	for _, e := range managed {
		s := e.Set
		switch {
		case e.Manager == manager && e.Operation == OpUpdate:
			found = true
			s = s.Without(removed).Union(changed)
		case e.Operation == OpApply:
			s = keepEmptied(s, s.Without(taken), newTree, sch)
		default:
			s = s.Without(taken)
		}
		if !s.Empty() {
			out = append(out, Entry{Manager: e.Manager, Operation: e.Operation, Set: s})
		}
	}
	if !found && !changed.Empty() {
		out = append(out, Entry{Manager: manager, Operation: OpUpdate, Set: changed})
	}
	return out
}

// updateWalk compares old and new, recording changed paths (owned by the
// updater afterwards) in chg and removed ones in rem. Builder nodes of both
// are created in parallel; the ones that stay empty are dropped on freeze.
type updateWalk struct {
	chg, rem builder
	events   int
	depth    int // the maps and lists of new the walk is in (see MaxDepth)
	keybuf   []byte
}

// updateWalks keeps walks for reuse: a typed store's status write
// compares the whole object, and growing both builders from empty at each
// write was about a ninth of what the fleet example allocated.
var updateWalks = sync.Pool{New: func() any { return new(updateWalk) }}

// release returns u to updateWalks, emptied (its builders' names would
// keep the trees they came from alive); a walk grown past maxKeptNodes by
// a large object is left to the GC.
func (u *updateWalk) release() {
	const maxKeptNodes = 4096
	if cap(u.chg.nodes) > maxKeptNodes || cap(u.rem.nodes) > maxKeptNodes {
		return
	}
	clear(u.chg.nodes)
	clear(u.rem.nodes)
	u.chg.nodes, u.rem.nodes, u.events, u.keybuf = u.chg.nodes[:0], u.rem.nodes[:0], 0, u.keybuf[:0]
	updateWalks.Put(u)
}

func (u *updateWalk) child(cn, rn int32, kind uint8, name string) (int32, int32) {
	return u.chg.add(cn, kind, name, false), u.rem.add(rn, kind, name, false)
}

func (u *updateWalk) compare(o any, ook bool, n any, nok bool, sch *snode, cn, rn int32) error {
	switch {
	case !ook && !nok:
		return nil
	case !nok:
		u.events++
		u.rem.nodes[rn].member = true
		return nil
	case !ook:
		u.events++
		return u.addAll(n, sch, cn)
	}
	ok, nk := kindOf(o), kindOf(n)
	if nk == kindInvalid {
		return fmt.Errorf("ownership: %s: unsupported value of type %T", u.chg.pathOf(cn), n)
	}
	if ok != nk {
		u.events++
		u.rem.nodes[rn].member = true
		return u.addAll(n, sch, cn)
	}
	st := sch.strategy()
	switch {
	case nk == kindMap && st != stratAtomic:
		return u.compareMaps(o.(map[string]any), n.(map[string]any), sch, cn, rn)
	case nk == kindList && (st == stratSet || st == stratKeyed):
		return u.compareItems(o.([]any), n.([]any), sch, cn, rn)
	}
	if budget := MaxDepth - u.depth; !deepEqual(o, n, budget) {
		u.events++
		u.chg.nodes[cn].member = true
		return u.valid(n, budget, cn)
	}
	return nil
}

// valid is validTree of new's value n at node cn, with its error's path.
func (u *updateWalk) valid(n any, budget int, cn int32) error {
	if err := validTree(n, budget); err != nil {
		return treeError(u.chg.pathOf(cn), err)
	}
	return nil
}

// enter counts a map or list of new at node cn, or returns the error for
// one past MaxDepth; the caller's successful return uncounts it. (An
// error ends the walk: sets starts the next one at depth 0.)
func (u *updateWalk) enter(cn int32) error {
	if u.depth >= MaxDepth {
		return tooDeep(u.chg.pathOf(cn))
	}
	u.depth++
	return nil
}

// compareMaps compares granular maps field by field.
func (u *updateWalk) compareMaps(om, nm map[string]any, sch *snode, cn, rn int32) error {
	if err := u.enter(cn); err != nil {
		return err
	}
	for k, nv := range nm {
		ov, ook := om[k]
		c, r := u.child(cn, rn, elemField, k)
		if err := u.compare(ov, ook, nv, true, sch.field(k), c, r); err != nil {
			return err
		}
	}
	for k, ov := range om {
		if _, ok := nm[k]; !ok {
			c, r := u.child(cn, rn, elemField, k)
			if err := u.compare(ov, true, nil, false, sch.field(k), c, r); err != nil {
				return err
			}
		}
	}
	u.depth--
	return nil
}

// compareItems compares keyed lists or sets item by item.
func (u *updateWalk) compareItems(ol, nl []any, sch *snode, cn, rn int32) error {
	if err := u.enter(cn); err != nil {
		return err
	}
	kind := sch.itemKind()
	ot, err := u.texts(ol, sch, cn, false)
	if err != nil {
		return err
	}
	nt, err := u.texts(nl, sch, cn, true)
	if err != nil {
		return err
	}
	for i, t := range nt {
		j := slices.Index(ot, t)
		c, r := u.child(cn, rn, kind, t)
		var ov any
		if j >= 0 {
			ov = ol[j]
		}
		if j < 0 {
			u.chg.nodes[c].member = true
		}
		if err := u.compare(ov, j >= 0, nl[i], true, sch.item(), c, r); err != nil {
			return err
		}
	}
	for j, t := range ot {
		if t != "" && !slices.Contains(nt, t) {
			c, r := u.child(cn, rn, kind, t)
			if err := u.compare(ol[j], true, nil, false, sch.item(), c, r); err != nil {
				return err
			}
		}
	}
	if len(ol) != len(nl) && (len(ol) == 0 || len(nl) == 0) {
		u.events++ // [] versus items: the list itself changed shape
	}
	u.depth--
	return nil
}

// texts returns the identities of list items. strict makes a missing key
// or a non-scalar set item an error (for new); otherwise it yields "".
func (u *updateWalk) texts(l []any, sch *snode, cn int32, strict bool) ([]string, error) {
	out, err := itemNames(&u.keybuf, l, sch)
	if err != nil && strict {
		return nil, fmt.Errorf("ownership: %s: %v", u.chg.pathOf(cn), err)
	}
	if strict {
		seen := make(map[string]bool, len(out))
		for _, t := range out {
			if seen[t] {
				return nil, fmt.Errorf("ownership: %s: duplicate item %s", u.chg.pathOf(cn), t)
			}
			seen[t] = true
		}
	}
	return out, nil
}

// addAll claims every member of the new value n at node cn. The updater
// owns a map or list it created, not only what is inside, as in
// structured-merge-diff: when others take or remove what is inside, the
// container stays its own (issue 23).
func (u *updateWalk) addAll(n any, sch *snode, cn int32) error {
	u.chg.nodes[cn].member = true
	switch v := n.(type) {
	case map[string]any:
		if sch.strategy() == stratAtomic {
			return u.valid(n, MaxDepth-u.depth, cn)
		}
		if err := u.enter(cn); err != nil {
			return err
		}
		for k, e := range v {
			c := u.chg.add(cn, elemField, k, false)
			if err := u.addAll(e, sch.field(k), c); err != nil {
				return err
			}
		}
		u.depth--
		return nil
	case []any:
		if st := sch.strategy(); st != stratSet && st != stratKeyed {
			return u.valid(n, MaxDepth-u.depth, cn)
		}
		return u.addItems(v, sch, cn)
	}
	if kindOf(n) == kindInvalid {
		return fmt.Errorf("ownership: %s: unsupported value of type %T", u.chg.pathOf(cn), n)
	}
	return nil
}

// addItems claims every item of new set or keyed list l at node cn.
func (u *updateWalk) addItems(l []any, sch *snode, cn int32) error {
	if err := u.enter(cn); err != nil {
		return err
	}
	texts, err := u.texts(l, sch, cn, true)
	if err != nil {
		return err
	}
	kind := sch.itemKind()
	for i, t := range texts {
		c := u.chg.add(cn, kind, t, true)
		if kind == elemKey {
			if err := u.addAll(l[i], sch.item(), c); err != nil {
				return err
			}
		}
	}
	u.depth--
	return nil
}

// keepEmptied returns after (what remains of an entry's set s once a write
// took paths from it) plus, for each granular map of obj that s owned
// fields in and after owns nothing in any more, the deepest such map on
// each path. structured-merge-diff's sets list every map key without a
// declared type (and an updater's every container it added), so there the
// entry keeps such a map once what was inside it goes; steady's sets list
// only what lies inside, and this keeps the map explicitly: a type change
// of it still conflicts with the entry, and pruning keeps it for the entry
// until the entry stops applying it (issue 23). Items of keyed lists are
// never kept this way: no set lists an item because it listed a field
// inside it.
func keepEmptied(s, after *Set, obj map[string]any, sch *snode) *Set {
	if s.Empty() || len(after.nodes) == len(s.nodes) && after.Equal(s) {
		return after
	}
	k := emptiedKeeper{s: s, after: after}
	k.b.reset()
	k.walk(0, after.root(), obj, sch, 0, false)
	if k.kept == 0 {
		return after
	}
	kept, _ := k.b.freeze()
	return after.Union(kept)
}

type emptiedKeeper struct {
	s, after *Set
	b        builder // the kept maps
	kept     int
	buf      []byte
}

// walk visits node i of s, whose value in the object is v (of schema sch),
// with ai the same node in after (or -1) and bi in the builder. addable
// says the node is a map key, which may be kept. It reports whether it
// kept a map at or below i.
func (k *emptiedKeeper) walk(i, ai int32, v any, sch *snode, bi int32, addable bool) bool {
	switch x := v.(type) {
	case map[string]any:
		if sch.strategy() == stratAtomic {
			return false
		}
		if k.walkFields(i, ai, x, sch, bi) {
			return true
		}
		if addable && ai < 0 && !k.s.nodes[i].member {
			k.b.nodes[bi].member = true
			k.kept++
			return true
		}
	case []any:
		if sch.strategy() == stratKeyed {
			return k.walkItems(i, ai, x, sch, bi)
		}
	}
	return false
}

// walkFields is walk for the fields of map x at node i.
func (k *emptiedKeeper) walkFields(i, ai int32, x map[string]any, sch *snode, bi int32) bool {
	n := k.s.nodes[i]
	below := false
	for c := n.lo; c < n.hi; c++ {
		cn := k.s.nodes[c]
		if cn.kind != elemField {
			continue
		}
		if cv, ok := x[cn.name]; ok {
			cb := k.b.find(bi, cn.kind, cn.name)
			below = k.walk(c, k.after.child(ai, cn.kind, cn.name), cv, sch.field(cn.name), cb, true) || below
		}
	}
	return below
}

// walkItems is walk for the items of keyed list x at node i.
func (k *emptiedKeeper) walkItems(i, ai int32, x []any, sch *snode, bi int32) bool {
	below := false
	for _, it := range x {
		var err error
		if k.buf, err = appendItemName(k.buf[:0], it, sch); err != nil {
			continue
		}
		c := k.s.childBytes(i, elemKey, k.buf)
		if c < 0 {
			continue
		}
		name := k.s.nodes[c].name
		cb := k.b.find(bi, elemKey, name)
		below = k.walk(c, k.after.child(ai, elemKey, name), it, sch.item(), cb, false) || below
	}
	return below
}
