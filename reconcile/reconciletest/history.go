package reconciletest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// childHistory is what the controller did to one child (an object of
// another kind than the primary, written by the controller), sorted by the
// state of its controller owner (of the primary kind) at the moment: live
// (its UID is the current object's of that name, and its deletion is not
// requested) or not.
type childHistory struct {
	owner string // the controller owner's name
	// liveDeletes and liveOverwrites count deletes, and puts that changed
	// its spec or its owner, while its owner was live.
	liveDeletes, liveOverwrites int
	// stale counts creates for an owner that was not live (gone, or
	// replaced by a newer object of its name): work from a stale view.
	stale int
}

// valueInfo is what the harness reads of one stored value: its metadata
// (ok false if it does not decode) and, once asked for, its fields
// (flatten). The history check reads every value twice, as the value a
// write puts and as the value the next write of its key replaces, and
// decoding is most of its cost: world.seen keeps the info of each key's
// current value, by revision, so each value is decoded once.
type valueInfo struct {
	meta      store.Meta
	ok        bool
	fields    map[string]string
	flattened bool
	spec      string
	specRead  bool
}

// seenValue is the info of the value a key got at revision rev.
type seenValue struct {
	rev  int64
	info *valueInfo
}

// decodeInfo decodes value's metadata.
func decodeInfo(value []byte) *valueInfo {
	m, _, err := storeaccess.DecodeMeta[store.Meta, store.Condition](value)
	return &valueInfo{meta: m, ok: err == nil}
}

// writtenInfo returns the info of the value wr puts; nil for a delete.
func writtenInfo(wr kv.Write) *valueInfo {
	if wr.Kind != kv.WritePut {
		return nil
	}
	return decodeInfo(wr.Value)
}

// flat returns the fields of value, the value v is the info of.
func (v *valueInfo) flat(value []byte) map[string]string {
	if !v.flattened {
		v.fields, v.flattened = flatten(value), true
	}
	return v.fields
}

// specJSON returns specOf(value), the value v is the info of.
func (v *valueInfo) specJSON(value []byte) string {
	if !v.specRead {
		v.spec, v.specRead = specOf(value), true
	}
	return v.spec
}

// infoAt returns the info of kvp, the current value of key (tagged with
// its space), decoding it unless world.seen has it at kvp's revision. It
// runs under txnMu.
func (w *world) infoAt(key string, kvp kv.KeyValue) *valueInfo {
	if s, ok := w.seen[key]; ok && s.rev == kvp.ModRevision {
		return s.info
	}
	info := decodeInfo(kvp.Value)
	w.seen[key] = seenValue{rev: kvp.ModRevision, info: info}
	return info
}

// rewritten records that key (tagged), whose value was at revision from,
// was rewritten unchanged at revision to (an injected conflict). It runs
// under txnMu.
func (w *world) rewritten(key string, from, to int64) {
	if s, ok := w.seen[key]; ok && s.rev == from {
		w.seen[key] = seenValue{rev: to, info: s.info}
	}
}

// childOwnerOf returns the controller owner of kind in the stored value
// info is the info of: its name and UID, or "" and "".
func childOwnerOf(info *valueInfo, kind string) (name, uid string) {
	if !info.ok {
		return "", ""
	}
	for _, o := range info.meta.Owners {
		if o.Controller && o.Kind == kind {
			return o.Name, o.UID
		}
	}
	return "", ""
}

// liveOwner reports whether the primary object called name exists now with
// UID uid and its deletion not requested. It runs under txnMu, so the
// store cannot move meanwhile.
func (w *world) liveOwner(name, uid string) bool {
	if name == "" || uid == "" {
		return false
	}
	key := w.prefix + name
	kvp, err := w.mem.Get(context.Background(), key)
	if err != nil {
		return false
	}
	info := w.infoAt(key, kvp)
	return info.ok && info.meta.UID == uid && !info.meta.DeletionRequested
}

// recordChild follows one accepted write of the controller to a child
// (old is the info of prev, info that of wr's value).
// It runs under txnMu, and takes w.mu.
func (w *world) recordChild(prev kv.KeyValue, old *valueInfo, found bool, wr kv.Write, info *valueInfo) {
	name, live, ok := w.childWriteOwner(old, found, wr, info)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	h := w.children[wr.Key]
	if h == nil {
		h = &childHistory{}
		w.children[wr.Key] = h
	}
	if name != "" {
		h.owner = name
	}
	switch {
	case wr.Kind == kv.WriteDelete:
		if live {
			h.liveDeletes++
		}
	case !found:
		if !live && name != "" {
			h.stale++
		}
	case live && (old.specJSON(prev.Value) != info.specJSON(wr.Value) || ownerKey(old) != ownerKey(info)):
		h.liveOverwrites++
	}
}

