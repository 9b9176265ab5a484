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
// oscillation is reported once per threshold, not on every write.
//
// A write counts at the time it was observed (Write.Time), and only for a
// later write at or after that time: when the clock is set back (a wall
// clock stepped backwards, an injected clock moved back), the writes kept
// from after the new time are dropped at the next write by self, so they
// neither count as within the window for ever nor make a report; the
// records stay in time order. The zero
// Detector uses the default Config; a Detector is not safe for concurrent
// use.
type Detector struct {
	// cfg is shared by the Detectors made with the defaults, and by those
	// NewShared made with one Config: a Loop keeps one Detector per
	// object it writes.
	cfg *Config
	// base is the time the writes kept count from: a write keeps its time
	// as an offset from base, 8 bytes instead of a time.Time's 24. It is
	// the time of a write kept when none was (see offset).
	base time.Time
	// changedByOther: paths another manager changed since self last wrote
	// them, sorted by diff.Path.Compare. While borrowed, it is the list
	// of a Write the Detector was given, which it keeps as it keeps a
	// write's paths (see changedByOthers), and never modifies.
	changedByOther []diff.Path
	// statusBudget: self's writes within Window since the last change to
	// the spec that change only the status side.
	statusBudget []selfWrite
	// more is the state of writes that change more than the status side,
	// nil until the first: a controller that writes only status, the
	// usual one, keeps none (72 bytes a Detector, and its lists).
	more *moreState
	// firstWrite is the array statusBudget starts in (see firstOf): a
	// controller that writes only status, while another writer changes
	// the spec, holds one status write at a time (each spec change
	// empties the budget), and borrows the list of the spec paths the
	// other changed, which it never re-sets, so that its Detector is one
	// allocation of 128 bytes, where it was three of 152.
	firstWrite [1]selfWrite
	borrowed   bool // changedByOther is a Write's list
}

// moreState is the part of a Detector's state that only writes beyond
// the status side use.
type moreState struct {
	// resets: times self re-set a path after another manager changed it,
	// sorted by path.
	resets []pathTimes
	// selfWrites: self's writes since the last change to a foreign path.
	selfWrites []selfWrite
	// budget: self's writes within Window since the last change to the
	// spec that change more than the status side.
	budget []selfWrite
}

type pathTimes struct {
	path  diff.Path
	times []time.Time
}

// selfWrite is one write by self, at base+at.
type selfWrite struct {
	at    time.Duration
	paths []diff.Path
}

// New returns a Detector with cfg (zero fields take the defaults). A
// caller that makes a Detector per object shares one Config among them
// with NewShared.
func New(cfg Config) *Detector {
	c := cfg.WithDefaults()
	if c == defaults {
		return &Detector{cfg: &defaults}
	}
	p := new(Config) // not &c, which would move every call's c to the heap
	*p = c
	return &Detector{cfg: p}
}

// NewShared returns a Detector like New(*cfg) that reads its thresholds
// from cfg itself, not from a copy: the Detectors a caller makes for
// each of its objects (the reconcile Loop's) share one Config, and each
// is one allocation. The caller must not modify *cfg while they are in
// use. A cfg with fields left for the defaults (not cfg.WithDefaults()'s)
// or nil gets a copy with them, as New makes.
func NewShared(cfg *Config) *Detector {
	if cfg == nil {
		return New(Config{})
	}
	if *cfg != cfg.WithDefaults() {
		return New(*cfg)
	}
	return &Detector{cfg: cfg}
}

// defaults is the Config with every default: the Config of the zero
// Detector and of those New makes with it. Nothing modifies it.
var defaults = Config{}.WithDefaults()

// config returns d's Config: the defaults for the zero Detector.
func (d *Detector) config() *Config {
	if d.cfg == nil {
		d.cfg = &defaults
	}
	return d.cfg
}

// more returns d's state of writes beyond the status side, made on first
// use.
func (d *Detector) moreState() *moreState {
	if d.more == nil {
		d.more = &moreState{}
	}
	return d.more
}

// offset returns t as the offset from d's base that d keeps, setting the
// base to t while d keeps no offset (none to compare with one from another
// base). Offsets compare as their times do (Sub uses the monotonic clock
// readings where both times have one, as Before does).
func (d *Detector) offset(t time.Time) time.Duration {
	if len(d.statusBudget) == 0 && (d.more == nil || len(d.more.selfWrites) == 0 && len(d.more.budget) == 0) {
		d.base = t
	}
	return t.Sub(d.base)
}

