// Package etcdtest holds what the etcdstore module's tests share about
// running embedded etcd members in a test process.
package etcdtest

import (
	"time"

	"github.com/steady-go/steady/internal/goroutines"
)

// PeerHTTPBound is how long etcd's peer HTTP connections may outlive
// (*embed.Etcd).Close: its peer listener's read timeout (rafthttp's
// ConnReadTimeout, 5s) plus a margin for a loaded machine.
const PeerHTTPBound = 10 * time.Second

// WaitPeerHTTPDone waits up to bound for the net/http goroutines of etcd's
// peer connections to end and returns how many are left.
//
// Members talk HTTP/1 to each other's peer port outside raft (the leader asks
// every member for its version every 4s, through a keep-alive transport that
// etcd never closes). Close shuts the peer http.Server down with a 1s
// context, which leaves a connection whose request has just finished: net/http
// aborts its pending background read by setting a past read deadline, but
// etcd's peer listener (transport.timeoutConn) sets a fresh 5s deadline on
// every Read, so the abort waits for that deadline. Then the server closes
// the connection and the client end, in the other member's transport, sees
// EOF. The last such goroutines end about 4s after the cluster stopped; a
// test that is run alone (or last) would otherwise fail the package's leak
// check on them. Callers must use net/http only through etcd, so that every
// net/http connection goroutine is one of those.
func WaitPeerHTTPDone(bound time.Duration) int {
	deadline := time.Now().Add(bound)
	for {
		n := peerHTTPGoroutines()
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func peerHTTPGoroutines() int {
	return goroutines.Count("net/http.(*conn).serve(", "net/http.(*persistConn).", "net/http.(*connReader).backgroundRead(")
}
