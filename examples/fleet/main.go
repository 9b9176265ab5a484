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
//
// The demo itself is package examples/fleet/internal/demo. This program
// runs it on the embedded memstore and compiles little besides steady, so
// that a first run is quick: examples/fleet/fleet-full adds -data (the
// groups in a store/boltstore file that survives a restart) and -debug
// (the debug page and Prometheus metrics), and examples/fleet/fleet-etcd
// runs it on an etcd cluster (main_test.go checks that this program
// compiles none of them). It runs under a soft memory limit that grows with
// -objects (64 MiB and 4,800 bytes a group; the README says why), unless
// GOMEMLIMIT is set.
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
	cli.Exit("fleet", demo.Run(ctx, os.Args[1:], os.Stdout, demo.Program{Name: "fleet", SoftMemoryLimit: true}))
}
