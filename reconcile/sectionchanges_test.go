package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// SectionChanges names each changed section of an object in diff.Path
// notation, metadata under .metadata, and attributes them to the writer.
func TestSectionChanges(t *testing.T) {
	base := func() *app {
		return &app{Meta: store.Meta{Name: "a", Generation: 1, Labels: map[string]string{"team": "x"}, LastWrite: store.LastWrite{Manager: "app"}},
			Conditions: []store.Condition{{Type: conditions.Ready, Status: store.ConditionFalse}}}
	}
	tests := []struct {
		name   string
		change func(o *app)
		want   []string
	}{
		{"nothing", func(*app) {}, nil},
		{"labels", func(o *app) { o.Meta.Labels = map[string]string{"team": "y"} }, []string{".metadata.labels"}},
		{"annotations", func(o *app) { o.Meta.Annotations = map[string]string{"a": "b"} }, []string{".metadata.annotations"}},
		{"owners", func(o *app) { o.Meta.Owners = []store.OwnerRef{{Kind: "K", Name: "n"}} }, []string{".metadata.owners"}},
		{"finalizers", func(o *app) { o.Meta.Finalizers = []string{"f"} }, []string{".metadata.finalizers"}},
		{"deletion", func(o *app) { o.Meta.DeletionRequested = true }, []string{".metadata.deletionRequested"}},
		{"spec, by generation", func(o *app) { o.Meta.Generation = 2 }, []string{".spec"}},
		{"status", func(o *app) { o.Status.Phase = "Running" }, []string{".status"}},
		{"a condition changed and one added", func(o *app) {
			o.Conditions = []store.Condition{{Type: conditions.Ready, Status: store.ConditionTrue}, {Type: "Progressing", Status: store.ConditionTrue}}
		}, []string{`.conditions[type="Ready"]`, `.conditions[type="Progressing"]`}},
		{"a condition removed", func(o *app) { o.Conditions = nil }, []string{`.conditions[type="Ready"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := base(), base()
			tt.change(new)
			owned, foreign := SectionChanges(old, new, "app")
			require.Empty(t, foreign, "the writer owns what it changed")
			require.Equal(t, tt.want, pathStrings(owned))
			owned, foreign = SectionChanges(old, new, "other")
			require.Empty(t, owned)
			require.Equal(t, tt.want, pathStrings(foreign), "another manager's view: all foreign")
		})
	}
}

func pathStrings(ps []diff.Path) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

// sectionDiff looks at the metadata's collections and the conditions only
// when either object has some: a collection or condition that one of two
// bare objects gains (or loses) alone is still a change of its section.
func TestSectionChangesOfBareObjects(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(o *app)
		want   string
	}{
		{"labels", func(o *app) { o.Meta.Labels = map[string]string{"team": "y"} }, ".metadata.labels"},
		{"annotations", func(o *app) { o.Meta.Annotations = map[string]string{"a": "b"} }, ".metadata.annotations"},
		{"owners", func(o *app) { o.Meta.Owners = []store.OwnerRef{{Kind: "K", Name: "n"}} }, ".metadata.owners"},
		{"finalizers", func(o *app) { o.Meta.Finalizers = []string{"f"} }, ".metadata.finalizers"},
		{"a condition", func(o *app) {
			o.Conditions = []store.Condition{{Type: conditions.Stalled, Status: store.ConditionTrue}}
		},
			`.conditions[type="Stalled"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bare := func() *app { return &app{Meta: store.Meta{Name: "a", Generation: 1}} }
			with := bare()
			tt.change(with)
			_, foreign := SectionChanges(bare(), with, "other")
			require.Equal(t, []string{tt.want}, pathStrings(foreign), "gained")
			_, foreign = SectionChanges(with, bare(), "other")
			require.Equal(t, []string{tt.want}, pathStrings(foreign), "lost")
		})
	}
}