// childWriteOwner names the owner of the child a write of the controller
// deletes or puts (the previous value's, if any), and reports whether that
// owner is live; ok is false for a write that is neither.
func (w *world) childWriteOwner(old *valueInfo, found bool, wr kv.Write, info *valueInfo) (name string, live, ok bool) {
	var uid string
	switch {
	case wr.Kind == kv.WriteDelete && found:
		name, uid = childOwnerOf(old, w.kind)
		return name, w.liveOwner(name, uid), true
	case wr.Kind == kv.WritePut:
		name, uid = childOwnerOf(info, w.kind)
		live = w.liveOwner(name, uid)
		if found {
			pn, pu := childOwnerOf(old, w.kind)
			live = w.liveOwner(pn, pu)
			if pn != "" {
				name = pn
			}
		}
		return name, live, true
	}
	return "", false, false
}

// specOf returns the JSON of a stored value's spec.
func specOf(value []byte) string {
	var obj struct {
		Spec json.RawMessage `json:"spec"`
	}
	if json.Unmarshal(value, &obj) != nil {
		return ""
	}
	return string(obj.Spec)
}

// ownerKey names the owners of the value info is the info of, controller
// flag and UID included.
func ownerKey(info *valueInfo) string {
	if !info.ok {
		return ""
	}
	return fmt.Sprint(info.meta.Owners)
}

// fieldWrite is who last changed one field of an object, what the field
// held before that change ("" for absent), and who first gave it a value in
// the object's life.
type fieldWrite struct {
	manager string
	before  string
	// first is the manager of the first write that set the field: the
	// field's author. A field the controller authored (a child's image, a
	// status it reports) is its own to put back after another manager
	// changed it (repairing drift); any other is someone else's.
	first string
}

// recordWrite follows one accepted write: the history of the controller's
// children, and who changed which field of every object, in either store
// (for the lost-update check). prev is the key as it was before the write
// (found false if it did not exist); info is writtenInfo(wr), rev the
// revision the write got; controller says the controller's process made
// the write, marked that its reconciler did. It runs under txnMu.
func (w *world) recordWrite(prev kv.KeyValue, found bool, wr kv.Write, info *valueInfo, rev int64, controller, marked bool) {
	if wr.Key == leaseKey {
		return
	}
	var was *valueInfo
	if found {
		was = w.infoAt(wr.Key, prev)
	}
	if !strings.HasPrefix(wr.Key, w.prefix) && controller {
		w.recordChild(prev, was, found, wr, info)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if wr.Kind != kv.WritePut {
		delete(w.fields, wr.Key)
		delete(w.seen, wr.Key)
		return
	}
	var old map[string]string
	if found {
		old = was.flat(prev.Value)
	}
	cur := info.flat(wr.Value)
	w.seen[wr.Key] = seenValue{rev: rev, info: info}
	m := info.meta
	fw := w.fields[wr.Key]
	if fw == nil || !found {
		fw = map[string]fieldWrite{}
		w.fields[wr.Key] = fw
	}
	for _, path := range slices.Sorted(maps.Keys(union(old, cur))) {
		if old[path] == cur[path] {
			continue
		}
		last, ok := fw[path]
		if marked && ok && !w.ownManager(last.manager) && !w.ownManager(last.first) && cur[path] == last.before {
			w.violateLocked(HarmLostUpdate, "", fmt.Sprintf(
				"the reconciler's write of %s set %s back to %s, undoing what manager %q wrote there (%s): a write computed from a stale copy clobbered a field another manager owns (write it by apply, or with a revision precondition)",
				wr.Key, path, shown(cur[path]), last.manager, shown(old[path])))
			w.rep.LostUpdates++
			w.traceLocked("lost update of %s %s (manager %s's write undone)", wr.Key, path, last.manager)
		}
		first := last.first
		if !ok {
			first = m.LastWrite.Manager
		}
		fw[path] = fieldWrite{manager: m.LastWrite.Manager, before: old[path], first: first}
	}
}

// ownManager reports whether manager is the controller's: its reconciler's
// or its Loop's.
func (w *world) ownManager(manager string) bool {
	return manager == w.manager || manager == w.manager+"-loop"
}

func shown(v string) string {
	if v == "" {
		return "nothing"
	}
	return v
}

func union(a, b map[string]string) map[string]string {
	out := maps.Clone(b)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range a {
		out[k] = v
	}
	return out
}

// flatten returns the fields of a stored object that managers own, each
// as its path and its JSON value: the leaves of the spec and the status
// (a list is one leaf), each condition by type, and each label and
// annotation.
//
// It decodes only those parts of the value into maps: the rest (the
// managed fields above all) is skipped, which is most of the cost of a
// value decoded whole.
func flatten(value []byte) map[string]string {
	var obj struct {
		Spec       any             `json:"spec"`
		Status     any             `json:"status"`
		Conditions any             `json:"conditions"`
		Metadata   json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(value, &obj) != nil {
		return nil
	}
	out := map[string]string{}
	leaves(out, ".spec", obj.Spec)
	leaves(out, ".status", obj.Status)
	if conds, ok := obj.Conditions.([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				b, _ := json.Marshal(m)
				out[fmt.Sprintf(".conditions[type=%q]", m["type"])] = string(b)
			}
		}
	}
	var meta struct {
		Labels      any `json:"labels"`
		Annotations any `json:"annotations"`
	}
	if json.Unmarshal(obj.Metadata, &meta) == nil {
		for _, f := range []struct {
			k string
			v any
		}{{"labels", meta.Labels}, {"annotations", meta.Annotations}} {
			if m, ok := f.v.(map[string]any); ok {
				for name, v := range m {
					b, _ := json.Marshal(v)
					out[fmt.Sprintf(".metadata.%s[%q]", f.k, name)] = string(b)
				}
			}
		}
	}
	return out
}

func leaves(out map[string]string, path string, v any) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			leaves(out, path+"."+k, x)
		}
		return
	}
	if v == nil {
		return
	}
	b, _ := json.Marshal(v)
	out[path] = string(b)
}

