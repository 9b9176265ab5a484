// Package ssacheck is a test-only module: a differential test that runs
// seeded random multi-manager scenarios through steady's ownership engine
// and through Kubernetes' sigs.k8s.io/structured-merge-diff, and compares
// them step by step. It is a module of its own so that the root module
// does not depend on structured-merge-diff.
//
//	go test ./...                 # the short run (a few hundred steps)
//	go test -run Differential -v -steps=5000 ./...
package ssacheck
