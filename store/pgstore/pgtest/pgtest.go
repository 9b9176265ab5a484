// Package pgtest starts a throwaway PostgreSQL server for tests: initdb
// into a temporary directory, a free loopback port, the server process run
// as an unprivileged user when the test runs as root. store/pgstore's tests
// and the fleet-pg example's use it; so may a user's.
//
// By default the server does not flush its write-ahead log (NoSync), so that
// tests which kill and restart it run fast; WithDurability starts it with
// the settings of a server users run instead, for benchmarks.
package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/steady-go/steady/internal/freeport"
)

// ErrNoPostgres is Start's error when no PostgreSQL binaries are found.
var ErrNoPostgres = errors.New("no PostgreSQL server binary (postgres, initdb, pg_ctl) found")

// Server is a PostgreSQL server in a temporary directory, listening on a
// free loopback port, with a user "steady" that needs no password. As root
// it runs as the postgres user (or nobody), since the server refuses to run
// as root.
type Server struct {
	bin        string // directory of postgres, initdb and pg_ctl
	dir        string // holds data/, the socket and the log
	port       int
	user       *user.User // nil: the current user
	durability Durability
}

// Durability is how the server makes its commits durable: the settings of
// fsync, full_page_writes and synchronous_commit it starts with.
type Durability int

const (
	// NoSync is the tests' server: fsync=off and full_page_writes=off. No
	// commit waits for the disk, and a kill and restart of the server
	// loses nothing (the kernel keeps what a killed process wrote), though
	// a crash of the machine would.
	NoSync Durability = iota
	// Durable is PostgreSQL's defaults, as a server users run has them:
	// fsync=on, full_page_writes=on, synchronous_commit=on. Each commit
	// waits for its write-ahead log to reach the disk (an fdatasync), so a
	// write costs at least one flush of the disk.
	Durable
	// AsyncCommit is Durable with synchronous_commit=off, a common tuning:
	// a commit returns before its log is flushed (the WAL writer flushes
	// it within a few hundred milliseconds), so a crash of the server may
	// lose the last commits, but never corrupts the data.
	AsyncCommit
)

// String is the Durability's name: "nosync", "durable" or "async-commit".
func (d Durability) String() string {
	switch d {
	case NoSync:
		return "nosync"
	case Durable:
		return "durable"
	case AsyncCommit:
		return "async-commit"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// settings is d's server options.
func (d Durability) settings() string {
	switch d {
	case Durable:
		return "-c fsync=on -c full_page_writes=on -c synchronous_commit=on"
	case AsyncCommit:
		return "-c fsync=on -c full_page_writes=on -c synchronous_commit=off"
	}
	return "-c fsync=off -c full_page_writes=off"
}

// Option configures Start.
type Option func(*Server) error

// WithDurability starts the server with durability d (NoSync by default).
// An unknown d is Start's error.
func WithDurability(d Durability) Option {
	return func(s *Server) error {
		if d < NoSync || d > AsyncCommit {
			return fmt.Errorf("pgtest: unknown durability %v", d)
		}
		s.durability = d
		return nil
	}
}

func findBin() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(found) == 0 {
		return "", ErrNoPostgres
	}
	// The highest version: numeric order of the version directory.
	slices.SortFunc(found, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(a))))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(b))))
		return va - vb
	})
	return filepath.Dir(found[len(found)-1]), nil
}

// Start finds the PostgreSQL binaries (pg_ctl on PATH, else the newest
// /usr/lib/postgresql/*/bin), runs initdb into a new temporary directory and
// starts the server there, waiting until it accepts connections. Without
// binaries it returns ErrNoPostgres. Close stops the server and removes the
// directory. A nil option is skipped.
func Start(opts ...Option) (*Server, error) { return start(freePort, opts...) }

// start is Start with the server's port picked by pick.
func start(pick func() (int, error), opts ...Option) (*Server, error) {
	s := &Server{}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			return nil, err
		}
	}
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	s.bin = bin
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
	out, err := s.command("initdb", "-D", s.data(), "-U", "steady", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// A port free when picked can be taken before the server binds it (by
	// another test's pick: CI runs modules side by side), so a bind that
	// fails is tried again on another.
	for try := 1; ; try++ {
		if s.port, err = pick(); err == nil {
			err = s.Start()
		}
		if err == nil || try == 3 || !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	if err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, err
	}
	return s, nil
}

// freePort picks one free loopback port.
func freePort() (int, error) {
	p, err := freeport.Pick(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

// command runs a server binary, as s.user if set, in s.dir (the server's
// user may not be able to read the test's working directory).
func (s *Server) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	cmd := exec.Command(path, args...)
	if s.user != nil {
		cmd = exec.Command(runuser(), append([]string{"-u", s.user.Username, "--", path}, args...)...)
	}
	cmd.Dir = s.dir
	return cmd
}

// Start starts the stopped server again (the package's Start starts it the
// first time), on the same port and data, and waits until it accepts
// connections, with the Durability it was first started with.
func (s *Server) Start() error {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 %s -c shared_buffers=32MB -c max_connections=200", s.port, s.dir, s.durability.settings())
	out, err := s.command("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "log"), "-o", opts, "-w", "-t", "60", "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server in mode "fast" (disconnect clients, shut down
// cleanly) or "immediate" (kill it: crash recovery on the next Start).
func (s *Server) Stop(mode string) error {
	out, err := s.command("pg_ctl", "-D", s.data(), "-m", mode, "-w", "-t", "60", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// URL is the server's connection string, for pgx.Connect or pgxpool.New
// (add "&pool_max_conns=N" as needed).
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://steady@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Port is the server's loopback port.
func (s *Server) Port() int { return s.port }

// Close stops the server (fast) and removes its directory.
func (s *Server) Close() error {
	err := s.Stop("fast")
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

// runuser finds util-linux's runuser, which a root PATH without /usr/sbin
// would miss.
func runuser() string {
	if p, err := exec.LookPath("runuser"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/runuser", "/sbin/runuser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "runuser"
}
