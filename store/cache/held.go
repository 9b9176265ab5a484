package cache

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/steady-go/steady/store"
)

// held is the Cache's objects by name for Get, which a Loop's workers call
// once per reconcile while Run's goroutine applies changes on another
// core. A Get under c.mu wrote the RWMutex's reader count, a cache line
// each apply's Lock writes too, so that line moved between the cores twice
// per Get and once per apply. A Get of held writes nothing: it loads the
// table, probes it, and loads the slot's object.
//
// held is an open-addressed table (linear probing) of one slot per name,
// which a change of an object held stores into, with no write to the
// table; a new name is published in a free place, a deleted one leaves its
// slot with no object (a tombstone, reused if the name comes back), and
// the table is made anew, without its tombstones, once live slots and
// tombstones fill half of it. Only Run's goroutine writes, under c.mu, so
// a Get that follows a Revision, WaitFor or List that saw a change sees it
// (or a later one). It costs a slot (name and pointer) and two table
// places per name, well under a second map's share of a sync.Map's trie.
type held[S, T any] struct {
	tab  atomic.Pointer[heldTable[S, T]]
	used int // places taken in tab, tombstones included; writer only
	live int // slots with an object; writer only
}

type heldTable[S, T any] struct {
	seed  maphash.Seed
	slots []atomic.Pointer[heldSlot[S, T]] // length a power of two
}

// heldSlot is one name's place in held: obj is the object held under name,
// nil once it is deleted.
type heldSlot[S, T any] struct {
	name string
	obj  atomic.Pointer[store.Object[S, T]]
}

// find returns name's slot in t, nil for none, and where the probe for
// name ended: its slot's place, or the free place after its run.
func (t *heldTable[S, T]) find(name string) (*heldSlot[S, T], int) {
	mask := len(t.slots) - 1
	for i := int(maphash.String(t.seed, name)) & mask; ; i = (i + 1) & mask {
		s := t.slots[i].Load()
		if s == nil || s.name == name {
			return s, i
		}
	}
}

func (h *held[S, T]) get(name string) *store.Object[S, T] {
	t := h.tab.Load()
	if t == nil {
		return nil
	}
	if s, _ := t.find(name); s != nil {
		return s.obj.Load()
	}
	return nil
}

func (h *held[S, T]) put(name string, obj *store.Object[S, T]) {
	t := h.tab.Load()
	if t != nil {
		if s, i := t.find(name); s != nil {
			if s.obj.Swap(obj) == nil {
				h.live++
			}
			return
		} else if 2*(h.used+1) <= len(t.slots) {
			s = &heldSlot[S, T]{name: name}
			s.obj.Store(obj)
			t.slots[i].Store(s)
			h.used++
			h.live++
			return
		}
	}
	h.grow(t)
	h.put(name, obj)
}

func (h *held[S, T]) delete(name string) {
	if t := h.tab.Load(); t != nil {
		if s, _ := t.find(name); s != nil && s.obj.Swap(nil) != nil {
			h.live--
		}
	}
}

// grow publishes a new table, for twice the live slots and one more, with
// t's live slots (the same slots: a Get still on t sees what they hold)
// and none of its tombstones.
func (h *held[S, T]) grow(t *heldTable[S, T]) {
	n := 16
	for n < 4*(h.live+1) {
		n *= 2
	}
	nt := &heldTable[S, T]{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[heldSlot[S, T]], n)}
	h.used = 0
	if t != nil {
		for i := range t.slots {
			if s := t.slots[i].Load(); s != nil && s.obj.Load() != nil {
				_, j := nt.find(s.name)
				nt.slots[j].Store(s)
				h.used++
			}
		}
	}
	h.tab.Store(nt)
}
