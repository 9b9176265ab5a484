package ownership

import (
	"fmt"
	"strings"

	"github.com/steady-go/steady/diff"
)

// Operation is how a manager last wrote its fields. Field ownership knows
// two, OpApply and OpUpdate; the store records the others in an object's
// store.LastWrite, so that one type names every kind of write.
type Operation string

const (
	// OpApply is a server-side apply: the manager declares the fields it
	// wants, and its set is exactly those fields.
	OpApply Operation = "Apply"
	// OpUpdate is an ordinary write: the manager owns the fields it changed.
	OpUpdate Operation = "Update"

	// OpCreate is a store Create (its ownership is recorded as OpUpdate).
	OpCreate Operation = "Create"
	// OpUpdateStatus is a store UpdateStatus (ownership: OpUpdate).
	OpUpdateStatus Operation = "UpdateStatus"
	// OpApplyStatus is a store ApplyStatus (ownership: OpApply).
	OpApplyStatus Operation = "ApplyStatus"
	// OpDeleteMark is a store Delete that only marked the object
	// (DeletionRequested) because finalizers remain.
	OpDeleteMark Operation = "Delete"
)

// Entry is one manager's owned fields for one operation. A manager may have
// both an Apply and an Update entry.
type Entry struct {
	Manager   string
	Operation Operation
	Set       *Set
}

// Managed is the ownership record of one object: at most one Entry per
// (Manager, Operation), none with an empty Set. Its order is kept by Apply
// and Update, which append new entries at the end.
type Managed []Entry

// Find returns the index of the (manager, op) entry, or -1.
func (m Managed) Find(manager string, op Operation) int {
	for i := range m {
		if m[i].Manager == manager && m[i].Operation == op {
			return i
		}
	}
	return -1
}

// Owners returns the managers whose sets contain p, in m's order, each
// once.
func (m Managed) Owners(p diff.Path) []string {
	var out []string
	for _, e := range m {
		if e.Set.Has(p) && !contains(out, e.Manager) {
			out = append(out, e.Manager)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Equal reports whether m and n hold the same entries in the same order.
func (m Managed) Equal(n Managed) bool {
	if len(m) != len(n) {
		return false
	}
	for i := range m {
		if m[i].Manager != n[i].Manager || m[i].Operation != n[i].Operation || !m[i].Set.Equal(n[i].Set) {
			return false
		}
	}
	return true
}

// Conflict is one field that an apply would change although another
// manager owns it.
type Conflict struct {
	// Manager owns Path.
	Manager string
	// Operation is how Manager took it.
	Operation Operation
	// Path is the owned field.
	Path diff.Path
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s is managed by %q (%s)", c.Path, c.Manager, c.Operation)
}

// ConflictError is returned by Apply when the config would change fields
// other managers own and Force was not given. Nothing was written. It is a
// disagreement between managers, not a race: retrying the same apply gives
// the same error. Resolve it by not applying those fields, by applying the
// owners' values (to share them), or with Force (to take them).
type ConflictError struct {
	// Conflicts are sorted by path, then manager.
	Conflicts []Conflict
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	if len(e.Conflicts) == 1 {
		b.WriteString("ownership: apply conflict: ")
	} else {
		fmt.Fprintf(&b, "ownership: %d apply conflicts: ", len(e.Conflicts))
	}
	for i, c := range e.Conflicts {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.String())
	}
	return b.String()
}

// Result is the outcome of Apply or Update.
type Result struct {
	// Object is the object to store. It may share unchanged subtrees with
	// the live object (see Apply); treat both as read-only.
	Object map[string]any
	// Managed is the new ownership record. Its Sets may be shared with the
	// input's; Sets are immutable.
	Managed Managed
	// Changed reports whether Object or Managed differ from the input:
	// false means there is nothing to write.
	Changed bool
	// ObjectChanged reports whether Object differs from the input object
	// (numbers compared by value).
	ObjectChanged bool
}

// Option configures Apply and Update. Options are values; later ones
// override earlier ones.
type Option struct {
	force     bool
	schema    *Schema
	hasSchema bool
}

type options struct {
	force  bool
	schema *Schema
}

func collect(opts []Option) options {
	var o options
	for _, x := range opts {
		o.force = o.force || x.force
		if x.hasSchema {
			o.schema = x.schema
		}
	}
	return o
}

// Force makes Apply take the fields it conflicts on instead of failing:
// their previous owners lose exactly those fields and keep the rest,
// including fields they share with the applier. Update ignores it.
func Force() Option { return Option{force: true} }

// WithSchema gives the merge strategies of lists and maps. Without it,
// Apply and Update use SchemaFor of a typed config or new object, and for
// trees the defaults: maps granular, lists atomic.
func WithSchema(s *Schema) Option { return Option{schema: s, hasSchema: true} }

// errorf reports a problem with the input at a path.
func errorf(p diff.Path, format string, args ...any) error {
	return fmt.Errorf("ownership: %s: %s", p, fmt.Sprintf(format, args...))
}
