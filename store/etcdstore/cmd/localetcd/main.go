// Command localetcd runs a local etcd cluster inside one process, on
// loopback ports, for trying steady on etcd with nothing installed but Go:
//
//	go run ./store/etcdstore/cmd/localetcd             # 3 members on 127.0.0.1:12379, :22379, :32379
//	go run ./store/etcdstore/cmd/localetcd -members 1  # one member on 127.0.0.1:12379
//
// It prints the client endpoints once every member serves, in the form
// examples/fleet/fleet-etcd's -etcd flag takes, and runs until interrupted (Ctrl-C or
// SIGTERM), then stops every member cleanly. Member i (counting from 1)
// listens for clients on port i2379 and for peers on port i2380 unless
// -client-ports and -peer-ports say otherwise. Data lives in a new temporary
// directory, removed on exit, unless -dir names one to keep.
//
// It is a development aid, not a way to run etcd in production: all members
// share one process and one disk, so a crash of the process is a crash of
// the whole cluster. To see a failover, stop a replica of the controller, not
// a member of this cluster.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "localetcd:", err)
		os.Exit(2)
	}
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "localetcd:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	clientPorts []int
	peerPorts   []int
	dir         string // "" means a temporary directory, removed on exit
	logLevel    string
}

const maxMembers = 5

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("localetcd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	members := fs.Int("members", 3, fmt.Sprintf("number of members, 1 to %d (odd numbers tolerate failures)", maxMembers))
	clients := fs.String("client-ports", "", "comma-separated client ports, one per member (default 12379,22379,...)")
	peers := fs.String("peer-ports", "", "comma-separated peer ports, one per member (default 12380,22380,...)")
	dir := fs.String("dir", "", "keep the members' data in this directory (default: a temporary one, removed on exit)")
	logLevel := fs.String("log-level", "panic", "etcd's own log level: debug, info, warn, error, panic or fatal (error shows etcd's routine start and stop noise; failures to start are reported either way)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *members < 1 || *members > maxMembers {
		return config{}, fmt.Errorf("-members %d: must be between 1 and %d", *members, maxMembers)
	}
	cfg := config{dir: *dir, logLevel: *logLevel}
	var err error
	if cfg.clientPorts, err = ports("-client-ports", *clients, *members, 2379); err != nil {
		return config{}, err
	}
	if cfg.peerPorts, err = ports("-peer-ports", *peers, *members, 2380); err != nil {
		return config{}, err
	}
	seen := map[int]bool{}
	for _, p := range append(append([]int(nil), cfg.clientPorts...), cfg.peerPorts...) {
		if seen[p] {
			return config{}, fmt.Errorf("port %d is given twice", p)
		}
		seen[p] = true
	}
	return cfg, nil
}

// ports parses a port list for n members, or gives the default i*10000+base.
func ports(name, list string, n, base int) ([]int, error) {
	if list == "" {
		out := make([]int, n)
		for i := range n {
			out[i] = (i+1)*10000 + base
		}
		return out, nil
	}
	fields := strings.Split(list, ",")
	if len(fields) != n {
		return nil, fmt.Errorf("%s %q: %d ports for %d members", name, list, len(fields), n)
	}
	out := make([]int, n)
	for i, f := range fields {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("%s %q: %q is not a port", name, list, f)
		}
		out[i] = p
	}
	return out, nil
}

// run starts the members, prints their client endpoints and blocks until ctx
// ends; then it stops them and waits until they have stopped.
func run(ctx context.Context, cfg config, out io.Writer) error {
	dir := cfg.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "localetcd-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	members, err := start(cfg, dir)
	defer func() {
		for _, m := range members {
			m.Close() // waits for the member's servers and goroutines to stop
		}
	}()
	if err != nil {
		return err
	}
	if ready, err := awaitReady(ctx, members); !ready {
		return err
	}
	n := len(members)
	endpoints := make([]string, n)
	for i, p := range cfg.clientPorts {
		endpoints[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	fmt.Fprintf(out, "etcd: %d member(s) ready, data in %s\n", n, dir)
	fmt.Fprintf(out, "endpoints: %s\n", strings.Join(endpoints, ","))
	fmt.Fprintf(out, "try: go run ./examples/fleet/fleet-etcd -etcd %s -replica a\n", strings.Join(endpoints, ","))

	errc := make(chan error, n)
	for _, m := range members {
		go func() {
			select {
			case err := <-m.Err():
				errc <- fmt.Errorf("member %s: %w", m.Config().Name, err)
			case <-m.Server.StopNotify():
			}
		}()
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(out, "etcd: stopping")
		return nil
	case err := <-errc:
		return err
	}
}

// start starts the members side by side, as members of one cluster wait for
// each other at start, with their data under dir. It returns those that
// started, for the caller to close, and what kept the others from starting.
func start(cfg config, dir string) ([]*embed.Etcd, error) {
	n := len(cfg.clientPorts)
	initial := make([]string, n)
	for i := range n {
		initial[i] = fmt.Sprintf("m%d=http://127.0.0.1:%d", i+1, cfg.peerPorts[i])
	}
	type started struct {
		e   *embed.Etcd
		err error
	}
	results := make(chan started, n)
	for i := range n {
		ec := memberConfig(cfg, dir, i, strings.Join(initial, ","))
		go func() {
			e, err := embed.StartEtcd(ec)
			results <- started{e, err}
		}()
	}
	var members []*embed.Etcd
	var errs []error
	for range n {
		r := <-results
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		members = append(members, r.e)
	}
	if err := errors.Join(errs...); err != nil {
		return members, fmt.Errorf("starting etcd: %w", err)
	}
	return members, nil
}

// memberConfig is the configuration of member i of the cluster initial.
func memberConfig(cfg config, dir string, i int, initial string) *embed.Config {
	ec := embed.NewConfig()
	ec.Name = fmt.Sprintf("m%d", i+1)
	ec.Dir = filepath.Join(dir, ec.Name)
	ec.LogLevel = cfg.logLevel
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", cfg.peerPorts[i])}
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", cfg.clientPorts[i])}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	ec.InitialCluster = initial
	ec.InitialClusterToken = "localetcd"
	if _, err := os.Stat(filepath.Join(ec.Dir, "member")); err == nil {
		ec.ClusterState = embed.ClusterStateFlagExisting // -dir from an earlier run
	}
	return ec
}

// awaitReady waits until every member is ready. It reports false, with the
// reason (nil when ctx ended), when one fails, takes over 60s, or ctx ends
// first.
func awaitReady(ctx context.Context, members []*embed.Etcd) (bool, error) {
	for _, m := range members {
		select {
		case <-m.Server.ReadyNotify():
		case err := <-m.Err():
			return false, fmt.Errorf("member %s: %w", m.Config().Name, err)
		case <-time.After(60 * time.Second):
			return false, fmt.Errorf("member %s did not become ready within 60s", m.Config().Name)
		case <-ctx.Done():
			return false, nil
		}
	}
	return true, nil
}
