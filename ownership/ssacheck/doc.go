// Package ssacheck is a test-only module: a differential test that runs
// seeded random multi-manager scenarios through steady's ownership engine
// and through Kubernetes' sigs.k8s.io/structured-merge-diff, and compares
// them step by step. It is a module of its own so that the root module
// does not depend on structured-merge-diff. It fails on any step where
// the engines differ in a way that no rule named in ownership's doc.go
// explains, and logs the agreement table and how many steps each rule
// excused.
//
// Each seed runs synced (after a step that does not end identically the
// reference takes steady's state, so every step starts from one state) and
// chained (each engine on its own state for the whole scenario; a
// difference left by an excused step is carried while neither engine
// changes it).
//
// TestFiltersCatchPlantedFaults plants, per rule, a fault just outside the
// rule's stated reason and requires each step it is planted in to be
// reported; TestDeliberateDifferencesInTheirSmallestForm shows each
// difference doc.go keeps on purpose as each engine handles it.
//
//	go test ./...                        # the fixed seeds, 1,000 steps each, and the seeds that once failed
//	go test -run Differential -fresh=50  # and 50 fresh seeds, each printed for -seed
//	go test -run Differential -v -seed=N # replay seed N
//	go test -run DifferentialLong -v -long # 20,000 steps per mode on new seeds; the bound on chained
package ssacheck
