// Command fleet is steady's flagship demo: a replica-set-like controller
// keeps a simulated fleet of instances matching the groups stored in
// memstore, while the fleet drops events, fails and loses instances, the
// controller crashes in the middle of an operation and restarts with empty
// memory, and other writers interfere. It prints a live progress line and
// exits 0 once every group's instances match its stored description and
// every group reports Ready at its current generation.
//
// Usage:
//
//	go run ./examples/fleet [-objects 50] [-faults on|off|RATE] [-seed 1] [-duration 30s] [-chaos 3s]
//	go run ./examples/fleet -data DIR [flags above]
//	go run ./examples/fleet -debug :8080 [flags above]
//
// With -data, the groups live in DIR/fleet.db (store/boltstore) and survive
// a restart of the process. With -debug, the process serves steady's debug
// page and its Prometheus metrics. The demo itself is package
// examples/fleet/internal/demo; examples/fleet/fleet-etcd runs it on an
// etcd cluster, so that this program compiles nothing of etcd's client
// (main_test.go checks).
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/steady-go/steady/examples/fleet/internal/demo"
	"github.com/steady-go/steady/examples/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli.Exit("fleet", demo.Run(ctx, os.Args[1:], os.Stdout, nil))
}
