package oscillation

import (
	"fmt"
	"strings"
	"time"

	"github.com/steady-go/steady/diff"
)

// Kind names the two ways a manager can write without converging.
type Kind uint8

const (
	// Fight: the manager keeps re-setting a path that another manager changed.
	Fight Kind = iota + 1
	// NoProgress: the manager keeps writing while nothing it does not own
	// changes (for example a label holding a hash of the object itself).
	NoProgress
	// TooManyWrites: the manager wrote beyond its budget, more than
	// MaxWrites writes within Window that change more than the status
	// side, with no change to the spec (the generation) in between.
	TooManyWrites
	// Throttled: the manager wrote its object's status side (.status,
	// .conditions) more than MaxStatusWrites times within Window with no
	// change to the spec, for example a status that follows a flapping
	// fleet, or one that never settles (a timestamp) written before every
	// Result.RequeueAfterWrite. Status that reports the world is not an oscillation
	// of desired state: the reconcile Loop paces such a key (a hold) and
	// reports it as Throttled, never as Stalled.
	Throttled
)

// String returns "Fight", "NoProgress", "TooManyWrites", "Throttled" or
// "Unknown".
func (k Kind) String() string {
	switch k {
	case Fight:
		return "Fight"
	case NoProgress:
		return "NoProgress"
	case TooManyWrites:
		return "TooManyWrites"
	case Throttled:
		return "Throttled"
	}
	return "Unknown"
}

// Default thresholds (see Config).
const (
	DefaultWindow           = time.Minute
	DefaultFightWrites      = 3
	DefaultNoProgressWrites = 10
	DefaultMaxWrites        = 30
	DefaultMaxStatusWrites  = 120
)

// Config sets a Detector's thresholds. Zero (or negative) fields take the
// defaults: a 1m window, 3 re-sets for a Fight, 10 writes for NoProgress,
// a budget of 30 writes and one of 120 status-only writes.
type Config struct {
	// Window is how far back writes count.
	Window time.Duration
	// FightWrites is how many re-sets of one path within Window make a Fight.
	FightWrites int
	// NoProgressWrites is how many counted writes within Window, with no
	// foreign change in between, make NoProgress.
	NoProgressWrites int
	// MaxWrites is the write budget: a write by self that changes more
	// than the status side and makes more than MaxWrites such writes by
	// self within Window, with no change to the spec by anyone in
	// between, is TooManyWrites; so is every further write while the
	// budget stays spent. The default is 30.
	MaxWrites int
	// MaxStatusWrites is the status budget, the same for writes by self
	// that change only the status side (.status, .conditions) and no
	// foreign path: beyond it they are Throttled. It is separate and
	// higher because a status that reports observed changes in the world
	// (a fleet that flaps) changes as often as the world does, which is
	// not an oscillation of desired state. The default, 120, lets a
	// status follow an outside system polled every 0.5s.
	MaxStatusWrites int
}

// WithDefaults returns c with every zero or negative field set to its
// default.
func (c Config) WithDefaults() Config {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.FightWrites <= 0 {
		c.FightWrites = DefaultFightWrites
	}
	if c.NoProgressWrites <= 0 {
		c.NoProgressWrites = DefaultNoProgressWrites
	}
	if c.MaxWrites <= 0 {
		c.MaxWrites = DefaultMaxWrites
	}
	if c.MaxStatusWrites <= 0 {
		c.MaxStatusWrites = DefaultMaxStatusWrites
	}
	return c
}

// Write is one write to an object, as seen in a cache, judged from the point
// of view of one manager ("self"): the manager the Loop's reconciler writes
// as. The Loop leaves out its own Stalled condition writes, and requeues are
// not writes, so neither counts.
type Write struct {
	Time time.Time
	// Self reports that self made the write: self changed Owned and
	// Foreign. A change that merges writes by self and by others (a
	// relist) is observed as two Writes.
	Self bool
	// Owned are the changed paths that self owns after the write.
	Owned []diff.Path
	// Foreign are the changed paths that self does not own after the write.
	Foreign []diff.Path
	// Report marks a write of the Loop's own report about the object (its
	// Stalled condition): it spends MaxWrites, never the status budget,
	// since a report that flips at every reconcile follows the Loop, not
	// the world.
	Report bool
}

// Report is a detected oscillation.
type Report struct {
	Kind Kind
	// Paths are the flipping paths, sorted (diff.Path.Compare): for a Fight
	// the paths re-set after another manager changed them, for NoProgress
	// the paths self kept writing (for TooManyWrites, within the window).
	// The slice is the caller's; the paths in it may be shared with the
	// store's change judge and must not be modified.
	Paths []diff.Path
	// Writes is the number of writes (re-sets for a Fight) in the window.
	Writes int
	// Window is the detector's window.
	Window time.Duration
}

// Message describes r for a Stalled condition or a log line, naming the
// paths in diff.Path notation. The zero Report, which reports nothing,
// says "no oscillation to report"; a Kind this package does not define is
// named by its number.
func (r Report) Message() string {
	if r.Kind == 0 {
		return "no oscillation to report"
	}
	paths := make([]string, len(r.Paths))
	for i, p := range r.Paths {
		paths[i] = p.String()
	}
	switch r.Kind {
	case Fight:
		return fmt.Sprintf("fight: re-set %s %d times within %v after another manager changed it",
			strings.Join(paths, ", "), r.Writes, r.Window)
	case TooManyWrites:
		return fmt.Sprintf("too many writes: %d writes within %v to %s with no change to the spec",
			r.Writes, r.Window, strings.Join(paths, ", "))
	case Throttled:
		return fmt.Sprintf("throttled: %d status writes within %v to %s with no change to the spec",
			r.Writes, r.Window, strings.Join(paths, ", "))
	case NoProgress:
		return fmt.Sprintf("no progress: %d writes within %v to %s with no change to any field this manager does not own",
			r.Writes, r.Window, strings.Join(paths, ", "))
	default:
		return fmt.Sprintf("oscillation of unknown kind %d: %d writes within %v to %s", uint8(r.Kind),
			r.Writes, r.Window, strings.Join(paths, ", "))
	}
}
