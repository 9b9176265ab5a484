module github.com/steady-go/steady/ownership/ssacheck

go 1.26.0

require (
	github.com/steady-go/steady v0.1.0
	go.uber.org/goleak v1.3.0
	sigs.k8s.io/structured-merge-diff/v6 v6.4.2
)

require (
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
)

replace github.com/steady-go/steady => ../..
