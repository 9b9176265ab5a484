package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/etcdstore"
	"github.com/steady-go/steady/store/lease"
)

// The etcd mode: with -etcd, the desired state (the Groups and their
// status) lives in an etcd cluster under -prefix, and the controller runs
// only while its replica leads an election on that cluster, so several
// processes with different -replica names run one active controller and
// standbys. The fleet stays simulated inside each process (see replica.go).

// etcdOptions are the flags of the etcd mode; endpoints is empty without it.
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
	endpoints := fs.String("etcd", "", "run on etcd: client endpoints host:port[,host:port...] (default: the embedded memstore)")
	fs.StringVar(&o.prefix, "prefix", "/steady-fleet/", "with -etcd: the etcd key prefix of the demo's keys")
	host, _ := os.Hostname()
	fs.StringVar(&o.replica, "replica", fmt.Sprintf("%s-%d", host, os.Getpid()), "with -etcd: this replica's name in the leader election")
	fs.DurationVar(&o.ttl, "ttl", 5*time.Second, "with -etcd: the election's lease TTL (whole seconds, at least 2s)")
	return func() error {
		if *endpoints == "" {
			return nil
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

// on reports whether the demo runs on etcd.
func (o etcdOptions) on() bool { return len(o.endpoints) > 0 }

// dialTimeout bounds the first contact with the etcd cluster.
const dialTimeout = 5 * time.Second

// newEtcdBackend connects to the cluster, checks that it answers, and
// returns the Backend under o.prefix, this replica's elector, and the
// function that closes the client.
func newEtcdBackend(ctx context.Context, o etcdOptions, note func(format string, args ...any)) (*etcdstore.Backend, *replicaElector, func(), error) {
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
	re := &replicaElector{Elector: e, backend: b, replica: o.replica, note: note}
	release := func() {
		re.awaitResign(cli)
		cli.Close()
	}
	return b, re, release, nil
}

// replicaElector is the etcd Elector, watched: it tells the demo whether
// this replica leads, since when, and notes every change of term.
type replicaElector struct {
	*etcdstore.Elector
	backend *etcdstore.Backend
	replica string
	note    func(format string, args ...any)

	mu      sync.Mutex
	leading bool
	since   time.Time // when the current term began, or the last one ended
	terms   int
}

var _ lease.Elector = (*replicaElector)(nil)

// Campaign implements lease.Elector: it campaigns with the etcd Elector,
// and notes the term's start and, in a goroutine that ends with the term,
// its end.
func (e *replicaElector) Campaign(ctx context.Context) (context.Context, store.Fence, error) {
	term, fence, err := e.Elector.Campaign(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.note("replica %s: campaign failed: %v", e.replica, err)
		}
		return term, fence, err
	}
	e.mu.Lock()
	e.leading, e.since = true, time.Now()
	e.terms++
	e.mu.Unlock()
	e.note("replica %s leads: term fenced at etcd revision %d; reconciling every group", e.replica, fence.Revision)
	go func() {
		<-term.Done()
		e.mu.Lock()
		e.leading, e.since = false, time.Now()
		e.mu.Unlock()
		if ctx.Err() == nil { // not a shutdown
			e.note("replica %s's term ended (%v): its writes are fenced from now on", e.replica, context.Cause(term))
		}
	}()
	return term, fence, nil
}

// state returns whether this replica leads, since when, and how many terms
// it has begun.
func (e *replicaElector) state() (leading bool, since time.Time, terms int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading, e.since, e.terms
}

// resignWait bounds how long a stopping replica waits for its election key
// to go.
const resignWait = 2 * time.Second

// awaitResign waits, after the Loop stopped, until the election key no
// longer names this replica or resignWait passed. The etcd Elector revokes
// the lease of a term whose campaign ended in a goroutine of its own;
// closing the client before that revoke lands would leave the standby
// waiting out the whole TTL after a clean stop.
func (e *replicaElector) awaitResign(cli *clientv3.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), resignWait)
	defer cancel()
	key := e.backend.Prefix() + e.Key()
	resp, err := cli.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 || string(resp.Kvs[0].Value) != e.replica {
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

// leader returns the name of the replica that holds the election key, or ""
// if none does.
func (e *replicaElector) leader(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	kv, err := e.backend.Get(ctx, e.Key())
	if err != nil {
		return ""
	}
	return string(kv.Value)
}
