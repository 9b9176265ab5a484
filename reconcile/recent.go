package reconcile

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// recentFailures is how many keys LoopInfo.RecentFailures keeps.
const recentFailures = 20

// RecentFailure is the last failed reconcile of a key, as
// LoopInfo.RecentFailures keeps it.
type RecentFailure struct {
	// Key is the key, formatted with fmt.Sprint; Time when the reconcile
	// failed; Attempt which consecutive failure of the key it was; Error
	// its error's text; ReconcileID the reconcile's ID, as in the log.
	Key         string    `json:"key"`
	Time        time.Time `json:"time"`
	Attempt     int       `json:"attempt"`
	Error       string    `json:"error"`
	ReconcileID string    `json:"reconcileID"`
}

// failureRing keeps the last failure of each of the recentFailures keys
// that failed last, so that a page shows them after their keys went idle
// (failures that back off in milliseconds vanish from the key list between
// two refreshes), and a key that fails every few milliseconds takes one
// place, not all.
type failureRing struct {
	mu  sync.Mutex
	buf []RecentFailure // oldest first
}

func (r *failureRing) add(f RecentFailure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i := slices.IndexFunc(r.buf, func(o RecentFailure) bool { return o.Key == f.Key }); i >= 0 {
		r.buf = slices.Delete(r.buf, i, i+1)
	} else if len(r.buf) == recentFailures {
		r.buf = slices.Delete(r.buf, 0, 1)
	}
	r.buf = append(r.buf, f)
}

// list returns the failures, newest first.
func (r *failureRing) list() []RecentFailure {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.buf)
	slices.Reverse(out)
	return out
}

// noteFailure keeps a failed reconcile of key for the page: in the ring,
// and as the key's last failure time.
func (l *Loop[K]) noteFailure(rec *recorder, key K, attempt int, err error) {
	now := l.clk.Now()
	l.recent.add(RecentFailure{Key: fmt.Sprint(key), Time: now, Attempt: attempt, Error: errString(err), ReconcileID: rec.reconcileID()})
	l.mu.Lock()
	if s := l.keys[key]; s != nil {
		s.lastFailed = now
	}
	l.mu.Unlock()
}
