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
package diff
