package reconciletest

import (
	"slices"
	"time"
)

// planCrashes draws when each of Faults.Crashes is armed, aimed at
// operations over the whole fault phase: one of the start (the first
// build of every object), a deletion or a recreation by the test, or a
// moment drawn uniformly from the phase, each as likely.
func (w *world) planCrashes() []time.Time {
	ops := []time.Time{w.start}
	for _, d := range w.work.deletions {
		ops = append(ops, d.at)
		if d.recreate > 0 {
			ops = append(ops, d.at.Add(d.recreate))
		}
	}
	var out []time.Time
	for range w.f.Crashes {
		at := w.start.Add(time.Duration(w.rng.Int64N(int64(w.f.Duration))))
		if i := w.rng.IntN(len(ops) + 1); i < len(ops) {
			at = ops[i]
		}
		out = append(out, at)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// armCrash arms the next crash unless one is armed already, and reports
// whether it did. The crash strikes right after the k-th write of a
// reconcile, k drawn from [1, min(CrashAfter, the most writes a reconcile
// has made so far)]: aimed at the writes that reconciles really make, the
// later ones of long operations included.
func (w *world) armCrash() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.armK > 0 {
		return false
	}
	w.armK = 1 + w.rng.IntN(max(1, min(w.f.CrashAfter, w.maxNth)))
	w.armedUntil = time.Now().Add(w.f.MaxDelay)
	w.traceLocked("crash armed: after write %d of a reconcile", w.armK)
	return true
}

// idleCrash strikes an armed crash that found no write to follow within
// MaxDelay: the process dies idle. It reports whether it did.
func (w *world) idleCrash(now time.Time) bool {
	w.mu.Lock()
	if w.armK == 0 || now.Before(w.armedUntil) {
		w.mu.Unlock()
		return false
	}
	w.armK = 0
	w.crashed = true
	p := w.proc
	w.traceLocked("crash strikes an idle process")
	w.mu.Unlock()
	p.kill()
	return true
}

// travelBack returns the revision the next process's primary cache starts
// at, older than seen, the last revision the dead process's cache held; or
// 0 (the current one) without time travel. That is within the backend's
// contract: a listing at an older revision is a consistent snapshot (a
// lagging replica serves one), and the watch from it replays every change
// since. Three in four trips go to a revision worth seeing again: just after
// a deletion by the test (the object is gone there, though it may have been
// recreated since), or just before a competing write.
func (w *world) travelBack(seen int64) int64 {
	if !w.faultsOn || w.f.TimeTravel == 0 || seen < 2 || w.rng.Float64() >= w.f.TimeTravel {
		return 0
	}
	var cands []int64
	for _, r := range w.travelTo {
		if r > 0 && r < seen {
			cands = append(cands, r)
		}
	}
	to := seen - 1 - w.rng.Int64N(min(seen-1, 20))
	if len(cands) > 0 && w.rng.IntN(4) > 0 {
		to = cands[w.rng.IntN(len(cands))]
	}
	w.mu.Lock()
	w.rep.Faults["time-travel"]++
	w.traceLocked("fault time-travel: the next process's %s cache starts at revision %d (the last process saw %d)", w.prefix, to, seen)
	w.mu.Unlock()
	return max(to, 1)
}
