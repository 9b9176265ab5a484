module github.com/steady-go/steady/store/boltstore

go 1.26.0

require (
	github.com/steady-go/steady v0.1.0
	github.com/stretchr/testify v1.12.1
	go.etcd.io/bbolt v1.5.0
	go.uber.org/goleak v1.3.0
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/steady-go/steady => ../..
