package pgstore_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/store/pgstore"
)

// server is the PostgreSQL server of this test binary, nil when none could
// be found (and STEADY_PG_REQUIRED is unset): the tests then skip.
var server *pgServer

// TestMain starts a PostgreSQL server of its own (initdb into a temporary
// directory, a free loopback port), runs the tests, stops the server and
// checks for leaked goroutines. Without PostgreSQL binaries the tests skip
// loudly, unless STEADY_PG_REQUIRED is set (CI sets it), when they fail.
func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	s, err := startServer()
	switch {
	case errors.Is(err, errNoPostgres) && os.Getenv("STEADY_PG_REQUIRED") == "":
		fmt.Fprintf(os.Stderr, "\n!!! pgstore: %v: EVERY TEST OF THIS PACKAGE SKIPS (install postgresql, or set STEADY_PG_REQUIRED=1 to fail instead)\n\n", err)
	case err != nil:
		fmt.Fprintf(os.Stderr, "pgstore: cannot start PostgreSQL for the tests: %v\n", err)
		return 1
	default:
		server = s
		defer func() {
			if err := s.stop("fast"); err != nil {
				fmt.Fprintf(os.Stderr, "pgstore: stopping PostgreSQL: %v\n", err)
			}
			_ = os.RemoveAll(s.dir)
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

var errNoPostgres = errors.New("no PostgreSQL server binary (postgres, initdb, pg_ctl) found")

// pgServer is a PostgreSQL server in a temporary directory. As root it runs
// as the postgres user (or nobody), since the server refuses to run as root.
type pgServer struct {
	bin  string // directory of postgres, initdb and pg_ctl
	dir  string // holds data/, the socket and the log
	port int
	user *user.User // nil: the current user
}

func findBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(found) == 0 {
		return "", errNoPostgres
	}
	// The highest version: numeric order of the version directory.
	slices.SortFunc(found, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(a))))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(b))))
		return va - vb
	})
	return filepath.Dir(found[len(found)-1]), nil
}

func startServer() (*pgServer, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	s := &pgServer{bin: bin}
	if os.Geteuid() == 0 {
		if s.user, err = user.Lookup("postgres"); err != nil {
			if s.user, err = user.Lookup("nobody"); err != nil {
				return nil, fmt.Errorf("running as root and no postgres or nobody user to run the server as: %w", err)
			}
		}
	}
	if s.dir, err = os.MkdirTemp("", "pgstore-test-"); err != nil {
		return nil, err
	}
	if s.user != nil {
		uid, _ := strconv.Atoi(s.user.Uid)
		gid, _ := strconv.Atoi(s.user.Gid)
		if err := os.Chown(s.dir, uid, gid); err != nil {
			return nil, err
		}
	}
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	out, err := s.command("initdb", "-D", s.data(), "-U", "steady", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := s.start(); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *pgServer) data() string { return filepath.Join(s.dir, "data") }

// command runs a server binary, as s.user if set, in s.dir (the server's
// user may not be able to read the test's working directory).
func (s *pgServer) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	cmd := exec.Command(path, args...)
	if s.user != nil {
		cmd = exec.Command("runuser", append([]string{"-u", s.user.Username, "--", path}, args...)...)
	}
	cmd.Dir = s.dir
	return cmd
}

// start starts the server and waits until it accepts connections. fsync is
// off: the tests kill and restart the server process, never the machine,
// and the kernel keeps what a killed process wrote.
func (s *pgServer) start() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c shared_buffers=32MB -c max_connections=200", s.port, s.dir)
	out, err := s.command("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "log"), "-o", opts, "-w", "-t", "60", "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// stop stops the server in mode fast (disconnect clients, shut down
// cleanly) or immediate (kill it: recovery on the next start).
func (s *pgServer) stop(mode string) error {
	out, err := s.command("pg_ctl", "-D", s.data(), "-m", mode, "-w", "-t", "60", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

func (s *pgServer) url() string {
	return fmt.Sprintf("postgres://steady@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// needServer skips the test when there is no server (TestMain said so
// loudly).
func needServer(t testing.TB) *pgServer {
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
	u := needServer(t).url()
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
// at revision 0.
func newBackend(t testing.TB, pool *pgxpool.Pool, opts ...pgstore.Option) *pgstore.Backend {
	t.Helper()
	opts = append([]pgstore.Option{pgstore.WithSchema(fmt.Sprintf("t%d", schemas.Add(1)))}, opts...)
	b, err := pgstore.New(t.Context(), pool, opts...)
	require.NoError(t, err)
	return b
}
