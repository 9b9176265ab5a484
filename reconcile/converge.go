package reconcile

import "time"

// convergence measures time to converge: from the first sight of a new
// generation of an object to the first sight of Ready=True observed at that
// generation (or later). It is pure: time comes in, durations go out. The
// number of tracked objects is the unconverged-objects gauge. Not safe for
// concurrent use.
type convergence[K comparable] struct {
	pending map[K]pendingGen
}

type pendingGen struct {
	gen   int64
	since time.Time
}

// observe records that key is at generation gen, with readyGen the
// ObservedGeneration of a Ready=True condition (0 when Ready is not True).
// It returns the time to converge when this observation completes
// convergence of a generation seen before. An object first seen already
// converged reports nothing.
func (c *convergence[K]) observe(key K, gen, readyGen int64, now time.Time) (time.Duration, bool) {
	p, tracked := c.pending[key]
	if readyGen > 0 && readyGen >= gen {
		if !tracked {
			return 0, false
		}
		delete(c.pending, key)
		return now.Sub(p.since), true
	}
	if !tracked || p.gen != gen {
		if c.pending == nil {
			c.pending = make(map[K]pendingGen)
		}
		c.pending[key] = pendingGen{gen: gen, since: now}
	}
	return 0, false
}

// forget drops key (the object was deleted).
func (c *convergence[K]) forget(key K) { delete(c.pending, key) }

// unconverged is the number of objects not yet Ready at their generation.
func (c *convergence[K]) unconverged() int { return len(c.pending) }
