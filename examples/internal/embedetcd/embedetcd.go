// Package embedetcd starts a one-member etcd inside a test process, on
// loopback ports, for the examples' tests that need a real etcd.
package embedetcd

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/steady-go/steady/internal/freeport"
)

// Start starts a one-member etcd in a temporary directory and returns its
// client address as host:port. configure, when not nil, adjusts the config
// before the start (timing, fsync). The member is closed when the test
// ends; Start fails the test if it cannot start or is not ready in 30s.
func Start(t testing.TB, configure func(*embed.Config)) string {
	t.Helper()
	ports, err := freeport.Pick(2)
	if err != nil {
		t.Fatalf("embedetcd: free ports: %v", err)
	}
	var urls [2]url.URL
	for i, p := range ports {
		urls[i] = url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", p)}
	}
	cfg := embed.NewConfig()
	cfg.Name = "m0"
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "panic" // etcd logs expected shutdown noise at error level
	peer, client := urls[0], urls[1]
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.InitialCluster = "m0=" + peer.String()
	cfg.InitialClusterToken = t.Name()
	if configure != nil {
		configure(cfg)
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("embedetcd: start: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("embedetcd: etcd did not become ready in 30s")
	}
	return client.Host
}
