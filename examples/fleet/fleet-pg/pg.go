// Command fleet-pg runs the fleet demo (examples/fleet) on PostgreSQL: the
// desired state (the groups and their status) lives in one schema of the
// database that -postgres names (store/pgstore), and the controller works
// only while its replica leads an election held in that schema
// (store/lease's StoreElector, whose fence rides along with every write),
// so several processes with different -replica names run one active
// controller and standbys; the standby takes over when the active one's
// lease lapses. The fleet stays simulated inside each process, and the
// process runs until interrupted. It is a program of its own so that
// examples/fleet, the default demo, compiles nothing of pgx.
//
// Usage:
//
//	go run ./examples/fleet/fleet-pg -postgres URL [-schema steady_fleet] [-replica NAME] [-ttl 5s]
//	    [-objects 50] [-faults on|off|RATE] [-seed 1] [-duration 30s] [-chaos 3s]
//
// URL is a libpq connection string such as
// postgres://user:password@127.0.0.1:5432/dbname?sslmode=disable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/lease"
	"github.com/steady-go/steady/store/pgstore"

	"github.com/steady-go/steady/examples/fleet/internal/debugserver"
	"github.com/steady-go/steady/examples/fleet/internal/demo"
	"github.com/steady-go/steady/examples/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli.Exit("fleet-pg", run(ctx, os.Args[1:], os.Stdout))
}

// run plays the demo on the database that args name.
func run(ctx context.Context, args []string, w io.Writer) error {
	var o pgOptions
	return demo.Run(ctx, args, w, demo.Program{Name: "fleet-pg", Debug: debugserver.Start, Shared: &demo.Shared{
		Flags: func(fs *flag.FlagSet) func() error { return addPGFlags(fs, &o) },
		Open: func(ctx context.Context, w io.Writer, note func(string, ...any)) (kv.Backend, demo.Elector, func(), error) {
			fmt.Fprintf(w, "fleet: replica %s on PostgreSQL, schema %q, lease TTL %v\n", o.replica, o.schema, o.ttl)
			b, e, release, err := newPGBackend(ctx, o, note)
			if err != nil {
				return nil, nil, nil, err // not a nil *demo.WatchedElector in a non-nil Elector
			}
			return b, e, release, nil
		},
	}})
}

// pgOptions are the flags of the PostgreSQL mode.
type pgOptions struct {
	url     string
	schema  string
	replica string
	ttl     time.Duration
}

// electionKey is the leader key of the fleet controller's replicas.
const electionKey = "_leases/fleet-controller"

func addPGFlags(fs *flag.FlagSet, o *pgOptions) func() error {
	fs.StringVar(&o.url, "postgres", "", "the database's connection URL, postgres://user:password@host:port/dbname (required)")
	fs.StringVar(&o.schema, "schema", "steady_fleet", "the schema that holds the demo's tables")
	host, _ := os.Hostname()
	fs.StringVar(&o.replica, "replica", fmt.Sprintf("%s-%d", host, os.Getpid()), "this replica's name in the leader election")
	fs.DurationVar(&o.ttl, "ttl", 5*time.Second, "the election's lease TTL")
	return func() error {
		switch {
		case o.url == "":
			return errors.New("-postgres is required: the database's URL, postgres://user:password@host:port/dbname")
		case o.replica == "":
			return errors.New("-replica must not be empty")
		case o.ttl < time.Second:
			return fmt.Errorf("-ttl %v: want at least 1s", o.ttl)
		}
		return nil
	}
}

// connectTimeout bounds the first contact with the database.
const connectTimeout = 5 * time.Second

// newPGBackend connects, creates the schema if needed, and returns the
// Backend, this replica's elector, and the function that closes the
// Backend (ending its watches) and then the pool.
func newPGBackend(ctx context.Context, o pgOptions, note func(format string, args ...any)) (*pgstore.Backend, *demo.WatchedElector, func(), error) {
	pool, err := pgxpool.New(ctx, o.url)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-postgres: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	b, err := pgstore.New(cctx, pool, pgstore.WithSchema(o.schema))
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	e, err := lease.New(b, electionKey, o.replica, lease.WithTTL(o.ttl), lease.WithRetryPeriod(o.ttl/10))
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	we := &demo.WatchedElector{Elector: e, Name: o.replica, LeaseTTL: o.ttl, Revision: "revision", Note: note, Holder: e.Holder}
	return b, we, func() { _ = b.Close(); pool.Close() }, nil
}
