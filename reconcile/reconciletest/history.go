package reconciletest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/steady-go/steady/store"
)

// childHistory is what the controller did to one child (an object of
// another kind than the primary, written by the controller): how many
// times it created and deleted it, and the primary object that owns it
// (its controller owner of the primary kind, by name).
type childHistory struct {
	owner            string
	creates, deletes int
}

// fieldWrite is who last changed one field of a primary object, and what
// the field held before that change ("" for absent).
type fieldWrite struct {
	manager string
	before  string
}

// recordWrite follows one accepted write: the history of the controller's
// children, and who changed which field of a primary object (for the
// lost-update check). prev is the key as it was before the write (found
// false if it did not exist); controller says the controller's process made
// the write, marked that its reconciler did. It runs under txnMu.
func (w *world) recordWrite(prev store.KV, found bool, wr store.Write, controller, marked bool) {
	if wr.Key == leaseKey {
		return
	}
	primary := strings.HasPrefix(wr.Key, w.prefix)
	w.mu.Lock()
	defer w.mu.Unlock()
	if !primary {
		if !controller {
			return
		}
		h := w.children[wr.Key]
		if h == nil {
			h = &childHistory{}
			w.children[wr.Key] = h
		}
		switch {
		case wr.Kind == store.WriteDelete && found:
			h.deletes++
			h.owner = ownerName(prev.Value, w.kind)
		case wr.Kind == store.WritePut && !found:
			h.creates++
			h.owner = ownerName(wr.Value, w.kind)
		}
		return
	}
	if wr.Kind != store.WritePut {
		delete(w.fields, wr.Key)
		return
	}
	var old map[string]string
	if found {
		old = flatten(prev.Value)
	}
	cur := flatten(wr.Value)
	m, _, _ := store.DecodeMeta(wr.Value)
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
		if marked && ok && !w.ownManager(last.manager) && cur[path] == last.before {
			w.violateLocked("", fmt.Sprintf(
				"lost update: the reconciler's write of %s set %s back to %s, undoing what manager %q wrote there (%s): a write computed from a stale copy clobbered a field another manager owns (write it by apply, or with a revision precondition)",
				wr.Key, path, shown(cur[path]), last.manager, shown(old[path])))
			w.rep.LostUpdates++
			w.traceLocked("lost update of %s %s (manager %s's write undone)", wr.Key, path, last.manager)
		}
		fw[path] = fieldWrite{manager: m.LastWrite.Manager, before: old[path]}
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
func flatten(value []byte) map[string]string {
	var obj map[string]any
	if json.Unmarshal(value, &obj) != nil {
		return nil
	}
	out := map[string]string{}
	leaves(out, ".spec", obj["spec"])
	leaves(out, ".status", obj["status"])
	if conds, ok := obj["conditions"].([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				b, _ := json.Marshal(m)
				out[fmt.Sprintf(".conditions[type=%q]", m["type"])] = string(b)
			}
		}
	}
	if meta, ok := obj["metadata"].(map[string]any); ok {
		for _, k := range []string{"labels", "annotations"} {
			if m, ok := meta[k].(map[string]any); ok {
				for name, v := range m {
					b, _ := json.Marshal(v)
					out[fmt.Sprintf(".metadata.%s[%q]", k, name)] = string(b)
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

// ownerName returns the name of the controller owner of kind in a stored
// value, or "".
func ownerName(value []byte, kind string) string {
	m, _, err := store.DecodeMeta(value)
	if err != nil {
		return ""
	}
	for _, o := range m.Owners {
		if o.Controller && o.Kind == kind {
			return o.Name
		}
	}
	return ""
}

// finalChildren returns every object of another kind whose controller
// owner is of the primary kind, by key, with its owner's name.
func (w *world) finalChildren(ctx context.Context) map[string]string {
	out := map[string]string{}
	l, err := w.mem.List(ctx, "", store.KVListOptions{})
	if err != nil {
		return out
	}
	for _, kv := range l.KVs {
		if strings.HasPrefix(kv.Key, w.prefix) || kv.Key == leaseKey {
			continue
		}
		if o := ownerName(kv.Value, w.kind); o != "" {
			out[kv.Key] = o
		}
	}
	return out
}

// compareHistory checks the children of every primary object that no
// competing write touched against the fault-free reference run of the
// same seed (ref): a child the controller deleted, or created, more often
// than there, is an unexpected delete or recreate; a child left at the end
// that the reference run did not leave is a leaked child. Faults may make
// the controller do less than the reference run (it may never get round
// to a pod before its set is deleted), never more.
func (w *world) compareHistory(ref *world) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, key := range slices.Sorted(maps.Keys(w.children)) {
		h := w.children[key]
		if h.owner == "" || w.competed[h.owner] {
			continue
		}
		r := ref.children[key]
		if r == nil {
			r = &childHistory{}
		}
		if h.deletes > r.deletes {
			w.violateLocked(key, fmt.Sprintf(
				"unexpected delete: the controller deleted %s (a child of %s) %d times, %d in the fault-free run of this seed: did it act on a stale view (a UID or a fresh read would tell)?",
				key, h.owner, h.deletes, r.deletes))
		}
		if h.creates > max(r.creates, 1) {
			w.violateLocked(key, fmt.Sprintf(
				"unexpected recreate: the controller created %s (a child of %s) %d times, %d in the fault-free run of this seed",
				key, h.owner, h.creates, r.creates))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(w.leftover)) {
		owner := w.leftover[key]
		if _, ok := ref.leftover[key]; ok || w.competed[owner] {
			continue
		}
		w.violateLocked(key, fmt.Sprintf(
			"leaked child: %s (a child of %s) is left at the end, and the fault-free run of this seed does not leave it: a cleanup was lost",
			key, owner))
	}
}