// leftChild is a child left at the end: its controller owner's name and
// its spec, and whether it is an orphan: no object of the primary kind
// has its controller owner's UID (the owner is gone, or replaced by a
// newer object of its name; for a reference without a UID, no object has
// its name).
type leftChild struct {
	owner, spec string
	orphan      bool
}

// finalChildren returns every object of another kind whose controller
// owner is of the primary kind, by key.
func (w *world) finalChildren(ctx context.Context) map[string]leftChild {
	// Nothing writes any more; txnMu guards world.seen.
	w.txnMu.Lock()
	defer w.txnMu.Unlock()
	out := map[string]leftChild{}
	for _, sp := range []*space{w.main, w.other} {
		l, err := sp.mem.List(ctx, "", kv.ListOptions{})
		if err != nil {
			continue
		}
		for _, kv := range l.KVs {
			if sp == w.main && (strings.HasPrefix(kv.Key, w.prefix) || kv.Key == leaseKey) {
				continue
			}
			info := w.infoAt(sp.tag+kv.Key, kv)
			if o, uid := childOwnerOf(info, w.kind); o != "" {
				out[sp.tag+kv.Key] = leftChild{owner: o, spec: info.specJSON(kv.Value), orphan: !w.ownerExists(ctx, o, uid)}
			}
		}
	}
	return out
}

// ownerExists reports whether the primary object called name exists with
// UID uid (with any UID for an owner reference without one, which names
// its owner by name only), its deletion requested or not. It runs under
// txnMu.
func (w *world) ownerExists(ctx context.Context, name, uid string) bool {
	key := w.prefix + name
	kvp, err := w.mem.Get(ctx, key)
	if err != nil {
		return false
	}
	info := w.infoAt(key, kvp)
	return info.ok && (uid == "" || info.meta.UID == uid)
}