// Observe records w and reports the oscillations it completes (at most one
// of each kind, Fight first). It keeps w's path slices: the caller must not
// modify them afterwards.
func (d *Detector) Observe(w Write) []Report { return d.observe(&w) }

// observe is Observe of *w, which it reads in place: a Write is 11 words,
// copied on the stack into each step that took it by value. It reads
// each path's side once (sidesOf) for what the steps ask of them.
func (d *Detector) observe(w *Write) []Report {
	cfg := d.config()
	if len(w.Foreign) > 0 && d.more != nil {
		d.more.selfWrites = d.more.selfWrites[:0]
	}
	ownedSpec, ownedStatus := sidesOf(w.Owned)
	foreignSpec, _ := sidesOf(w.Foreign)
	if ownedSpec || foreignSpec {
		d.statusBudget = d.statusBudget[:0]
		if d.more != nil {
			d.more.budget = d.more.budget[:0]
		}
	}
	if !w.Self {
		d.changedByOthers(w.Owned)
		d.changedByOthers(w.Foreign)
		return nil
	}
	var out []Report
	if len(d.changedByOther) > 0 { // else nothing to re-set
		if r, ok := d.fight(w); ok {
			out = append(out, r)
		}
	}
	now := d.offset(w.Time)
	// onlyStatus: the write changes the status side alone, and no
	// foreign path (noProgress and tooManyWrites ask).
	onlyStatus := len(w.Foreign) == 0 && ownedStatus
	if r, ok := d.noProgress(w, onlyStatus, now, now-cfg.Window); ok {
		out = append(out, r)
	}
	if r, ok := d.tooManyWrites(w, onlyStatus, now, now-cfg.Window); ok {
		out = append(out, r)
	}
	return out
}

// sidesOf reports whether one of paths is in the spec (specChanged) and
// whether all are on the status side (statusOnly), reading each path's
// first element alone, in one pass: the paths objpath.Spec, Status and
// Conditions prefix are those whose first element is that path's one
// field (TestSidesOfIsSpecChangedAndStatusOnly holds it to the two).
func sidesOf(paths []diff.Path) (spec, onlyStatus bool) {
	onlyStatus = true
	for _, p := range paths {
		if len(p) == 0 || p[0].Kind != diff.FieldElem {
			onlyStatus = false
			continue
		}
		switch p[0].Name {
		case objpath.Status[0].Name, objpath.Conditions[0].Name:
		case objpath.Spec[0].Name:
			spec, onlyStatus = true, false
		default:
			onlyStatus = false
		}
	}
	return spec, onlyStatus
}

// changedByOthers notes paths another manager changed. Into an empty
// changedByOther it takes paths itself, when sorted and each once (one
// path, usually), and copies it only to change it (ownChanged): a Loop
// gives every key's Detector the same list, from its table.
func (d *Detector) changedByOthers(paths []diff.Path) {
	if len(d.changedByOther) == 0 && len(paths) > 0 && sortedOnce(paths) {
		d.changedByOther, d.borrowed = paths, true
		return
	}
	for _, p := range paths {
		if i, found := d.findChanged(p); !found {
			d.ownChanged()
			d.changedByOther = slices.Insert(d.changedByOther, i, p)
		}
	}
}

// sortedOnce reports whether paths are in diff.Path.Compare's order, each
// once, as changedByOther's are.
func sortedOnce(paths []diff.Path) bool {
	for i := 1; i < len(paths); i++ {
		if paths[i-1].Compare(paths[i]) >= 0 {
			return false
		}
	}
	return true
}

// ownChanged makes changedByOther a copy of its own, if borrowed, before
// it is changed in place (with room for the path an insert adds).
func (d *Detector) ownChanged() {
	if d.borrowed {
		d.changedByOther = append(make([]diff.Path, 0, len(d.changedByOther)+1), d.changedByOther...)
		d.borrowed = false
	}
}

// firstOf returns s, or first's array, empty, for a nil s: a Detector's
// budget starts in its own memory (Detector.firstWrite), and moves to an
// allocation of its own only past one element.
func firstOf[E any](s []E, first *[1]E) []E {
	if s == nil {
		return first[:0]
	}
	return s
}

