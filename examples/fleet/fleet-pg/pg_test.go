package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/pgstore/pgtest"
)

// server is the PostgreSQL server of this test binary (see
// store/pgstore/pgtest), nil when there are no binaries and
// STEADY_PG_REQUIRED is unset: the tests then skip.
var server *pgtest.Server

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	s, err := pgtest.Start()
	switch {
	case errors.Is(err, pgtest.ErrNoPostgres) && os.Getenv("STEADY_PG_REQUIRED") == "":
		fmt.Fprintf(os.Stderr, "\n!!! fleet-pg: %v: EVERY TEST OF THIS PACKAGE SKIPS (install postgresql, or set STEADY_PG_REQUIRED=1 to fail instead)\n\n", err)
	case err != nil:
		fmt.Fprintf(os.Stderr, "fleet-pg: cannot start PostgreSQL for the tests: %v\n", err)
		return 1
	default:
		server = s
		defer s.Close()
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

// output is a writer for run that a test can wait on.
type output struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	o.b.Write(p)
	o.mu.Unlock()
	select {
	case o.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

func (o *output) waitFor(t *testing.T, s string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for !strings.Contains(o.String(), s) {
		select {
		case <-o.changed:
		case <-deadline:
			t.Fatalf("no %q within %v in:\n%s", s, d, o.String())
		}
	}
}

// The demo, with every fault on, converges on a local PostgreSQL server,
// leading its election there.
func TestPostgresConvergesDespiteEveryFault(t *testing.T) {
	if server == nil {
		t.Skip("no PostgreSQL server: see TestMain's message")
	}
	out := &output{changed: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"-postgres", server.URL(), "-replica=a", "-ttl=2s", "-objects=10", "-chaos=1s", "-seed=2"}, out)
	}()
	out.waitFor(t, "converged: all 10 groups match the store", 60*time.Second)
	cancel()
	require.NoError(t, <-errc, "interrupted after converging: exit 0")

	text := out.String()
	require.Contains(t, text, `fleet: replica a on PostgreSQL, schema "steady_fleet", lease TTL 2s`)
	require.Contains(t, text, "! replica a leads: term fenced at revision ")
	require.Regexp(t, `! controller crashed mid-reconcile, right after write #\d+`, text)
	require.Regexp(t, `! replica a converged the fleet [\d.]+s into its term \d`, text)
}

func TestPostgresBadFlags(t *testing.T) {
	err := run(t.Context(), nil, &output{changed: make(chan struct{}, 1)})
	require.ErrorContains(t, err, "-postgres is required")
}
