package oscillation

import (
	"slices"
	"time"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/objpath"
)

// Detector watches the writes to one object and reports oscillation.
//
// Fight: self re-sets a path that another manager changed since self last
// wrote it; FightWrites such re-sets of one path within Window are reported.
// NoProgress: NoProgressWrites writes by self within Window, with no change
// to any path self does not own in between (by anyone), are reported.
// TooManyWrites: a write by self beyond MaxWrites within Window (the
// budget), with no change to the spec in between, is reported, and so is
// every further one while the budget stays spent. Throttled: the same for
// status-only writes by self (.status…, .conditions[…], no foreign path),
// against MaxStatusWrites (the status budget). A write by self that changes
// only status-side paths and no foreign path does not count toward
// NoProgress: see "Status-only writes" in the reconcile package
// documentation.
//
// After a report the counts behind it start again, so a persisting
// oscillation is reported once per threshold, not on every write. The zero
// Detector uses the default Config; a Detector is not safe for concurrent
// use.
type Detector struct {
	cfg Config
	// changedByOther: paths another manager changed since self last wrote
	// them, sorted by diff.Path.Compare.
	changedByOther []diff.Path
	// resets: times self re-set a path after another manager changed it,
	// sorted by path.
	resets []pathTimes
	// selfWrites: self's writes since the last change to a foreign path.
	selfWrites []selfWrite
	// budget: self's writes within Window since the last change to the
	// spec that change more than the status side; statusBudget: those
	// that change only it.
	budget, statusBudget []selfWrite
}

type pathTimes struct {
	path  diff.Path
	times []time.Time
}

type selfWrite struct {
	at    time.Time
	paths []diff.Path
}

// New returns a Detector with cfg (zero fields take the defaults).
func New(cfg Config) *Detector { return &Detector{cfg: cfg.WithDefaults()} }

// Observe records w and reports the oscillations it completes (at most one
// of each kind, Fight first). It keeps w's path slices: the caller must not
// modify them afterwards.
func (d *Detector) Observe(w Write) []Report {
	d.cfg = d.cfg.WithDefaults()
	if len(w.Foreign) > 0 {
		d.selfWrites = d.selfWrites[:0]
	}
	if specChanged(w.Owned) || specChanged(w.Foreign) {
		d.budget, d.statusBudget = d.budget[:0], d.statusBudget[:0]
	}
	if !w.Self {
		d.changedByOthers(w.Owned)
		d.changedByOthers(w.Foreign)
		return nil
	}
	cutoff := w.Time.Add(-d.cfg.Window)
	var out []Report
	if r, ok := d.fight(w, cutoff); ok {
		out = append(out, r)
	}
	if r, ok := d.noProgress(w, cutoff); ok {
		out = append(out, r)
	}
	if r, ok := d.tooManyWrites(w, cutoff); ok {
		out = append(out, r)
	}
	return out
}

// changedByOthers notes paths another manager changed.
func (d *Detector) changedByOthers(paths []diff.Path) {
	for _, p := range paths {
		if i, found := slices.BinarySearchFunc(d.changedByOther, p, diff.Path.Compare); !found {
			d.changedByOther = slices.Insert(d.changedByOther, i, p)
		}
	}
}

// fight counts self's write w as a re-set of every path in it that another
// manager changed since, and reports a Fight over the paths re-set
// FightWrites times within the window.
func (d *Detector) fight(w Write, cutoff time.Time) (Report, bool) {
	var fought []diff.Path
	writes := 0
	for _, ps := range [2][]diff.Path{w.Owned, w.Foreign} {
		for _, p := range ps {
			if n := d.reset(p, w.Time, cutoff); n >= d.cfg.FightWrites {
				fought = append(fought, p)
				writes = max(writes, n)
			}
		}
	}
	if len(fought) == 0 {
		return Report{}, false
	}
	d.resets = slices.DeleteFunc(d.resets, func(r pathTimes) bool {
		return slices.ContainsFunc(fought, r.path.Equal)
	})
	slices.SortFunc(fought, diff.Path.Compare)
	return Report{Kind: Fight, Paths: slices.CompactFunc(fought, diff.Path.Equal), Writes: writes, Window: d.cfg.Window}, true
}

// reset counts self's write of p at time at as a re-set if another manager
// changed p since self last wrote it, and returns p's re-sets within the
// window (0 when this write was none).
func (d *Detector) reset(p diff.Path, at, cutoff time.Time) int {
	i, found := slices.BinarySearchFunc(d.changedByOther, p, diff.Path.Compare)
	if !found {
		return 0
	}
	d.changedByOther = slices.Delete(d.changedByOther, i, i+1)
	j, found := slices.BinarySearchFunc(d.resets, p, comparePathTimes)
	if !found {
		d.resets = slices.Insert(d.resets, j, pathTimes{path: p})
	}
	r := &d.resets[j]
	r.times = append(pruneTimes(r.times, cutoff), at)
	return len(r.times)
}

