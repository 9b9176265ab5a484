// Command fleet-etcd runs the fleet demo (examples/fleet) on an etcd
// cluster: the desired state (the groups and their status) lives there
// under -prefix, and the controller works only while its replica leads an
// election on that cluster, so several processes with different -replica
// names run one active controller and standbys; the standby takes over when
// the active one dies. The fleet stays simulated inside each process (see
// examples/fleet/internal/demo's replica.go), and the process runs until
// interrupted. It is a program of its own so that examples/fleet, the
// default demo, compiles nothing of etcd's client.
//
// Usage:
//
//	go run ./examples/fleet/fleet-etcd -etcd host:port[,host:port...] [-replica NAME] [-prefix /steady-fleet/] [-ttl 5s]
//	    [-objects 50] [-faults on|off|RATE] [-seed 1] [-duration 30s] [-chaos 3s]
//
// go run ./store/etcdstore/cmd/localetcd starts a local 3-member cluster and
// prints its endpoints.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/kv"

	"github.com/steady-go/steady/examples/fleet/internal/debugserver"
	"github.com/steady-go/steady/examples/fleet/internal/demo"
	"github.com/steady-go/steady/examples/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli.Exit("fleet-etcd", run(ctx, os.Args[1:], os.Stdout))
}

// run plays the demo on the etcd cluster that args name.
func run(ctx context.Context, args []string, w io.Writer) error {
	var o etcdOptions
	return demo.Run(ctx, args, w, demo.Program{Name: "fleet-etcd", Debug: debugserver.Start, Shared: &demo.Shared{
		Flags: func(fs *flag.FlagSet) func() error { return addEtcdFlags(fs, &o) },
		Open: func(ctx context.Context, w io.Writer, note func(string, ...any)) (kv.Backend, demo.Elector, func(), error) {
			fmt.Fprintf(w, "fleet: replica %s on etcd %s, keys under %q, lease TTL %v\n",
				o.replica, strings.Join(o.endpoints, ","), o.prefix, o.ttl)
			b, e, release, err := newEtcdBackend(ctx, o, note)
			if err != nil {
				return nil, nil, nil, err // not a nil *demo.WatchedElector in a non-nil Elector
			}
			return b, e, release, nil
		},
	}})
}

// etcdOptions are the flags of the etcd mode.
type etcdOptions struct {
	endpoints []string
	prefix    string
	replica   string
	ttl       time.Duration // the election's lease TTL
}

// electionName is the election the replicas of the fleet controller run.
const electionName = "fleet-controller"

// addEtcdFlags registers -etcd, -prefix, -replica and -ttl on fs, and
// returns the function that checks them once fs is parsed.
func addEtcdFlags(fs *flag.FlagSet, o *etcdOptions) func() error {
	endpoints := fs.String("etcd", "", "the etcd cluster's client endpoints host:port[,host:port...] (required)")
	fs.StringVar(&o.prefix, "prefix", "/steady-fleet/", "the etcd key prefix of the demo's keys")
	host, _ := os.Hostname()
	fs.StringVar(&o.replica, "replica", fmt.Sprintf("%s-%d", host, os.Getpid()), "this replica's name in the leader election")
	fs.DurationVar(&o.ttl, "ttl", 5*time.Second, "the election's lease TTL (whole seconds, at least 2s)")
	return func() error {
		if *endpoints == "" {
			return errors.New("-etcd is required: the cluster's client endpoints host:port[,host:port...] (go run ./store/etcdstore/cmd/localetcd starts one)")
		}
		for e := range strings.SplitSeq(*endpoints, ",") {
			if e = strings.TrimSpace(e); e == "" {
				return fmt.Errorf("-etcd %q: empty endpoint", *endpoints)
			}
			o.endpoints = append(o.endpoints, e)
		}
		switch {
		case o.prefix == "":
			return errors.New("-prefix must not be empty")
		case o.replica == "":
			return errors.New("-replica must not be empty")
		case o.ttl < 2*time.Second:
			return fmt.Errorf("-ttl %v: want at least 2s", o.ttl)
		}
		return nil
	}
}

// dialTimeout bounds the first contact with the etcd cluster.
const dialTimeout = 5 * time.Second

// newEtcdBackend connects to the cluster, checks that it answers, and
// returns the Backend under o.prefix, this replica's elector, and the
// function that closes the client.
func newEtcdBackend(ctx context.Context, o etcdOptions, note func(format string, args ...any)) (*etcdstore.Backend, *demo.WatchedElector, func(), error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: o.endpoints, DialTimeout: dialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("etcd %s: %w", strings.Join(o.endpoints, ","), err)
	}
	pctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if _, err := cli.Get(pctx, o.prefix, clientv3.WithCountOnly()); err != nil {
		cli.Close()
		return nil, nil, nil, fmt.Errorf("etcd %s does not answer: %w", strings.Join(o.endpoints, ","), err)
	}
	b, err := etcdstore.New(cli, etcdstore.WithPrefix(o.prefix))
	if err != nil {
		cli.Close()
		return nil, nil, nil, err
	}
	e, err := etcdstore.NewElector(b, electionName, o.replica, o.ttl)
	if err != nil {
		cli.Close()
		return nil, nil, nil, err
	}
	holder := func(ctx context.Context) (string, error) {
		kvp, err := b.Get(ctx, e.Key())
		return string(kvp.Value), err
	}
	we := &demo.WatchedElector{Elector: e, Name: o.replica, LeaseTTL: o.ttl, Revision: "etcd revision", Note: note, Holder: holder}
	release := func() {
		awaitResign(cli, b.Prefix()+e.Key(), o.replica)
		cli.Close()
	}
	return b, we, release, nil
}

// resignWait bounds how long a stopping replica waits for its election key
// to go.
const resignWait = 2 * time.Second

// awaitResign waits, after the Loop stopped, until the election key no
// longer names this replica or resignWait passed. The etcd Elector revokes
// the lease of a term whose campaign ended in a goroutine of its own;
// closing the client before that revoke lands would leave the standby
// waiting out the whole TTL after a clean stop.
func awaitResign(cli *clientv3.Client, key, replica string) {
	ctx, cancel := context.WithTimeout(context.Background(), resignWait)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 || string(resp.Kvs[0].Value) != replica {
		return
	}
	for w := range cli.Watch(ctx, key, clientv3.WithRev(resp.Kvs[0].ModRevision+1)) {
		for _, ev := range w.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return
			}
		}
	}
}