// flagOrphans flags every child left at the end whose owner is gone for
// good (no object of its name has its UID): whatever competed with the
// owner, or kept the test from recreating it, and whatever the fault-free
// run does, nothing cleaned it up. A controller that never cleans up after
// a deleted owner leaks in the fault-free run too, so comparing with it
// alone let that bug pass every schedule whose two runs leaked alike.
func (w *world) flagOrphans() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, key := range slices.Sorted(maps.Keys(w.leftover)) {
		if c := w.leftover[key]; c.orphan {
			w.violateLocked(HarmEndState, key, fmt.Sprintf(
				"leaked child: %s (a child of %s) is left at the end, its owner gone: nothing deleted it (a finalizer that deletes the children before it is removed, or a garbage collector, gc.New, run with Env.Go)",
				key, c.owner))
		}
	}
}

// compareHistory checks the children of every primary object that no
// competing write touched, and that both runs recreated alike, against the
// fault-free reference run of the same seed (ref). Primary objects get the
// same UIDs in both runs, so children named after them have the same keys.
//
// Faults may make a controller do more than the reference run, as long as
// it repairs it: a cache sent back in time shows an owner already deleted,
// and the controller creates children for it, then deletes them once it
// sees the owner gone. That is a note. They may also make it do less (it
// may never get round to a child before its owner is deleted). What they
// must not make it do is harm:
//   - delete a child, or overwrite its spec or owners, while its owner is
//     live, more often than the reference run does (HarmLiveAction);
//   - leave a child at the end that the reference run does not leave (a
//     leaked child), not leave one it leaves (a missing child), or leave
//     one with another spec (HarmEndState). A child whose owner is gone
//     for good is not compared: flagOrphans flagged it in each run.
func (w *world) compareHistory(ref *world) {
	w.mu.Lock()
	defer w.mu.Unlock()
	skip := func(owner string) bool {
		return owner == "" || w.competed[owner] || w.unrecreated[owner] || ref.unrecreated[owner]
	}
	w.compareChildrenLocked(ref, skip)
	w.compareLeftoversLocked(ref, skip)
}

// compareChildrenLocked flags a child acted on while its owner was live
// more often than in the reference run.
func (w *world) compareChildrenLocked(ref *world, skip func(owner string) bool) {
	for _, key := range slices.Sorted(maps.Keys(w.children)) {
		h := w.children[key]
		if skip(h.owner) {
			continue
		}
		r := ref.children[key]
		if r == nil {
			r = &childHistory{}
		}
		if h.liveDeletes > r.liveDeletes {
			w.violateLocked(HarmLiveAction, key, fmt.Sprintf(
				"the controller deleted %s while its owner %s was live and unchanged, %d times (%d in the fault-free run of this seed): did it act on a stale view (a UID or a fresh read would tell)?",
				key, h.owner, h.liveDeletes, r.liveDeletes))
		}
		if h.liveOverwrites > r.liveOverwrites {
			w.violateLocked(HarmLiveAction, key, fmt.Sprintf(
				"the controller changed the spec or owners of %s while its owner %s was live and unchanged, %d times (%d in the fault-free run of this seed): did it act on a stale view?",
				key, h.owner, h.liveOverwrites, r.liveOverwrites))
		}
		if _, left := w.leftover[key]; h.stale > 0 && !left {
			w.noteLocked("the controller created %s for an owner %s that was gone or replaced (a stale view), and collected it again", key, h.owner)
		}
	}
}

// compareLeftoversLocked flags a child leaked, missing or with another
// spec at the end, against the reference run.
func (w *world) compareLeftoversLocked(ref *world, skip func(owner string) bool) {
	for _, key := range slices.Sorted(maps.Keys(w.leftover)) {
		c := w.leftover[key]
		r, ok := ref.leftover[key]
		if c.orphan || skip(c.owner) {
			continue // an orphan is a leak in any run (flagOrphans)
		}
		switch {
		case !ok:
			w.violateLocked(HarmEndState, key, fmt.Sprintf(
				"leaked child: %s (a child of %s) is left at the end, and the fault-free run of this seed does not leave it: a cleanup was lost",
				key, c.owner))
		case r.spec != c.spec:
			w.violateLocked(HarmEndState, key, fmt.Sprintf(
				"wrong child: %s (a child of %s) ends with spec %s, the fault-free run of this seed with %s",
				key, c.owner, c.spec, r.spec))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(ref.leftover)) {
		r := ref.leftover[key]
		if _, ok := w.leftover[key]; ok || skip(r.owner) {
			continue
		}
		w.violateLocked(HarmEndState, key, fmt.Sprintf(
			"missing child: %s (a child of %s) is left at the end of the fault-free run of this seed, and not of this one",
			key, r.owner))
	}
}