// noProgress counts self's write w, unless it changes a foreign path or
// only status-side ones, and reports NoProgress at NoProgressWrites such
// writes within the window.
func (d *Detector) noProgress(w Write, cutoff time.Time) (Report, bool) {
	if len(w.Foreign) > 0 || statusOnly(w.Owned) {
		return Report{}, false
	}
	i := 0
	for i < len(d.selfWrites) && d.selfWrites[i].at.Before(cutoff) {
		i++
	}
	d.selfWrites = append(d.selfWrites[i:], selfWrite{at: w.Time, paths: w.Owned})
	n := len(d.selfWrites)
	if n < d.cfg.NoProgressWrites {
		return Report{}, false
	}
	r := Report{Kind: NoProgress, Paths: writtenPaths(d.selfWrites), Writes: n, Window: d.cfg.Window}
	d.selfWrites = nil
	return r, true
}

// tooManyWrites spends one of a budget on self's write w and reports while
// that budget is spent: the status budget (Throttled) for a write of the
// status side alone, the write budget (TooManyWrites) for any other.
func (d *Detector) tooManyWrites(w Write, cutoff time.Time) (Report, bool) {
	if len(w.Foreign) == 0 && !w.Report && statusOnly(w.Owned) {
		d.statusBudget = spend(d.statusBudget, w.Time, w.Owned, cutoff)
		if n := len(d.statusBudget); n > d.cfg.MaxStatusWrites {
			return Report{Kind: Throttled, Paths: writtenPaths(d.statusBudget), Writes: n, Window: d.cfg.Window}, true
		}
		return Report{}, false
	}
	d.budget = spend(d.budget, w.Time, slices.Concat(w.Owned, w.Foreign), cutoff)
	n := len(d.budget)
	if n <= d.cfg.MaxWrites {
		return Report{}, false
	}
	return Report{Kind: TooManyWrites, Paths: writtenPaths(d.budget), Writes: n, Window: d.cfg.Window}, true
}

// spend adds a write at `at` of paths to budget, dropping those out of the
// window.
func spend(budget []selfWrite, at time.Time, paths []diff.Path, cutoff time.Time) []selfWrite {
	return append(budget[pruneWrites(budget, cutoff):], selfWrite{at: at, paths: paths})
}

// writtenPaths returns the paths of ws, sorted, each once.
func writtenPaths(ws []selfWrite) []diff.Path {
	var paths []diff.Path
	for _, sw := range ws {
		paths = append(paths, sw.paths...)
	}
	slices.SortFunc(paths, diff.Path.Compare)
	return slices.CompactFunc(paths, diff.Path.Equal)
}

// pruneWrites returns the index of the first write after cutoff: the
// budget's window is (now−Window, now].
func pruneWrites(ws []selfWrite, cutoff time.Time) int {
	i := 0
	for i < len(ws) && !ws[i].at.After(cutoff) {
		i++
	}
	return i
}

// specChanged reports whether a path is in the spec: the write changed the
// generation.
func specChanged(paths []diff.Path) bool {
	return slices.ContainsFunc(paths, func(p diff.Path) bool { return p.HasPrefix(objpath.Spec) })
}

func comparePathTimes(r pathTimes, p diff.Path) int { return r.path.Compare(p) }

// statusOnly reports whether every path is on the status side of an object
// (.status, .status.x, .conditions[...]), the part of it a status write
// touches.
func statusOnly(paths []diff.Path) bool {
	for _, p := range paths {
		if !objpath.StatusSide(p) {
			return false
		}
	}
	return true
}

// Idle reports whether d holds nothing that could still count at time now,
// so a caller keeping one Detector per object may drop it.
func (d *Detector) Idle(now time.Time) bool {
	cutoff := now.Add(-d.cfg.WithDefaults().Window)
	if len(d.changedByOther) > 0 {
		return false
	}
	for _, r := range d.resets {
		if len(r.times) > 0 && !r.times[len(r.times)-1].Before(cutoff) {
			return false
		}
	}
	for _, b := range [2][]selfWrite{d.budget, d.statusBudget} {
		if len(b) > 0 && !b[len(b)-1].at.Before(cutoff) {
			return false
		}
	}
	return len(d.selfWrites) == 0 || d.selfWrites[len(d.selfWrites)-1].at.Before(cutoff)
}

func pruneTimes(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && ts[i].Before(cutoff) {
		i++
	}
	return ts[i:]
}
