package reconciletest

import (
	"maps"
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
// since. Trips are aimed at views worth seeing again: half go to just after
// a deletion by the test of an object that exists again now (the cache
// says it is gone; its new children say otherwise), a quarter to just
// after any deletion or just before a competing write, the rest up to 20
// revisions back.
func (w *world) travelBack(seen int64) int64 {
	if !w.faultsOn || w.f.TimeTravel == 0 || seen < 2 || w.rng.Float64() >= w.f.TimeTravel {
		return 0
	}
	w.mu.Lock()
	var back, other []int64
	for _, r := range slices.Sorted(maps.Keys(w.deletedAt)) {
		if r >= seen {
			continue
		}
		if w.gone[w.deletedAt[r]] {
			other = append(other, r)
		} else {
			back = append(back, r)
		}
	}
	for _, r := range w.travelTo {
		if r > 0 && r < seen {
			other = append(other, r)
		}
	}
	w.mu.Unlock()
	to := seen - 1 - w.rng.Int64N(min(seen-1, 20))
	switch u := w.rng.IntN(4); {
	case u < 2 && len(back) > 0:
		to = back[w.rng.IntN(len(back))]
	case u < 3 && len(back)+len(other) > 0:
		all := append(back, other...)
		to = all[w.rng.IntN(len(all))]
	}
	to = max(to, 1)
	w.mu.Lock()
	w.rep.Faults["time-travel"]++
	w.traceLocked("fault time-travel: the next process's %s cache starts at revision %d (the last process saw %d)", w.prefix, to, seen)
	w.mu.Unlock()
	return to
}
