package main

import (
	"slices"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
)

// fieldChanges is the ChangeFunc the demo's Loops judge events with: like
// reconcile.SectionChanges, but it names the spec fields that changed
// (.spec.replicas) instead of the whole .spec, so an oscillation report says
// which field flips. Like SectionChanges it attributes every changed path to
// the writer of the change (Meta.LastWrite).
func fieldChanges(old, new *store.Object[Spec, Status], manager string) (owned, foreign []diff.Path) {
	spec := diff.Path{}.Field("spec")
	sections, _ := reconcile.SectionChanges(old, new, new.Meta.LastWrite.Manager)
	changed := slices.DeleteFunc(sections, spec.Equal)
	for _, c := range diff.Diff(old.Spec, new.Spec) {
		changed = append(changed, spec.Append(c.Path...))
	}
	if new.Meta.LastWrite.Manager == manager {
		return changed, nil
	}
	return nil, changed
}
