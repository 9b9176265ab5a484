package etcdstore_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/steady-go/steady/internal/freeport"
	"github.com/steady-go/steady/store/etcdstore/internal/etcdtest"
)

// cluster is a real etcd cluster of n members, each an embed.Etcd started in
// this process on loopback ports, with its data in a temporary directory.
type cluster struct {
	t       testing.TB
	members []*embed.Etcd
	cfgs    []*embed.Config
	clients []string // client URL of each member
}

func mustURL(t testing.TB, s string) url.URL {
	u, err := url.Parse(s)
	require.NoError(t, err)
	return *u
}

// startCluster starts n members and waits until they serve. Everything is
// stopped and removed when the test ends.
func startCluster(t testing.TB, n int) *cluster {
	t.Helper()
	c := &cluster{t: t}
	peers := make([]string, n)
	initial := make([]string, n)
	ports, err := freeport.Pick(2 * n)
	require.NoError(t, err)
	for i := range n {
		peers[i] = fmt.Sprintf("http://127.0.0.1:%d", ports[2*i])
		c.clients = append(c.clients, fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]))
		initial[i] = fmt.Sprintf("m%d=%s", i, peers[i])
	}
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = t.TempDir()
		cfg.LogLevel = "panic" // etcd logs expected shutdown noise at error level
		cfg.ListenPeerUrls = []url.URL{mustURL(t, peers[i])}
		cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
		cfg.ListenClientUrls = []url.URL{mustURL(t, c.clients[i])}
		cfg.AdvertiseClientUrls = cfg.ListenClientUrls
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = t.Name()
		cfg.TickMs = 10
		cfg.ElectionMs = 100
		c.cfgs = append(c.cfgs, cfg)
	}
	c.members = make([]*embed.Etcd, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			e, err := embed.StartEtcd(c.cfgs[i])
			if err == nil {
				c.members[i] = e
			}
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	t.Cleanup(c.stop)
	for _, m := range c.members {
		select {
		case <-m.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatal("etcd member did not become ready")
		}
	}
	return c
}

// startMember starts one member from cfg (for a restart) and waits until it
// has joined its cluster again.
func startMember(cfg *embed.Config) (*embed.Etcd, error) {
	cfg.ClusterState = embed.ClusterStateFlagExisting
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("restarted member %s did not become ready", cfg.Name)
	}
}

func (c *cluster) stop() {
	for i, m := range c.members {
		if m != nil {
			m.Close()
			c.members[i] = nil
		}
	}
	if n := etcdtest.WaitPeerHTTPDone(etcdtest.PeerHTTPBound); n > 0 {
		c.t.Errorf("%d goroutines of etcd's peer HTTP connections still running %v after the cluster stopped", n, etcdtest.PeerHTTPBound)
	}
}

// kill stops member i abruptly (its data stays; it does not rejoin).
func (c *cluster) kill(i int) {
	if m := c.members[i]; m != nil {
		m.Close()
		c.members[i] = nil
	}
}

// leader returns the index of the member that is etcd's raft leader.
func (c *cluster) leader() int {
	for i, m := range c.members {
		if m != nil && m.Server.Leader() == m.Server.MemberID() {
			return i
		}
	}
	return -1
}

// client returns an etcd client to every live member, closed at test end.
func (c *cluster) client() *clientv3.Client {
	c.t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.clients, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(c.t, err)
	c.t.Cleanup(func() { cli.Close() })
	return cli
}