// sameScan is how many of changedByOther's paths findChanged compares by
// address before it searches: a detector holds few (those other managers
// changed since self last wrote them).
const sameScan = 8

// findChanged returns the position of p in changedByOther and whether it
// is there, as slices.BinarySearchFunc with diff.Path.Compare does. A path
// is the same copy as the one held more often than not (a Loop hands its
// detectors one copy of each path, from a table), so it is first looked
// for by address, which compares no element; the search then calls
// Compare directly, not through a func value, and once per step.
func (d *Detector) findChanged(p diff.Path) (int, bool) {
	ps := d.changedByOther
	if len(p) > 0 {
		for i, q := range ps[:min(len(ps), sameScan)] {
			if len(q) == len(p) && &q[0] == &p[0] {
				return i, true
			}
		}
	}
	lo, hi := 0, len(ps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := ps[m].Compare(p); {
		case c < 0:
			lo = m + 1
		case c > 0:
			hi = m
		default: // the paths held are unique: p's place is m
			return m, true
		}
	}
	return lo, false
}

// heldChanged returns the position of p in changedByOther and whether it
// is there, as findChanged does when it is (the paths held are unique);
// its position is not needed when it is not, and is then -1. A detector
// holds few (up to sameScan), which it compares one by one, each
// inline unless its length is p's; a self write's paths are usually none
// of them (the status fields it writes, where another manager changed
// the spec).
func (d *Detector) heldChanged(p diff.Path) (int, bool) {
	ps := d.changedByOther
	if len(ps) > sameScan {
		return d.findChanged(p)
	}
	for i, q := range ps {
		if len(q) == len(p) && (len(p) == 0 || &q[0] == &p[0] || q.Equal(p)) {
			return i, true
		}
	}
	return -1, false
}

// fight counts self's write w as a re-set of every path in it that another
// manager changed since, and reports a Fight over the paths re-set
// FightWrites times within the window. Callers call it only while
// changedByOther holds a path.
func (d *Detector) fight(w *Write) (Report, bool) {
	var fought []diff.Path
	writes := 0
	for _, p := range w.Owned {
		if n := d.reset(p, w.Time); n >= d.cfg.FightWrites {
			fought = append(fought, p)
			writes = max(writes, n)
		}
	}
	for _, p := range w.Foreign {
		if n := d.reset(p, w.Time); n >= d.cfg.FightWrites {
			fought = append(fought, p)
			writes = max(writes, n)
		}
	}
	if len(fought) == 0 {
		return Report{}, false
	}
	d.more.resets = slices.DeleteFunc(d.more.resets, func(r pathTimes) bool {
		return slices.ContainsFunc(fought, r.path.Equal)
	})
	slices.SortFunc(fought, diff.Path.Compare)
	return Report{Kind: Fight, Paths: slices.CompactFunc(fought, diff.Path.Equal), Writes: writes, Window: d.cfg.Window}, true
}

// reset counts self's write of p at time at as a re-set if another manager
// changed p since self last wrote it, and returns p's re-sets within the
// window (0 when this write was none).
func (d *Detector) reset(p diff.Path, at time.Time) int {
	i, found := d.heldChanged(p)
	if !found {
		return 0
	}
	cutoff := at.Add(-d.cfg.Window)
	d.ownChanged()
	d.changedByOther = slices.Delete(d.changedByOther, i, i+1)
	m := d.moreState()
	j, found := slices.BinarySearchFunc(m.resets, p, comparePathTimes)
	if !found {
		m.resets = slices.Insert(m.resets, j, pathTimes{path: p})
	}
	r := &m.resets[j]
	r.times = append(timesUpTo(pruneTimes(r.times, cutoff), at), at)
	return len(r.times)
}

// noProgress counts self's write w, at offset now, unless it changes a
// foreign path or only status-side ones (onlyStatus), and reports
// NoProgress at NoProgressWrites such writes within the window (after
// cutoff).
func (d *Detector) noProgress(w *Write, onlyStatus bool, now, cutoff time.Duration) (Report, bool) {
	if len(w.Foreign) > 0 || onlyStatus {
		return Report{}, false
	}
	m := d.moreState()
	i := 0
	for i < len(m.selfWrites) && m.selfWrites[i].at < cutoff {
		i++
	}
	m.selfWrites = append(upTo(m.selfWrites[i:], now), selfWrite{at: now, paths: w.Owned})
	n := len(m.selfWrites)
	if n < d.cfg.NoProgressWrites {
		return Report{}, false
	}
	r := Report{Kind: NoProgress, Paths: writtenPaths(m.selfWrites), Writes: n, Window: d.cfg.Window}
	m.selfWrites = nil
	return r, true
}

