module github.com/steady-go/steady/bench

go 1.26.0

require (
	github.com/steady-go/steady v0.0.0
	go.uber.org/goleak v1.3.0
	k8s.io/client-go v0.37.2
)

require (
	github.com/go-logr/logr v1.4.3 // indirect
	golang.org/x/time v0.16.0 // indirect
	k8s.io/apimachinery v0.37.2 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/utils v0.0.0-20260626114624-be93311217bd // indirect
)

replace github.com/steady-go/steady => ../
