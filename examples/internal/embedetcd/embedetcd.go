// Package embedetcd starts a one-member etcd inside a test process, on
// loopback ports, for the examples' tests that need a real etcd.
package embedetcd

import (
	"net"
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Start starts a one-member etcd in a temporary directory and returns its
// client address as host:port. configure, when not nil, adjusts the config
// before the start (timing, fsync). The member is closed when the test
// ends; Start fails the test if it cannot start or is not ready in 30s.
func Start(t testing.TB, configure func(*embed.Config)) string {
	t.Helper()
	// Both listeners stay open until both ports are chosen: a port closed
	// first can be handed out again, and etcd does not start on one port
	// given twice.
	var urls [2]url.URL
	var held []net.Listener
	for i := range urls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			for _, l := range held {
				l.Close()
			}
			t.Fatalf("embedetcd: a free port: %v", err)
		}
		held = append(held, l)
		urls[i] = url.URL{Scheme: "http", Host: l.Addr().String()}
	}
	for _, l := range held {
		l.Close()
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
