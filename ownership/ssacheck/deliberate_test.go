package ssacheck

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestDeliberateDifferencesInTheirSmallestForm pins, for each rule that
// doc.go keeps as a deliberate difference, what each engine does in the
// smallest scenario that shows it, with the reason it is kept. If
// structured-merge-diff changes (an upgrade fixing one of the issues
// cited), or steady does, the case fails, and the rule and doc.go must be
// revisited.
func TestDeliberateDifferencesInTheirSmallestForm(t *testing.T) {
	type step struct {
		op, manager, doc string // op: "apply", "force" or "update"
	}
	type end struct {
		object    string
		noop      bool     // the last step changed nothing
		conflicts []string // of the last step
		owned     map[string][]string
	}
	cases := []struct {
		rule, name     string
		steps          []step
		steady, smdEnd end
	}{
		// structured-merge-diff's applied null depends on what is live: it
		// overwrites a scalar or an atomic list (a conflicting write), but
		// over a granular map it writes nothing and claims the map. steady
		// does not apply null at all, so a typed config's nil pointer
		// without omitempty claims nothing (doc.go, Null).
		{"applied-null", "null over a scalar, an atomic list and a map",
			[]step{{"apply", "alpha", `{"a":1,"m":{"x":1},"l":[1]}`}, {"force", "gamma", `{"a":null,"m":null,"l":null}`}},
			end{`{"a":1,"l":[1],"m":{"x":1}}`, true, nil, map[string][]string{"alpha/Apply": {".a", ".l", ".m.x"}}},
			end{`{"a":null,"l":null,"m":{"x":1}}`, false, nil, map[string][]string{"alpha/Apply": {".m.x"}, "gamma/Apply": {".a", ".l", ".m"}}}},
		// structured-merge-diff keys entries by (manager, operation): a
		// manager that wrote a field with Update conflicts with itself when
		// it applies another value (reported and triaged as a bug:
		// kubernetes/kubernetes#107417, #80916). steady's apply takes the
		// field from the manager's own Update entry.
		{"own-update-entry", "create with an update, then apply",
			[]step{{"update", "alpha", `{"x":1}`}, {"apply", "alpha", `{"x":2}`}},
			end{`{"x":2}`, false, nil, map[string][]string{"alpha/Apply": {".x"}}},
			end{`{"x":1}`, false, []string{"alpha/Update .x"}, map[string][]string{"alpha/Update": {".x"}}}},
		// structured-merge-diff's prune (typed.RemoveItems) turns a map or
		// list it empties into null, whatever the schema says (reported as
		// a bug: kubernetes-sigs/structured-merge-diff#305; its first fix,
		// #306, broke other uses and is being reworked, #331). steady keeps
		// the empty map its owner owns, and removes a list nobody owns.
		{"prune-null", "a pruned map its creator owns",
			[]step{{"update", "u", `{"m":{}}`}, {"apply", "a", `{"m":{"x":1}}`}, {"apply", "a", `{}`}},
			end{`{"m":{}}`, false, nil, map[string][]string{"u/Update": {".m"}}},
			end{`{"m":null}`, false, nil, map[string][]string{"u/Update": {".m"}}}},
		{"prune-null", "a keyed list emptied by dropping its last item",
			[]step{{"apply", "a", `{"items":[{"name":"p"}]}`}, {"update", "u", `{"items":[{"name":"p","extra":1}]}`}, {"apply", "a", `{}`}},
			end{`{}`, false, nil, map[string][]string{}},
			end{`{"items":null}`, false, nil, map[string][]string{}}},
		// structured-merge-diff's Apply entry lists every map key it
		// applied fields in, and its prune removes such a map whole,
		// fields another entry owns inside included, when that entry's set
		// does not list the map itself (an Update entry lists only maps it
		// created): beta's field goes, and beta with it. steady never
		// prunes what another entry owns, nor the maps holding it.
		{"owned-kept", "a field another manager wrote inside a pruned map",
			[]step{{"apply", "alpha", `{"m":{"m":{"x":1}}}`}, {"update", "beta", `{"m":{"m":{"x":1,"a":2}}}`}, {"apply", "alpha", `{}`}},
			end{`{"m":{"m":{"a":2}}}`, false, nil, map[string][]string{"beta/Update": {".m.m.a"}}},
			end{`{}`, false, nil, map[string][]string{}}},
		// structured-merge-diff removes a list that its prune empties even
		// where the config still applies it as [], and writes [] back on the
		// next apply of the same config: one config takes two writes to
		// settle. steady keeps the list, so the re-apply changes nothing.
		{"applied-empty-list-kept", "a list pruned empty while the config applies []",
			[]step{{"apply", "a", `{"items":[{"name":"p"}]}`}, {"apply", "a", `{"items":[]}`}},
			end{`{"items":[]}`, false, nil, map[string][]string{}},
			end{`{}`, false, nil, map[string][]string{}}},
		{"applied-empty-list-kept", "and the same config again",
			[]step{{"apply", "a", `{"items":[{"name":"p"}]}`}, {"apply", "a", `{"items":[]}`}, {"apply", "a", `{"items":[]}`}},
			end{`{"items":[]}`, true, nil, map[string][]string{}},
			end{`{"items":[]}`, false, nil, map[string][]string{}}},
	}
	for _, tc := range cases {
		t.Run(tc.rule+": "+tc.name, func(t *testing.T) {
			ref, st := newReference(t), &engine{live: map[string]any{}}
			var got, want outcome
			for _, s := range tc.steps {
				var doc map[string]any
				if err := json.Unmarshal([]byte(s.doc), &doc); err != nil {
					t.Fatal(err)
				}
				if s.op == "update" {
					got, want = st.update(t, doc, s.manager), ref.update(t, doc, s.manager)
					continue
				}
				got, want = st.apply(t, doc, s.manager, s.op == "force"), ref.apply(t, doc, s.manager, s.op == "force", nil)
			}
			for _, c := range []struct {
				engine string
				o      outcome
				e      end
			}{{"steady", got, tc.steady}, {"structured-merge-diff", want, tc.smdEnd}} {
				if js(c.o.object) != c.e.object || c.o.noop != c.e.noop || !slices.Equal(c.o.conflicts, c.e.conflicts) || !ownedEqual(c.o.owned, c.e.owned) {
					t.Errorf("%s: noop=%v %s conflicts=%v owned=%v; want noop=%v %s conflicts=%v owned=%v",
						c.engine, c.o.noop, js(c.o.object), c.o.conflicts, c.o.owned, c.e.noop, c.e.object, c.e.conflicts, c.e.owned)
				}
			}
		})
	}
}
