package ownership

import (
	"fmt"
	"slices"
)

// Update records an ordinary (non-apply) write of new over old by manager,
// as Kubernetes does for create, update and patch. It never conflicts:
//
//   - manager's Update entry gains the fields whose value changed or
//     appeared (and the list items that appeared), and loses the fields
//     that were removed;
//   - fields sent with their old value are not claimed;
//   - every other entry, including manager's own Apply entry, loses the
//     fields that changed or were removed (and what lay below them).
//
// old is nil for a create. Result.Object is new itself (converted with
// ToTree if it is a typed value); a null in new is a stored value, unlike
// in an applied config. Update never modifies its inputs. It returns an
// error for an empty manager, a value that is not a tree node, or a keyed
// list or set in new with duplicate or keyless items.
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
	var u updateWalk
	u.chg.reset()
	u.rem.reset()
	var o any
	if oldTree != nil {
		o = oldTree
	}
	if err := u.compare(o, oldTree != nil, newTree, true, cfg.schema.top(), 0, 0); err != nil {
		return Result{}, err
	}
	u.chg.nodes[0].member, u.rem.nodes[0].member = false, false
	changed, dup := u.chg.freeze()
	if dup >= 0 {
		return Result{}, errorf(u.chg.pathOf(dup), "duplicate item")
	}
	removed, _ := u.rem.freeze()
	taken := changed.Union(removed)

	out := make(Managed, 0, len(managed)+1)
	found := false
	for _, e := range managed {
		s := e.Set
		if e.Manager == manager && e.Operation == OpUpdate {
			found = true
			s = s.Without(removed).Union(changed)
		} else {
			s = s.Without(taken)
		}
		if !s.Empty() {
			out = append(out, Entry{Manager: e.Manager, Operation: e.Operation, Set: s})
		}
	}
	if !found && !changed.Empty() {
		out = append(out, Entry{Manager: manager, Operation: OpUpdate, Set: changed})
	}
	objChanged := u.events > 0 || oldTree == nil
	return Result{
		Object:        newTree,
		Managed:       out,
		ObjectChanged: objChanged,
		Changed:       objChanged || !out.Equal(managed),
	}, nil
}

// updateWalk compares old and new, recording changed paths (owned by the
// updater afterwards) in chg and removed ones in rem. Builder nodes of both
// are created in parallel; the ones that stay empty are dropped on freeze.
type updateWalk struct {
	chg, rem builder
	events   int
	keybuf   []byte
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
		om, nm := o.(map[string]any), n.(map[string]any)
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
		return nil
	case nk == kindList && (st == stratSet || st == stratKeyed):
		return u.compareItems(o.([]any), n.([]any), sch, cn, rn)
	}
	if !deepEqual(o, n) {
		u.events++
		u.chg.nodes[cn].member = true
		return validTree(n)
	}
	return nil
}

// compareItems compares keyed lists or sets item by item.
func (u *updateWalk) compareItems(ol, nl []any, sch *snode, cn, rn int32) error {
	kind := elemKey
	if sch.strategy() == stratSet {
		kind = elemValue
	}
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
	return nil
}

// texts returns the identities of list items. strict makes a missing key
// or a non-scalar set item an error (for new); otherwise it yields "".
func (u *updateWalk) texts(l []any, sch *snode, cn int32, strict bool) ([]string, error) {
	out := make([]string, len(l))
	for i, it := range l {
		if sch.strategy() == stratSet {
			if kindOf(it) != kindScalar {
				if strict {
					return nil, fmt.Errorf("ownership: %s: set item of type %T is not a scalar", u.chg.pathOf(cn), it)
				}
				continue
			}
			u.keybuf, _ = appendScalarText(u.keybuf[:0], it)
			out[i] = string(u.keybuf)
			continue
		}
		m, ok := it.(map[string]any)
		var err error
		if ok {
			if u.keybuf, err = appendKeyText(u.keybuf[:0], m, sch.strat.keys); err == nil {
				out[i] = string(u.keybuf)
			}
		} else {
			err = fmt.Errorf("keyed list item of type %T is not an object", it)
		}
		if err != nil {
			if strict {
				return nil, fmt.Errorf("ownership: %s: %v", u.chg.pathOf(cn), err)
			}
			out[i] = ""
		}
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

// addAll claims every member of the new value n at node cn.
func (u *updateWalk) addAll(n any, sch *snode, cn int32) error {
	switch v := n.(type) {
	case map[string]any:
		if sch.strategy() == stratAtomic || len(v) == 0 {
			u.chg.nodes[cn].member = true
			return validTree(n)
		}
		for k, e := range v {
			c := u.chg.add(cn, elemField, k, false)
			if err := u.addAll(e, sch.field(k), c); err != nil {
				return err
			}
		}
		return nil
	case []any:
		st := sch.strategy()
		if (st != stratSet && st != stratKeyed) || len(v) == 0 {
			u.chg.nodes[cn].member = true
			return validTree(n)
		}
		texts, err := u.texts(v, sch, cn, true)
		if err != nil {
			return err
		}
		kind := elemKey
		if st == stratSet {
			kind = elemValue
		}
		for i, t := range texts {
			c := u.chg.add(cn, kind, t, true)
			if st == stratKeyed {
				if err := u.addAll(v[i], sch.item(), c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if kindOf(n) == kindInvalid {
		return fmt.Errorf("ownership: %s: unsupported value of type %T", u.chg.pathOf(cn), n)
	}
	u.chg.nodes[cn].member = true
	return nil
}
