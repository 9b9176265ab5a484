// Command fleet-full is the fleet demo (examples/fleet) with the two modes
// that need dependencies of their own, which the default program leaves
// out so that its first run compiles quickly:
//
//   - -data DIR keeps the groups in DIR/fleet.db, a store/boltstore file
//     (bbolt), so they survive the process: kill it, even with kill -9,
//     start it again on the same directory, and the controller converges
//     the groups it finds there without recreating them. One process owns
//     the file at a time; a second one is refused.
//   - -debug ADDR serves steady's debug page at /debug/steady/ and its
//     Prometheus series at /metrics (net/http, metrics/prometheus with
//     client_golang and protobuf), and keeps the controller running after
//     the verdict until interrupted.
//
// Usage:
//
//	go run ./examples/fleet/fleet-full [-data DIR] [-debug 127.0.0.1:8080] [-objects 50] [-faults on|off|RATE] [-seed 1] [-duration 30s] [-chaos 3s]
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"

	"github.com/steady-go/steady/examples/fleet/internal/debugserver"
	"github.com/steady-go/steady/examples/fleet/internal/demo"
	"github.com/steady-go/steady/examples/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli.Exit("fleet-full", run(ctx, os.Args[1:], os.Stdout))
}

// run plays the demo with -data and -debug.
func run(ctx context.Context, args []string, w io.Writer) error {
	return demo.Run(ctx, args, w, demo.Program{Name: "fleet-full", Data: openData, Debug: debugserver.Start})
}

// dataFile is the file of the data mode in dir.
func dataFile(dir string) string { return filepath.Join(dir, "fleet.db") }

// openData opens (or creates) the data mode's file in dir.
func openData(dir string) (kv.Backend, string, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", nil, err
	}
	s, err := boltstore.Open(dataFile(dir))
	if err != nil {
		return nil, "", nil, err
	}
	return s, dataFile(dir), func() { s.Close() }, nil
}
