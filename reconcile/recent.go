package reconcile

import (
	"fmt"
	"sync"
	"time"
)

// recentFailures is how many failures LoopStatus.RecentFailures keeps.
const recentFailures = 20

// RecentFailure is one failed reconcile, as LoopStatus.RecentFailures
// keeps it.
type RecentFailure struct {
	// Key is the key, formatted with fmt.Sprint; Time when the reconcile
	// failed; Error its error's text; ReconcileID the reconcile's ID, as
	// in the log.
	Key         string    `json:"key"`
	Time        time.Time `json:"time"`
	Error       string    `json:"error"`
	ReconcileID string    `json:"reconcileID"`
}

// failureRing keeps the last recentFailures failures of a Loop, so that
// a page shows them after their keys went idle (failures that back off in
// milliseconds vanish from the key list between two refreshes).
type failureRing struct {
	mu   sync.Mutex
	buf  [recentFailures]RecentFailure
	next int
	n    int
}

func (r *failureRing) add(f RecentFailure) {
	r.mu.Lock()
	r.buf[r.next] = f
	r.next = (r.next + 1) % len(r.buf)
	r.n = min(r.n+1, len(r.buf))
	r.mu.Unlock()
}

// list returns the failures, newest first.
func (r *failureRing) list() []RecentFailure {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]RecentFailure, 0, r.n)
	for i := range r.n {
		out = append(out, r.buf[(r.next-1-i+2*len(r.buf))%len(r.buf)])
	}
	return out
}

// noteFailure keeps a failed reconcile of key for the page: in the ring,
// and as the key's last failure time.
func (l *Loop[K]) noteFailure(rec *recorder, key K, err error) {
	now := l.clk.Now()
	l.recent.add(RecentFailure{Key: fmt.Sprint(key), Time: now, Error: errString(err), ReconcileID: rec.reconcileID()})
	l.mu.Lock()
	if s := l.keys[key]; s != nil {
		s.lastFailed = now
	}
	l.mu.Unlock()
}
