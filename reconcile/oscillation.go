package reconcile

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// OscillationKind names the two ways a manager can write without converging.
type OscillationKind uint8

const (
	// Fight: the manager keeps re-setting a path that another manager changed.
	Fight OscillationKind = iota + 1
	// NoProgress: the manager keeps writing while nothing it does not own
	// changes (for example a label holding a hash of the object itself).
	NoProgress
)

// String returns "Fight", "NoProgress" or "Unknown".
func (k OscillationKind) String() string {
	switch k {
	case Fight:
		return "Fight"
	case NoProgress:
		return "NoProgress"
	}
	return "Unknown"
}

// Default oscillation thresholds (see OscillationConfig).
const (
	DefaultOscillationWindow = time.Minute
	DefaultFightWrites       = 3
	DefaultNoProgressWrites  = 10
)

// OscillationConfig sets the detector's thresholds. Zero fields take the
// defaults: a 1m window, 3 re-sets for a Fight, 10 writes for NoProgress.
type OscillationConfig struct {
	Window           time.Duration
	FightWrites      int
	NoProgressWrites int
}

func (c OscillationConfig) withDefaults() OscillationConfig {
	if c.Window <= 0 {
		c.Window = DefaultOscillationWindow
	}
	if c.FightWrites <= 0 {
		c.FightWrites = DefaultFightWrites
	}
	if c.NoProgressWrites <= 0 {
		c.NoProgressWrites = DefaultNoProgressWrites
	}
	return c
}

// ObservedWrite is one write to an object, as seen in the cache, judged from
// the point of view of one manager ("self"): the manager the Loop's reconciler
// writes as. Paths are diff.Path strings.
//
// The Loop leaves out its own Stalled condition writes, and requeues are not
// writes, so neither counts.
type ObservedWrite struct {
	Time time.Time
	// Self reports that self made the write (LastWrite.Manager).
	Self bool
	// Owned are the changed paths that self owns after the write.
	Owned []string
	// Foreign are the changed paths that self does not own after the write.
	Foreign []string
}

// Oscillation is a detected oscillation.
type Oscillation struct {
	Kind OscillationKind
	// Paths are the flipping paths, sorted: for a Fight the paths re-set
	// after another manager changed them, for NoProgress the paths self kept
	// writing.
	Paths []string
	// Writes is the number of writes (re-sets for a Fight) in the window.
	Writes int
	// Window is the detector's window.
	Window time.Duration
}

// Message describes o for a Stalled condition or a log line.
func (o Oscillation) Message() string {
	switch o.Kind {
	case Fight:
		return fmt.Sprintf("fight: re-set %s %d times within %v after another manager changed it",
			strings.Join(o.Paths, ", "), o.Writes, o.Window)
	default:
		return fmt.Sprintf("no progress: %d writes within %v to %s with no change to any field this manager does not own",
			o.Writes, o.Window, strings.Join(o.Paths, ", "))
	}
}

// Detector watches the writes to one object and reports oscillation. It is a
// pure state machine: it reads no clock (time comes in each ObservedWrite)
// and does no I/O, so any sequence of writes is a plain test input.
//
// Fight: self re-sets a path that another manager changed since self last
// wrote it; FightWrites such re-sets of one path within Window are reported.
// NoProgress: NoProgressWrites writes by self within Window, with no change
// to any path self does not own in between (by anyone), are reported. A write
// by self that changes only status-side paths (.status…, .conditions[…]) and
// no foreign path does not count: see "Status-only writes" in the package
// documentation.
//
// After a report the counts behind it start again, so a persisting
// oscillation is reported once per threshold, not on every write. The zero
// Detector uses the defaults; a Detector is not safe for concurrent use.
type Detector struct {
	cfg OscillationConfig
	// changedByOther: paths another manager changed since self last wrote them.
	changedByOther map[string]struct{}
	// resets: times self re-set a path after another manager changed it.
	resets map[string][]time.Time
	// selfWrites: self's writes since the last change to a foreign path.
	selfWrites []selfWrite
}

type selfWrite struct {
	at    time.Time
	paths []string
}

// NewDetector returns a Detector with cfg (zero fields take the defaults).
func NewDetector(cfg OscillationConfig) *Detector { return &Detector{cfg: cfg.withDefaults()} }

// Observe records w and reports the oscillations it completes (at most one
// of each kind, Fight first).
func (d *Detector) Observe(w ObservedWrite) []Oscillation {
	d.cfg = d.cfg.withDefaults()
	var out []Oscillation
	if len(w.Foreign) > 0 {
		d.selfWrites = d.selfWrites[:0]
	}
	if !w.Self {
		if d.changedByOther == nil {
			d.changedByOther = make(map[string]struct{})
		}
		for _, p := range w.Owned {
			d.changedByOther[p] = struct{}{}
		}
		for _, p := range w.Foreign {
			d.changedByOther[p] = struct{}{}
		}
		return nil
	}
	cutoff := w.Time.Add(-d.cfg.Window)
	var fought []string
	writes := 0
	for _, ps := range [2][]string{w.Owned, w.Foreign} {
		for _, p := range ps {
			if _, ok := d.changedByOther[p]; !ok {
				continue
			}
			delete(d.changedByOther, p)
			if d.resets == nil {
				d.resets = make(map[string][]time.Time)
			}
			ts := append(pruneTimes(d.resets[p], cutoff), w.Time)
			d.resets[p] = ts
			if len(ts) >= d.cfg.FightWrites {
				fought = append(fought, p)
				writes = max(writes, len(ts))
			}
		}
	}
	if len(fought) > 0 {
		for _, p := range fought {
			delete(d.resets, p)
		}
		slices.Sort(fought)
		out = append(out, Oscillation{Kind: Fight, Paths: slices.Compact(fought), Writes: writes, Window: d.cfg.Window})
	}
	if len(w.Foreign) == 0 && !statusOnly(w.Owned) {
		i := 0
		for i < len(d.selfWrites) && d.selfWrites[i].at.Before(cutoff) {
			i++
		}
		d.selfWrites = append(d.selfWrites[i:], selfWrite{at: w.Time, paths: w.Owned})
		if n := len(d.selfWrites); n >= d.cfg.NoProgressWrites {
			var paths []string
			for _, sw := range d.selfWrites {
				paths = append(paths, sw.paths...)
			}
			slices.Sort(paths)
			out = append(out, Oscillation{Kind: NoProgress, Paths: slices.Compact(paths), Writes: n, Window: d.cfg.Window})
			d.selfWrites = nil
		}
	}
	return out
}

// statusOnly reports whether every path is on the status side of an object
// (.status, .status.x, .conditions[...]), the part of it a status write
// touches.
func statusOnly(paths []string) bool {
	for _, p := range paths {
		if !underPath(p, ".status") && !underPath(p, ".conditions") {
			return false
		}
	}
	return true
}

// underPath reports whether p is root or a path below it.
func underPath(p, root string) bool {
	return strings.HasPrefix(p, root) && (len(p) == len(root) || p[len(root)] == '.' || p[len(root)] == '[')
}

// Idle reports whether d holds nothing that could still count at time now,
// so a caller keeping one Detector per object may drop it.
func (d *Detector) Idle(now time.Time) bool {
	cutoff := now.Add(-d.cfg.withDefaults().Window)
	if len(d.changedByOther) > 0 {
		return false
	}
	for _, ts := range d.resets {
		if len(ts) > 0 && !ts[len(ts)-1].Before(cutoff) {
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
