package reconcile

import (
	"context"
	"log/slog"
)

// rerunLimit is how many passes of a key in a row may end with a rerun due
// before the Loop paces its reruns. A hint that comes while a key runs is
// one immediate rerun (level-triggered: the pass may have read the world
// before the change). A reconciler that hints its own key during every
// pass, as a port of controller-runtime's Requeue might (l.Add(key) from
// Reconcile, or a source it feeds), would otherwise run it back to back
// forever.
const rerunLimit = 20

// paceReruns runs after each pass of key that ran the reconciler: rerun
// tells whether the key was added again while it ran. From the rerunLimit-th
// such pass in a row, key is held for the backoff policy's delay of the
// passes past the limit, doubling; the first is logged at Warn. A pass that
// ends with no rerun due ends the run of them. The worker calls it only
// when it has something to do: a rerun due, or some key in a run of them.
func (l *Loop[K]) paceReruns(key K, rerun bool) {
	if !rerun {
		if l.rerunning.Load() > 0 {
			l.mu.Lock()
			l.forgetRerunsLocked(key)
			l.mu.Unlock()
		}
		return
	}
	l.mu.Lock()
	n := l.reruns[key] + 1
	l.reruns[key] = n
	if n == 1 {
		l.rerunning.Add(1)
	}
	if n < rerunLimit {
		l.mu.Unlock()
		return
	}
	delay := l.cfg.policy.Delay(n - rerunLimit)
	s := l.keys[key]
	if s == nil {
		s = &keyState{}
		l.setKeyLocked(key, s)
	}
	if s.holdUntil.IsZero() {
		l.held.Add(1)
	}
	if until := l.clk.Now().Add(delay); until.After(s.holdUntil) {
		s.holdUntil = until
	}
	l.mu.Unlock()
	if n == rerunLimit {
		l.log.LogAttrs(context.Background(), slog.LevelWarn,
			"key added again during each of its last passes; its reruns are paced (backoff) until a pass ends with none",
			slog.String("controller", l.name), keyAttr(key), slog.Int("passes", n), slog.Duration("delay", delay))
	}
}

// forgetRerunsLocked drops key's count of passes with a rerun due.
func (l *Loop[K]) forgetRerunsLocked(key K) {
	if _, ok := l.reruns[key]; ok {
		delete(l.reruns, key)
		l.rerunning.Add(-1)
	}
}
