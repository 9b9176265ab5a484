package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/internal/freeport"
	"github.com/steady-go/steady/store/etcdstore/internal/etcdtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Process-wide workers that etcd's and gRPC's libraries start once
		// and never stop; they are not goroutines this program started.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/pkg/v3/schedule.(*fifo).run"),
		goleak.IgnoreAnyFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
	)
}

// portList joins ports as the flags take them.
func portList(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ",")
}

// The cluster it prints serves reads and writes, and an interrupt stops
// every member and returns nil.
func TestRunServesAClusterUntilInterrupted(t *testing.T) {
	ports, err := freeport.Pick(6)
	require.NoError(t, err)
	cfg, err := parseFlags([]string{"-members", "3", "-client-ports", portList(ports[:3]), "-peer-ports", portList(ports[3:]), "-log-level", "panic"}, io.Discard)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, pw)
		pw.Close()
	}()

	lines := bufio.NewScanner(pr)
	var endpoints []string
	for lines.Scan() {
		if e, ok := strings.CutPrefix(lines.Text(), "endpoints: "); ok {
			endpoints = strings.Split(e, ",")
			break
		}
	}
	require.Len(t, endpoints, 3)
	go io.Copy(io.Discard, pr) // the rest of the output

	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer cli.Close()
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	_, err = cli.Put(wctx, "/k", "v")
	require.NoError(t, err)
	for _, ep := range endpoints { // every member sees the committed write
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 10 * time.Second})
		require.NoError(t, err)
		resp, err := c.Get(wctx, "/k")
		require.NoError(t, err)
		require.NoError(t, c.Close())
		require.Len(t, resp.Kvs, 1, "member %s", ep)
		require.Equal(t, "v", string(resp.Kvs[0].Value))
	}
	require.NoError(t, cli.Close())

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("run did not return after the interrupt")
	}
	require.Zero(t, etcdtest.WaitPeerHTTPDone(etcdtest.PeerHTTPBound), "etcd's peer connections outlived the cluster")
}

func TestFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []int{12379, 22379, 32379}, cfg.clientPorts, "the README's ports by default")
	require.Equal(t, []int{12380, 22380, 32380}, cfg.peerPorts)

	_, err = parseFlags([]string{"-h"}, io.Discard)
	require.ErrorIs(t, err, flag.ErrHelp, "-h is help (main exits 0), not an error")

	for _, bad := range [][]string{
		{"-members", "0"},
		{"-members", "6"},
		{"-members", "-1"},
		{"-members", "2", "-client-ports", "1"},
		{"-members", "1", "-client-ports", "70000"},
		{"-members", "1", "-client-ports", "x"},
		{"-members", "1", "-client-ports", "5000", "-peer-ports", "5000"},
		{"extra"},
	} {
		_, err := parseFlags(bad, io.Discard)
		require.Error(t, err, "%q", bad)
	}
}
