package ownership

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// step is one write in a conformance scenario.
type step struct {
	op      string // "apply", "force" or "update"
	manager string
	doc     string // applied config, or the new object for an update
	// conflicts expected from an apply, as "manager path"; the step then
	// must leave object and ownership unchanged.
	conflicts []string
	// unchanged expects Result.Changed == false.
	unchanged bool
}

type scenario struct {
	name   string
	schema *Schema
	steps  []step
	want   string              // final object
	owned  map[string][]string // "manager/Apply" or "manager/Update" -> paths; every entry listed
}

func apply(m, doc string, conflicts ...string) step {
	return step{op: "apply", manager: m, doc: doc, conflicts: conflicts}
}
func force(m, doc string) step  { return step{op: "force", manager: m, doc: doc} }
func update(m, doc string) step { return step{op: "update", manager: m, doc: doc} }
func noop(s step) step          { s.unchanged = true; return s }

var conformance = []scenario{
	{name: "apply creates and owns every leaf",
		steps: []step{apply("a", `{"spec":{"x":1,"m":{"y":"z"}}}`)},
		want:  `{"spec":{"x":1,"m":{"y":"z"}}}`,
		owned: map[string][]string{"a/Apply": {".spec.x", ".spec.m.y"}}},
	{name: "re-apply is unchanged",
		steps: []step{apply("a", `{"spec":{"x":1}}`), noop(apply("a", `{"spec":{"x":1.0}}`))},
		want:  `{"spec":{"x":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}}},
	{name: "apply with fewer fields removes the rest",
		steps: []step{apply("a", `{"spec":{"x":1,"y":2}}`), apply("a", `{"spec":{"x":1}}`)},
		want:  `{"spec":{"x":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}}},
	{name: "disjoint managers merge",
		steps: []step{apply("a", `{"spec":{"x":1}}`), apply("b", `{"spec":{"y":2}}`)},
		want:  `{"spec":{"x":1,"y":2}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}, "b/Apply": {".spec.y"}}},
	{name: "equal values are shared",
		steps: []step{apply("a", `{"spec":{"x":1}}`), apply("b", `{"spec":{"x":1}}`)},
		want:  `{"spec":{"x":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}, "b/Apply": {".spec.x"}}},
	{name: "a shared field survives one owner leaving",
		steps: []step{apply("a", `{"spec":{"x":1,"y":1}}`), apply("b", `{"spec":{"x":1}}`), apply("a", `{"spec":{"y":1}}`)},
		want:  `{"spec":{"x":1,"y":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.y"}, "b/Apply": {".spec.x"}}},
	{name: "changing another manager's scalar conflicts",
		steps: []step{apply("a", `{"spec":{"x":1}}`), apply("b", `{"spec":{"x":2}}`, "a .spec.x")},
		want:  `{"spec":{"x":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}}},
	{name: "force takes the field, the loser keeps the rest",
		steps: []step{apply("a", `{"spec":{"x":1,"y":1}}`), force("b", `{"spec":{"x":2}}`)},
		want:  `{"spec":{"x":2,"y":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.y"}, "b/Apply": {".spec.x"}}},
	{name: "force leaves shared fields shared",
		steps: []step{apply("a", `{"spec":{"x":1,"s":1}}`), apply("b", `{"spec":{"s":1}}`), force("b", `{"spec":{"x":2,"s":1}}`)},
		want:  `{"spec":{"x":2,"s":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.s"}, "b/Apply": {".spec.s", ".spec.x"}}},
	{name: "the forced-out owner conflicts when it re-applies its old value",
		steps: []step{apply("a", `{"spec":{"x":1}}`), force("b", `{"spec":{"x":2}}`), apply("a", `{"spec":{"x":1}}`, "b .spec.x")},
		want:  `{"spec":{"x":2}}`,
		owned: map[string][]string{"a/Apply": {".spec"}, "b/Apply": {".spec.x"}}},
	{name: "numbers compare by value",
		steps: []step{apply("a", `{"spec":{"n":2,"f":0.5}}`), apply("b", `{"spec":{"n":2.0,"f":0.50}}`)},
		want:  `{"spec":{"n":2,"f":0.5}}`,
		owned: map[string][]string{"a/Apply": {".spec.f", ".spec.n"}, "b/Apply": {".spec.f", ".spec.n"}}},
	{name: "update claims only what it changed",
		steps: []step{apply("a", `{"spec":{"x":1,"y":1}}`), update("u", `{"spec":{"x":1,"y":2,"z":3}}`)},
		want:  `{"spec":{"x":1,"y":2,"z":3}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}, "u/Update": {".spec.y", ".spec.z"}}},
	{name: "an apply over an updated field conflicts with the updater",
		steps: []step{update("u", `{"spec":{"x":1}}`), apply("a", `{"spec":{"x":2}}`, "u .spec.x")},
		want:  `{"spec":{"x":1}}`,
		owned: map[string][]string{"u/Update": {".spec", ".spec.x"}}},
	{name: "update removing an applied field releases it",
		steps: []step{apply("a", `{"spec":{"x":1,"y":1}}`), update("u", `{"spec":{"x":1}}`)},
		want:  `{"spec":{"x":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}}},
	{name: "update never conflicts and takes applied fields",
		steps: []step{apply("a", `{"spec":{"x":1}}`), update("u", `{"spec":{"x":5}}`)},
		want:  `{"spec":{"x":5}}`,
		owned: map[string][]string{"a/Apply": {".spec"}, "u/Update": {".spec.x"}}},
	{name: "a manager's own update entry does not conflict with its apply",
		steps: []step{update("a", `{"spec":{"x":1}}`), apply("a", `{"spec":{"x":2}}`)},
		want:  `{"spec":{"x":2}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}, "a/Update": {".spec"}}},
	{name: "update of an unchanged object claims nothing",
		steps: []step{apply("a", `{"spec":{"x":1}}`), noop(update("u", `{"spec":{"x":1}}`))},
		want:  `{"spec":{"x":1}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}}},
	{name: "keyed list: managers own different items",
		schema: portsSchema,
		steps:  []step{apply("a", `{"spec":{"items":[{"name":"x","v":1}]}}`), apply("b", `{"spec":{"items":[{"name":"y","v":2}]}}`)},
		want:   `{"spec":{"items":[{"name":"x","v":1},{"name":"y","v":2}]}}`,
		owned: map[string][]string{
			"a/Apply": {`.spec.items[name="x"]`, `.spec.items[name="x"].name`, `.spec.items[name="x"].v`},
			"b/Apply": {`.spec.items[name="y"]`, `.spec.items[name="y"].name`, `.spec.items[name="y"].v`}}},
	{name: "keyed list: dropping an item removes only that item",
		schema: portsSchema,
		steps: []step{apply("a", `{"spec":{"items":[{"name":"x","v":1},{"name":"z","v":3}]}}`), apply("b", `{"spec":{"items":[{"name":"y","v":2}]}}`),
			apply("a", `{"spec":{"items":[{"name":"z","v":3}]}}`)},
		want: `{"spec":{"items":[{"name":"z","v":3},{"name":"y","v":2}]}}`,
		owned: map[string][]string{
			"a/Apply": {`.spec.items[name="z"]`, `.spec.items[name="z"].name`, `.spec.items[name="z"].v`},
			"b/Apply": {`.spec.items[name="y"]`, `.spec.items[name="y"].name`, `.spec.items[name="y"].v`}}},
	{name: "keyed list: a shared item stays, with the fields still owned",
		schema: portsSchema,
		steps: []step{apply("a", `{"spec":{"items":[{"name":"x","v":1,"w":1}]}}`), apply("b", `{"spec":{"items":[{"name":"x","u":2}]}}`),
			apply("a", `{"spec":{"items":[]}}`)},
		want: `{"spec":{"items":[{"name":"x","u":2}]}}`,
		owned: map[string][]string{
			"a/Apply": {`.spec`},
			"b/Apply": {`.spec.items[name="x"]`, `.spec.items[name="x"].name`, `.spec.items[name="x"].u`}}},
	// Issue 13, item 1: a dropped item goes, with the fields others own
	// inside it, unless another manager owns the item itself.
	{name: "keyed list: a dropped item goes although another manager owns a field inside it",
		schema: portsSchema,
		steps: []step{apply("a", `{"spec":{"items":[{"name":"x","v":1}],"z":1}}`),
			update("b", `{"spec":{"items":[{"name":"x","v":1,"extra":"e"}],"z":1}}`),
			apply("a", `{"spec":{"z":1}}`)},
		want:  `{"spec":{"z":1}}`,
		owned: map[string][]string{"a/Apply": {`.spec.z`}}},
	// Seeds 157 and 259 of ssacheck in their smallest form: the fields
	// others owned inside a dropped item go with it, so they keep nothing
	// above it either: the map the prune empties goes too.
	{name: "keyed list: a map emptied by dropping an item with others' fields goes",
		schema: portsSchema,
		steps: []step{apply("a", `{"k":1,"spec":{"items":[{"name":"x"}]}}`),
			update("u", `{"k":1,"spec":{"items":[{"name":"x","v":1}]}}`),
			apply("a", `{"k":1}`)},
		want:  `{"k":1}`,
		owned: map[string][]string{"a/Apply": {`.k`}}},
	// Issue 13, item 5 (deliberate): a stored null its owner wrote is a
	// value; replacing it with a map is a type change and conflicts.
	{name: "a stored null replaced by a map conflicts with its owner (deliberate)",
		steps: []step{update("b", `{"n":null}`), apply("a", `{"n":{"z":1}}`, "b .n")},
		want:  `{"n":null}`,
		owned: map[string][]string{"b/Update": {`.n`}}},
	// Issue 13, item 2: pruning the last item removes the emptied list.
	{name: "set: pruning the last item removes the list",
		schema: portsSchema,
		steps:  []step{apply("a", `{"a":1,"spec":{"tags":["s"]}}`), apply("a", `{"a":1}`)},
		want:   `{"a":1}`,
		owned:  map[string][]string{"a/Apply": {`.a`}}},
	{name: "keyed list: pruning the last item removes the list",
		schema: portsSchema,
		steps:  []step{apply("a", `{"a":1,"spec":{"items":[{"name":"x"}]}}`), apply("a", `{"a":1}`)},
		want:   `{"a":1}`,
		owned:  map[string][]string{"a/Apply": {`.a`}}},
	// As structured-merge-diff, whose field sets hold no path for an empty
	// set or keyed list: a map that pruning leaves holding only those
	// (directly or in maps that hold only those) is removed with them.
	{name: "a map pruning leaves with only empty sets or keyed lists is removed",
		schema: mustSchema(map[string]Strategy{".spec.tags": AsSet(), ".spec.items": Keyed("name"), ".spec.in.tags": AsSet()}),
		steps:  []step{apply("a", `{"k":1,"spec":{"x":1,"tags":[],"in":{"tags":[]}}}`), apply("a", `{"k":1}`)},
		want:   `{"k":1}`,
		owned:  map[string][]string{"a/Apply": {`.k`}}},
	// Deliberate (owned-kept): pruning never removes what another manager
	// owns, nor a map holding it; structured-merge-diff removes both maps
	// below, the updater's fields with them.
	{name: "a map pruning leaves with an empty list someone owns stays (deliberate)",
		schema: portsSchema,
		steps:  []step{apply("a", `{"k":1,"spec":{"x":1}}`), update("u", `{"k":1,"spec":{"x":1,"tags":[]}}`), apply("a", `{"k":1}`)},
		want:   `{"k":1,"spec":{"tags":[]}}`,
		owned:  map[string][]string{"a/Apply": {`.k`}, "u/Update": {`.spec.tags`}}},
	{name: "a map the applier stops applying stays while an updater owns a field inside (deliberate)",
		steps: []step{apply("a", `{"k":1,"n":{}}`), update("u", `{"k":1,"n":{"z":1}}`), apply("a", `{"k":1}`)},
		want:  `{"k":1,"n":{"z":1}}`,
		owned: map[string][]string{"a/Apply": {`.k`}, "u/Update": {`.n.z`}}},
	// As structured-merge-diff: whoever applies a map of empty sets owns
	// the map, so it stays when another applier stops applying it.
	{name: "a map another applier applied empty sets in stays when the first stops applying it",
		schema: portsSchema,
		steps:  []step{apply("a", `{"k":1,"spec":{}}`), apply("b", `{"spec":{"tags":[]}}`), apply("a", `{"k":1}`)},
		want:   `{"k":1,"spec":{"tags":[]}}`,
		owned:  map[string][]string{"a/Apply": {`.k`}, "b/Apply": {`.spec`}}},
	// Deliberate (update-null-map): in an Update null is an ordinary value,
	// so writing it over a map owns the field; structured-merge-diff sees
	// only the fields inside removed: the updater owns nothing, and the
	// applier writes its map back without a conflict.
	{name: "an update writing null over a map owns it (deliberate)",
		steps: []step{apply("a", `{"n":{"z":1}}`), update("u", `{"n":null}`), apply("a", `{"n":{"z":1}}`, "u .n")},
		want:  `{"n":null}`,
		owned: map[string][]string{"u/Update": {`.n`}}},
	// Seed 88, step 891 of ssacheck in its smallest form: the null's
	// previous owner keeps the map above it, which it created, as in
	// structured-merge-diff; only the null itself differs (its updater
	// owns it here, the map's creator there).
	{name: "an update writing null over a created map leaves its creator the map above",
		steps: []step{update("b", `{"m":{"a":1,"n":{"z":2}}}`), update("a", `{"m":{"a":1,"n":null}}`)},
		want:  `{"m":{"a":1,"n":null}}`,
		owned: map[string][]string{"a/Update": {`.m.n`}, "b/Update": {`.m`, `.m.a`}}},
	// Issue 13, item 3 (as structured-merge-diff): an applied empty set or
	// keyed list is written where there is none and owned by nobody; the
	// map holding it is owned (see above), and pruned with it.
	{name: "set: an applied empty set is written and not owned",
		schema: portsSchema,
		steps:  []step{apply("a", `{"a":1,"spec":{"tags":[]}}`), noop(apply("a", `{"a":1,"spec":{"tags":[]}}`)), apply("a", `{"a":1,"spec":{"x":1}}`)},
		want:   `{"a":1,"spec":{"tags":[],"x":1}}`,
		owned:  map[string][]string{"a/Apply": {`.a`, `.spec.x`}}},
	{name: "set: the map an applied empty set made owned goes when no longer applied",
		schema: portsSchema,
		steps:  []step{apply("a", `{"a":1,"spec":{"tags":[]}}`), apply("a", `{"a":1}`)},
		want:   `{"a":1}`,
		owned:  map[string][]string{"a/Apply": {`.a`}}},
	// Seeds 68 and 101 of ssacheck in their smallest form: a map whose
	// applied fields claim nothing (empty sets or keyed lists, nulls) is
	// owned as an empty map is, as structured-merge-diff owns the map key;
	// so applying it where it exists already claims it (a change).
	{name: "an applied map of empty lists is owned as an empty map",
		schema: portsSchema,
		steps:  []step{update("u", `{"spec":{"items":[]}}`), apply("a", `{"spec":{"items":[],"x":null}}`)},
		want:   `{"spec":{"items":[]}}`,
		owned:  map[string][]string{"a/Apply": {`.spec`}, "u/Update": {`.spec`, `.spec.items`}}},
	{name: "set: an emptied set the config still applies as [] stays (deliberate)",
		schema: portsSchema,
		steps:  []step{apply("a", `{"a":1,"spec":{"tags":["s"]}}`), apply("a", `{"a":1,"spec":{"tags":[]}}`), noop(apply("a", `{"a":1,"spec":{"tags":[]}}`))},
		want:   `{"a":1,"spec":{"tags":[]}}`,
		owned:  map[string][]string{"a/Apply": {`.a`, `.spec`}}},
	{name: "keyed list: two-field keys tell items apart",
		schema: portsSchema,
		steps:  []step{apply("a", `{"spec":{"ports":[{"port":53,"protocol":"TCP"}]}}`), apply("b", `{"spec":{"ports":[{"port":53,"protocol":"UDP"}]}}`)},
		want:   `{"spec":{"ports":[{"port":53,"protocol":"TCP"},{"port":53,"protocol":"UDP"}]}}`,
		owned: map[string][]string{
			"a/Apply": {`.spec.ports[port=53,protocol="TCP"]`, `.spec.ports[port=53,protocol="TCP"].port`, `.spec.ports[port=53,protocol="TCP"].protocol`},
			"b/Apply": {`.spec.ports[port=53,protocol="UDP"]`, `.spec.ports[port=53,protocol="UDP"].port`, `.spec.ports[port=53,protocol="UDP"].protocol`}}},
	{name: "keyed list: a field of another manager's item conflicts",
		schema: portsSchema,
		steps:  []step{apply("a", `{"spec":{"items":[{"name":"x","v":1}]}}`), apply("b", `{"spec":{"items":[{"name":"x","v":2}]}}`, `a .spec.items[name="x"].v`)},
		want:   `{"spec":{"items":[{"name":"x","v":1}]}}`,
		owned:  map[string][]string{"a/Apply": {`.spec.items[name="x"]`, `.spec.items[name="x"].name`, `.spec.items[name="x"].v`}}},
	{name: "set: managers add values",
		schema: portsSchema,
		steps:  []step{apply("a", `{"spec":{"tags":["x"]}}`), apply("b", `{"spec":{"tags":["y"]}}`)},
		want:   `{"spec":{"tags":["x","y"]}}`,
		owned:  map[string][]string{"a/Apply": {`.spec.tags[="x"]`}, "b/Apply": {`.spec.tags[="y"]`}}},
	{name: "set: a dropped value goes, a shared one stays",
		schema: portsSchema,
		steps:  []step{apply("a", `{"spec":{"tags":["x","s"]}}`), apply("b", `{"spec":{"tags":["s"]}}`), apply("a", `{"spec":{"tags":["z"]}}`)},
		want:   `{"spec":{"tags":["s","z"]}}`,
		owned:  map[string][]string{"a/Apply": {`.spec.tags[="z"]`}, "b/Apply": {`.spec.tags[="s"]`}}},
	{name: "atomic list by default: changing it conflicts",
		steps: []step{apply("a", `{"args":["x"]}`), apply("b", `{"args":["x","y"]}`, "a .args")},
		want:  `{"args":["x"]}`,
		owned: map[string][]string{"a/Apply": {".args"}}},
	{name: "atomic list: an equal list is shared",
		steps: []step{apply("a", `{"args":["x",1]}`), apply("b", `{"args":["x",1.0]}`)},
		want:  `{"args":["x",1]}`,
		owned: map[string][]string{"a/Apply": {".args"}, "b/Apply": {".args"}}},
	{name: "atomic map: replaced and owned whole",
		schema: portsSchema,
		steps:  []step{apply("a", `{"spec":{"sel":{"k":"v"}}}`), apply("a", `{"spec":{"sel":{"j":"w"}}}`), apply("b", `{"spec":{"sel":{"k":"v"}}}`, "a .spec.sel")},
		want:   `{"spec":{"sel":{"j":"w"}}}`,
		owned:  map[string][]string{"a/Apply": {".spec.sel"}}},
	{name: "granular maps merge at every depth",
		steps: []step{apply("a", `{"m":{"n":{"x":1}}}`), apply("b", `{"m":{"n":{"y":2},"o":3}}`)},
		want:  `{"m":{"n":{"x":1,"y":2},"o":3}}`,
		owned: map[string][]string{"a/Apply": {".m.n.x"}, "b/Apply": {".m.n.y", ".m.o"}}},
	// As structured-merge-diff, whose Apply entries hold every map key
	// they applied fields in: the conflict is at the changed map, once per
	// applier, however deep its fields.
	{name: "type change map to scalar conflicts at the map with the appliers below",
		steps: []step{apply("a", `{"m":{"x":1}}`), apply("b", `{"m":{"y":{"z":2}}}`), apply("c", `{"m":"flat"}`, "a .m", "b .m")},
		want:  `{"m":{"x":1,"y":{"z":2}}}`,
		owned: map[string][]string{"a/Apply": {".m.x"}, "b/Apply": {".m.y.z"}}},
	// As structured-merge-diff: an updater conflicts at a map it created
	// (only there), and loses the fields it wrote inside a map it did not
	// create without a conflict.
	{name: "type change map to scalar conflicts with an updater only at a map it created",
		steps: []step{apply("a", `{"m":{"k":1}}`), update("u", `{"m":{"k":1,"x":1},"q":{"z":1}}`),
			apply("c", `{"m":"flat","q":2}`, "a .m", "u .q"), apply("a", `{"m":"flat"}`)},
		want:  `{"m":"flat","q":{"z":1}}`,
		owned: map[string][]string{"a/Apply": {".m"}, "u/Update": {".q", ".q.z"}}},
	{name: "type change scalar to map conflicts with the owner",
		steps: []step{apply("a", `{"m":"flat"}`), apply("b", `{"m":{"x":1}}`, "a .m")},
		want:  `{"m":"flat"}`,
		owned: map[string][]string{"a/Apply": {".m"}}},
	{name: "forced type change drops the owners below",
		steps: []step{apply("a", `{"m":{"x":1},"k":1}`), force("b", `{"m":"flat"}`)},
		want:  `{"m":"flat","k":1}`,
		owned: map[string][]string{"a/Apply": {".k"}, "b/Apply": {".m"}}},
	{name: "null in a config is not applied",
		steps: []step{apply("a", `{"spec":{"x":1}}`), apply("b", `{"spec":{"x":null,"y":2}}`)},
		want:  `{"spec":{"x":1,"y":2}}`,
		owned: map[string][]string{"a/Apply": {".spec.x"}, "b/Apply": {".spec.y"}}},
	{name: "null for a field the manager owned prunes it",
		steps: []step{apply("a", `{"spec":{"x":1,"y":2}}`), apply("a", `{"spec":{"x":null,"y":2}}`)},
		want:  `{"spec":{"y":2}}`,
		owned: map[string][]string{"a/Apply": {".spec.y"}}},
	{name: "an applied empty map is owned and others may fill it",
		steps: []step{apply("a", `{"labels":{}}`), apply("b", `{"labels":{"x":"1"}}`)},
		want:  `{"labels":{"x":"1"}}`,
		owned: map[string][]string{"a/Apply": {".labels"}, "b/Apply": {".labels.x"}}},
	{name: "dropping a map key removes its subtree and the maps it empties",
		steps: []step{apply("a", `{"m":{"n":{"x":1,"y":{"z":2}}},"k":1}`), apply("a", `{"k":1}`)},
		want:  `{"k":1}`,
		owned: map[string][]string{"a/Apply": {".k"}}},
	{name: "maps emptied by pruning stay when someone else owns them",
		steps: []step{apply("a", `{"m":{"n":{"x":1}}}`), apply("b", `{"m":{"n":{}}}`), apply("a", `{}`)},
		want:  `{"m":{"n":{}}}`,
		owned: map[string][]string{"b/Apply": {".m.n"}}},
	{name: "conflicts list every owner, sorted by path",
		steps: []step{apply("a", `{"x":1,"y":1}`), apply("b", `{"x":1}`), apply("c", `{"x":2,"y":2}`, "a .x", "b .x", "a .y")},
		want:  `{"x":1,"y":1}`,
		owned: map[string][]string{"a/Apply": {".x", ".y"}, "b/Apply": {".x"}}},
	{name: "update adding a keyed item owns the item",
		schema: portsSchema,
		steps:  []step{apply("a", `{"spec":{"items":[{"name":"x","v":1}]}}`), update("u", `{"spec":{"items":[{"name":"x","v":1},{"name":"y","v":2}]}}`)},
		want:   `{"spec":{"items":[{"name":"x","v":1},{"name":"y","v":2}]}}`,
		owned: map[string][]string{
			"a/Apply":  {`.spec.items[name="x"]`, `.spec.items[name="x"].name`, `.spec.items[name="x"].v`},
			"u/Update": {`.spec.items[name="y"]`, `.spec.items[name="y"].name`, `.spec.items[name="y"].v`}}},
	{name: "an updater's field is not pruned by an applier leaving",
		steps: []step{apply("a", `{"x":1}`), update("u", `{"x":1,"y":2}`), apply("b", `{"y":2}`), apply("b", `{}`)},
		want:  `{"x":1,"y":2}`,
		owned: map[string][]string{"a/Apply": {".x"}, "u/Update": {".y"}}},
	// Issue 23 (HC): an entry whose fields inside a map an update removes
	// still owns the map the update left, as in structured-merge-diff
	// (whose set lists the map itself): a type change conflicts with it.
	{name: "an applier keeps a map an update emptied: a type change conflicts",
		steps: []step{apply("a", `{"n":{"z":1}}`), update("v", `{"n":{}}`), apply("b", `{"n":"x"}`, "a .n")},
		want:  `{"n":{}}`,
		owned: map[string][]string{"a/Apply": {".n"}}},
	// Issue 23 (HA): the same for an Update entry that created the map.
	{name: "an updater keeps a map it created that an update emptied",
		steps: []step{update("u", `{"n":{"z":1}}`), update("v", `{"n":{}}`), apply("a", `{"n":"x"}`, "u .n")},
		want:  `{"n":{}}`,
		owned: map[string][]string{"u/Update": {".n"}}},
	// Issue 23 (HB2): the applier that keeps such a map prunes it when it
	// stops applying it.
	{name: "a map an update emptied goes when its applier stops applying it",
		steps: []step{update("u", `{"a":1}`), apply("a", `{"n":{"z":1}}`), update("v", `{"a":1,"n":{}}`), apply("a", `{}`)},
		want:  `{"a":1}`,
		owned: map[string][]string{"u/Update": {".a"}}},
	// Issue 23 (HE): and another applier that keeps it keeps it from
	// pruning.
	{name: "a map an update emptied stays while another applier keeps it",
		steps: []step{apply("c", `{"spec":{}}`), apply("a", `{"spec":{"y":2}}`), update("c", `{"spec":{}}`), apply("c", `{}`)},
		want:  `{"spec":{}}`,
		owned: map[string][]string{"a/Apply": {".spec"}}},
	// As structured-merge-diff's updater, which owns every container it
	// added: the list stays the creator's when its items go.
	{name: "an updater keeps a keyed list it created when its items go",
		schema: portsSchema,
		steps:  []step{update("u", `{"spec":{"items":[{"name":"x"}]}}`), update("v", `{"spec":{"items":[]}}`)},
		want:   `{"spec":{"items":[]}}`,
		owned:  map[string][]string{"u/Update": {".spec", ".spec.items"}}},
	{name: "applying nothing releases everything",
		steps: []step{apply("a", `{"x":1,"m":{"y":2}}`), apply("a", `{}`)},
		want:  `{}`,
		owned: map[string][]string{}},
}

func TestConformance(t *testing.T) {
	require.GreaterOrEqual(t, len(conformance), 30)
	for _, sc := range conformance {
		t.Run(sc.name, func(t *testing.T) {
			var live map[string]any
			var managed Managed
			opts := []Option{WithSchema(sc.schema)}
			for i, st := range sc.steps {
				var r Result
				var err error
				switch st.op {
				case "apply":
					r, err = Apply(live, obj(t, st.doc), st.manager, managed, opts...)
				case "force":
					r, err = Apply(live, obj(t, st.doc), st.manager, managed, append(opts, Force())...)
				case "update":
					r, err = Update(live, obj(t, st.doc), st.manager, managed, opts...)
				}
				if st.conflicts != nil {
					require.Error(t, err, "step %d", i)
					require.Equal(t, st.conflicts, conflictStrings(err), "step %d", i)
					continue
				}
				require.NoError(t, err, "step %d", i)
				require.Equal(t, !st.unchanged, r.Changed, "step %d Changed", i)
				checkInvariants(t, r, sc.schema)
				live, managed = r.Object, r.Managed
			}
			requireObject(t, sc.want, live)
			got := map[string][]string{}
			for _, e := range managed {
				got[e.Manager+"/"+string(e.Operation)] = pathStrings(e.Set)
			}
			want := map[string][]string{}
			for k, v := range sc.owned {
				want[k] = sorted(v...)
			}
			require.Equal(t, want, got)
		})
	}
}

func TestConflictsAreReportedOnce(t *testing.T) {
	r := applyOK(t, nil, obj(t, `{"spec":{"tags":["a"]}}`), "a", nil, WithSchema(portsSchema))
	// .spec.tags becomes a map: a type change above the set item a owns.
	_, err := Apply(r.Object, obj(t, `{"spec":{"tags":{"x":1}}}`), "b", r.Managed, WithSchema(portsSchema))
	require.Equal(t, []string{`a .spec.tags[="a"]`}, conflictStrings(err))
	// And back: a list replacing a map another manager filled conflicts
	// at the map.
	r = applyOK(t, nil, obj(t, `{"spec":{"tags":{"x":1}}}`), "a", nil, WithSchema(portsSchema))
	_, err = Apply(r.Object, obj(t, `{"spec":{"tags":["a"]}}`), "b", r.Managed, WithSchema(portsSchema))
	require.Equal(t, []string{`a .spec.tags`}, conflictStrings(err))
}
