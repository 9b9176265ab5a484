// Package diff gives steady one notation for field paths, a structural
// difference of two values, and a stable hash that can leave paths out.
//
// # Paths
//
// A Path addresses a node of a value: .spec.replicas, .items[name="x"].v,
// .ports[port=80,protocol="TCP"], .tags[="a"],
// .metadata.labels["app.kubernetes.io/name"], .args[2]. The same notation
// is used by diff, ownership, oscillation reports and condition messages.
// ParsePath and Path.String round-trip; see Path for the grammar.
//
// # Diff
//
// Diff(want, got, opts...) walks two values in parallel and returns their
// Changes: each one Added, Removed or Changed at a Path, with the old and new
// values. Changes.String gives one line per change, for logs and condition
// messages:
//
//	.spec.replicas: 3 → 2
//	.metadata.labels.tier: added "web"
//
// Diff takes typed Go values (structs, maps, slices, arrays, pointers,
// interfaces, scalars, time.Time) and JSON-like trees (map[string]any,
// []any, float64, string, bool, nil, json.Number and other numbers). Struct
// fields are named by their json tags so that paths are the same whether an
// object is seen as a Go struct or as decoded JSON. Unexported fields and
// fields tagged json:"-" are not compared, hashed or reported.
//
// # Options
//
// Options are values that compose, as in go-cmp: Only and Ignore select
// paths (a path covers everything below it); EquateEmpty makes nil and empty
// slices and maps equal; ListKeys and ListSets match list items by key fields
// or by value rather than by position, as the struct tags
// `steady:"keys=name"` and `steady:"set"` (shared with the ownership
// package) do. Numbers held in interfaces compare by value by default, so 1
// and 1.0 are equal in trees; ExactNumbers turns that off.
//
// # Depth
//
// Diff, ChangedPaths, Hash and Change.String walk at most MaxDepth maps,
// slices, arrays, structs and pointers deep, as many as a JSON document
// decodes into: past it Diff reports the pair Changed, Hash hashes a marker
// and Change.String prints "<too deep>", so that a value built deeper (or
// one holding itself, which Change.String prints as "<cyclic>") never
// overflows the goroutine's stack.
//
// # Hash
//
// Hash(v, opts...) is a 64-bit hash of the same view: equal under Diff means
// equal hash. It does not depend on map order, process or run, and leaves out
// ignored paths, which is what a controller that labels an object with "the
// hash of its content" needs: hash the fields the controller does not write.
//
// # Cost
//
// Diff reflects over each type once and caches a plan for it (field names,
// kinds, list declarations); the cache is the package's only shared state and
// never changes a result. Comparing two equal values allocates next to
// nothing: see the benchmarks against reflect.DeepEqual and go-cmp in
// bench_test.go.
package diff
