package pgstore_test

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/store/pgstore"
	"github.com/steady-go/steady/store/pgstore/pgtest"
)

// server is the PostgreSQL server of this test binary, nil when none could
// be found (and STEADY_PG_REQUIRED is unset): the tests then skip.
var server *pgtest.Server

// TestMain starts a PostgreSQL server of its own (initdb into a temporary
// directory, a free loopback port), runs the tests, stops the server and
// checks for leaked goroutines. Without PostgreSQL binaries the tests skip
// loudly, unless STEADY_PG_REQUIRED is set (CI sets it), when they fail.
//
// The server is pgtest's NoSync one, which never waits for the disk, unless
// PGSTORE_BENCH_DURABLE says otherwise (benchDurability), so that the
// benchmarks can measure a server with the durability users run.
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

// benchDurability reads PGSTORE_BENCH_DURABLE: unset, "" or "0" is
// pgtest.NoSync (fsync=off), "1" is pgtest.Durable (PostgreSQL's defaults:
// each commit waits for its log flush), "async" is pgtest.AsyncCommit
// (durable, with synchronous_commit=off). Any other value is an error.
func benchDurability() (pgtest.Durability, error) {
	switch v := os.Getenv("PGSTORE_BENCH_DURABLE"); v {
	case "", "0":
		return pgtest.NoSync, nil
	case "1":
		return pgtest.Durable, nil
	case "async":
		return pgtest.AsyncCommit, nil
	default:
		return 0, fmt.Errorf(`PGSTORE_BENCH_DURABLE=%q: want "0" (fsync=off), "1" (PostgreSQL's defaults) or "async" (synchronous_commit=off)`, v)
	}
}

func runMain(m *testing.M) int {
	d, err := benchDurability()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgstore: %v\n", err)
		return 1
	}
	if d != pgtest.NoSync {
		fmt.Fprintf(os.Stderr, "pgstore: PostgreSQL runs with durability %v\n", d)
	}
	s, err := pgtest.Start(pgtest.WithDurability(d))
	switch {
	case errors.Is(err, pgtest.ErrNoPostgres) && os.Getenv("STEADY_PG_REQUIRED") == "":
		fmt.Fprintf(os.Stderr, "\n!!! pgstore: %v: EVERY TEST OF THIS PACKAGE SKIPS (install postgresql, or set STEADY_PG_REQUIRED=1 to fail instead)\n\n", err)
	case err != nil:
		fmt.Fprintf(os.Stderr, "pgstore: cannot start PostgreSQL for the tests: %v\n", err)
		return 1
	default:
		server = s
		defer func() {
			if err := s.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "pgstore: stopping PostgreSQL: %v\n", err)
			}
		}()
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}

// needServer skips the test when there is no server (TestMain said so
// loudly).
func needServer(t testing.TB) *pgtest.Server {
	t.Helper()
	if server == nil {
		t.Skip("no PostgreSQL server: see TestMain's message")
	}
	return server
}

// newPool returns a pool on url (the test server's by default), closed with
// the test.
func newPool(t testing.TB, url ...string) *pgxpool.Pool {
	t.Helper()
	u := needServer(t).URL()
	if len(url) > 0 {
		u = url[0]
	}
	pool, err := pgxpool.New(t.Context(), u+"&pool_max_conns=16")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

var schemas atomic.Int64

// newBackend returns a Backend on a schema of its own, so it starts empty
// at revision 0, closed with the test (before its pool).
func newBackend(t testing.TB, pool *pgxpool.Pool, opts ...pgstore.Option) *pgstore.Backend {
	t.Helper()
	opts = append([]pgstore.Option{pgstore.WithSchema(fmt.Sprintf("t%d", schemas.Add(1))), nil}, opts...) // a nil option is skipped
	b, err := pgstore.New(t.Context(), pool, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	return b
}
