package predicate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile/predicate"
	"github.com/steady-go/steady/store"
)

type spec struct{ Replicas int }
type status struct{ Ready int }
type obj = store.Object[spec, status]

func withMeta(gen int64, labels, annotations map[string]string) *obj {
	return &obj{Meta: store.Meta{Name: "a", Generation: gen, Labels: labels, Annotations: annotations}}
}

func TestReadyMadePredicates(t *testing.T) {
	base := withMeta(1, map[string]string{"app": "x"}, map[string]string{"note": "n"})
	for _, tc := range []struct {
		name                   string
		old, new               *obj
		generation, lab, annot bool
	}{
		{"addition", nil, base, true, true, true},
		{"deletion", base, nil, true, true, true},
		{"status only", base, withMeta(1, map[string]string{"app": "x"}, map[string]string{"note": "n"}), false, false, false},
		{"spec", base, withMeta(2, map[string]string{"app": "x"}, map[string]string{"note": "n"}), true, false, false},
		{"labels", base, withMeta(1, map[string]string{"app": "y"}, map[string]string{"note": "n"}), false, true, false},
		{"label removed", base, withMeta(1, nil, map[string]string{"note": "n"}), false, true, false},
		{"annotations", base, withMeta(1, map[string]string{"app": "x"}, nil), false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.generation, predicate.GenerationChanged[spec, status]()(tc.old, tc.new), "GenerationChanged")
			require.Equal(t, tc.lab, predicate.LabelsChanged[spec, status]()(tc.old, tc.new), "LabelsChanged")
			require.Equal(t, tc.annot, predicate.AnnotationsChanged[spec, status]()(tc.old, tc.new), "AnnotationsChanged")
		})
	}
}

func TestComposition(t *testing.T) {
	yes := predicate.Predicate[spec, status](func(_, _ *obj) bool { return true })
	no := predicate.Predicate[spec, status](func(_, _ *obj) bool { return false })
	a := withMeta(1, nil, nil)
	require.True(t, predicate.And(yes, yes)(nil, a))
	require.False(t, predicate.And(yes, no)(nil, a))
	require.True(t, predicate.And[spec, status]()(nil, a), "And() passes everything")
	require.True(t, predicate.Or(no, yes)(nil, a))
	require.False(t, predicate.Or(no, no)(nil, a))
	require.False(t, predicate.Or[spec, status]()(nil, a), "Or() passes nothing")
	require.False(t, predicate.Not(yes)(nil, a))
	require.True(t, predicate.Not(no)(nil, a))

	// And and Or stop at the first answer that settles them.
	calls := 0
	count := predicate.Predicate[spec, status](func(_, _ *obj) bool { calls++; return true })
	require.False(t, predicate.And(no, count)(nil, a))
	require.True(t, predicate.Or(yes, count)(nil, a))
	require.Zero(t, calls)
}

func TestObjectSeesTheNewObjectOrTheDeletedOne(t *testing.T) {
	named := predicate.Object(func(o *obj) bool { return o.Meta.Labels["keep"] == "yes" })
	keep := withMeta(1, map[string]string{"keep": "yes"}, nil)
	drop := withMeta(1, nil, nil)
	require.True(t, named(nil, keep))
	require.False(t, named(keep, drop), "a modification is judged by its new object")
	require.True(t, named(keep, nil), "a deletion is judged by the deleted object")
}

// Misuse: a nil predicate anywhere in a composition makes the whole nil, so
// reconcile.WithPredicate can refuse it loudly instead of guessing.
func TestNilPredicatesPoisonCompositions(t *testing.T) {
	yes := predicate.Predicate[spec, status](func(_, _ *obj) bool { return true })
	require.Nil(t, predicate.And(yes, nil))
	require.Nil(t, predicate.Or(nil, yes))
	require.Nil(t, predicate.Not[spec, status](nil))
	require.Nil(t, predicate.Object[spec, status](nil))
	require.Nil(t, predicate.Not(predicate.And(yes, nil)))
}