// tooManyWrites spends one of a budget on self's write w, at offset now,
// and reports while that budget is spent: the status budget (Throttled)
// for a write of the status side alone and no foreign path (onlyStatus),
// the write budget (TooManyWrites) for any other.
func (d *Detector) tooManyWrites(w *Write, onlyStatus bool, now, cutoff time.Duration) (Report, bool) {
	if onlyStatus && !w.Report {
		d.statusBudget = spend(firstOf(d.statusBudget, &d.firstWrite), now, w.Owned, cutoff)
		if n := len(d.statusBudget); n > d.cfg.MaxStatusWrites {
			return Report{Kind: Throttled, Paths: writtenPaths(d.statusBudget), Writes: n, Window: d.cfg.Window}, true
		}
		return Report{}, false
	}
	m := d.moreState()
	m.budget = spend(m.budget, now, slices.Concat(w.Owned, w.Foreign), cutoff)
	n := len(m.budget)
	if n <= d.cfg.MaxWrites {
		return Report{}, false
	}
	return Report{Kind: TooManyWrites, Paths: writtenPaths(m.budget), Writes: n, Window: d.cfg.Window}, true
}

// spend adds a write at offset at of paths to budget, dropping those out
// of the window (at or before cutoff). A budget left with none starts
// again at the start of its array, which it would otherwise leave behind
// (a Detector's own, firstWrite, among them).
func spend(budget []selfWrite, at time.Duration, paths []diff.Path, cutoff time.Duration) []selfWrite {
	ws := upTo(budget[pruneWrites(budget, cutoff):], at)
	if len(ws) == 0 {
		ws = budget[:0]
	}
	return append(ws, selfWrite{at: at, paths: paths})
}

// upTo returns ws without its writes after now, which only a clock set
// back makes: ws is in time order, and stays so with a write at now
// appended.
func upTo(ws []selfWrite, now time.Duration) []selfWrite {
	n := len(ws)
	for n > 0 && ws[n-1].at > now {
		n--
	}
	return ws[:n]
}

// counts reports whether ws holds a write within the window at now: at
// or after cutoff, and not after now (a write after now is one a clock
// set back left, which the next write drops).
func counts(ws []selfWrite, cutoff, now time.Duration) bool {
	n := len(upTo(ws, now))
	return n > 0 && ws[n-1].at >= cutoff
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
func pruneWrites(ws []selfWrite, cutoff time.Duration) int {
	i := 0
	for i < len(ws) && ws[i].at <= cutoff {
		i++
	}
	return i
}

func comparePathTimes(r pathTimes, p diff.Path) int { return r.path.Compare(p) }

// Idle reports whether d holds nothing that could still count at time now,
// so a caller keeping one Detector per object may drop it. A write kept
// from after now (the clock was set back) counts for nothing: the next
// write drops it.
func (d *Detector) Idle(now time.Time) bool {
	window := d.config().Window
	if len(d.changedByOther) > 0 {
		return false
	}
	at := now.Sub(d.base) // writes are kept only once base is set
	cutoff := at - window
	if counts(d.statusBudget, cutoff, at) {
		return false
	}
	m := d.more
	if m == nil {
		return true
	}
	for _, r := range m.resets {
		ts := timesUpTo(r.times, now)
		if len(ts) > 0 && !ts[len(ts)-1].Before(now.Add(-window)) {
			return false
		}
	}
	return !counts(m.budget, cutoff, at) && !counts(m.selfWrites, cutoff, at)
}

// timesUpTo is upTo for a path's re-set times.
func timesUpTo(ts []time.Time, now time.Time) []time.Time {
	n := len(ts)
	for n > 0 && ts[n-1].After(now) {
		n--
	}
	return ts[:n]
}

func pruneTimes(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && ts[i].Before(cutoff) {
		i++
	}
	return ts[i:]
}
