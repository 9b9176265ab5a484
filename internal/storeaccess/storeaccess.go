// Package storeaccess is how the project's own packages reach what a
// store.Store offers them but not its users: store/cache's lean listing and
// watch (a listing that reuses the objects the cache holds, a watch that
// decodes no previous states), a Store's served version, reconciletest's
// UID generator, and DecodeMeta for raw key-value readers.
//
// A Store embeds a Hooks (through an unexported alias, so the field is not
// part of its API) filled in by store.New; Of reads it back. The hooks are
// per Store, set once at construction: nothing here is package state.
package storeaccess

import "github.com/steady-go/steady/internal/nilness"

// Hooks is what a store.Store carries for Of. Its zero value carries
// nothing.
type Hooks struct{ impl any }

// NewHooks returns Hooks that carry impl, which the Store's package and its
// callers agree on the type of.
func NewHooks(impl any) Hooks { return Hooks{impl: impl} }

func (h *Hooks) storeHooks() any { return h.impl }

// holder has an unexported method, so only a type that embeds Hooks is one.
type holder interface{ storeHooks() any }

// Of returns what x's Hooks carry, or nil when x embeds none or is nil (a
// nil *store.Store included: its promoted method would dereference it).
func Of(x any) any {
	if h, ok := x.(holder); ok && !nilness.IsNil(h) {
		return h.storeHooks()
	}
	return nil
}
