// Package ssacheck is a test-only module: a differential test that runs
// seeded random multi-manager scenarios through steady's ownership engine
// and through Kubernetes' sigs.k8s.io/structured-merge-diff, and compares
// them step by step. It is a module of its own so that the root module
// does not depend on structured-merge-diff. It fails on any step where
// the engines differ in a way that no rule named in ownership's doc.go
// explains, and logs the agreement table and how many steps each rule
// excused.
//
//	go test ./...                 # the short run (1,000 steps)
//	go test -run Differential -v -steps=5000 ./...
package ssacheck
