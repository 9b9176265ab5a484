package reconciletest

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/steady-go/steady/store"
)

// deletion is one deletion of a primary object that the test itself makes
// during the fault phase, as a user would: the object goes (or, with
// finalizers, is marked), and is recreated with the same name and a new
// UID recreate later, or stays gone when recreate is 0.
type deletion struct {
	at       time.Time
	index    int // which of the Config.Objects
	recreate time.Duration
}

// workload is the test's own activity: the deletions and recreations it
// makes. It is drawn from a source of its own, so the fault-free reference
// run of a seed makes the same ones at the same instants.
type workload struct {
	rng       *rand.Rand
	deletions []deletion
	recreates []deletion // deletions whose recreation is due at at+recreate
	// del and rec make the writes, with the primary kind's types; rec
	// returns the new object's name.
	del func(ctx context.Context, name string) (int64, error)
	rec func(ctx context.Context, index int, name string, rng *rand.Rand) error
}

// planWorkload draws n deletions over the fault phase; three in four are
// recreated after up to MaxDelay.
func (w *world) planWorkload(n, objects int) {
	wl := &w.work
	wl.rng = rand.New(rand.NewPCG(w.seed, 0xde1e7e))
	if objects == 0 {
		return
	}
	for range n {
		d := deletion{
			at:    w.start.Add(time.Duration(wl.rng.Int64N(int64(w.f.Duration)))),
			index: wl.rng.IntN(objects),
		}
		if wl.rng.IntN(4) > 0 {
			d.recreate = time.Duration(1 + wl.rng.Int64N(int64(w.f.MaxDelay)))
		}
		wl.deletions = append(wl.deletions, d)
	}
	slices.SortFunc(wl.deletions, func(a, b deletion) int { return a.at.Compare(b.at) })
}

// nextWork makes the test's next due deletion or recreation, and reports
// whether it made one. Deletions stop with the faults; a recreation due
// later still happens (it is at most MaxDelay late, which the bound holds).
func (w *world) nextWork(now time.Time) bool {
	wl := &w.work
	w.actor = "test"
	defer func() { w.actor = "" }()
	if len(wl.recreates) > 0 && !now.Before(wl.recreates[0].at.Add(wl.recreates[0].recreate)) {
		d := wl.recreates[0]
		wl.recreates = wl.recreates[1:]
		name := w.names[d.index]
		w.mu.Lock()
		delete(w.gone, name)
		c := w.counts(name)
		c.stale = true
		c.disturbed += w.passes // built again from nothing
		w.traceLocked("test recreates %s", name)
		w.mu.Unlock()
		switch err := wl.rec(context.Background(), d.index, name, wl.rng); {
		case errors.Is(err, store.ErrAlreadyExists):
			// Its finalizers still hold the deleted object: it stays
			// deleted, and must be gone at the bound.
			w.mu.Lock()
			w.gone[name] = true
			w.unrecreated[name] = true
			w.traceLocked("test cannot recreate %s: the deleted object is still there", name)
			w.mu.Unlock()
		case err != nil:
			w.violate(HarmContract, "reconciletest: recreating %s: %v", name, err)
		}
		return true
	}
	if len(wl.deletions) == 0 || now.Before(wl.deletions[0].at) {
		return false
	}
	d := wl.deletions[0]
	wl.deletions = wl.deletions[1:]
	name := w.names[d.index]
	w.mu.Lock()
	skip := !w.faultsOn || w.gone[name] || slices.ContainsFunc(wl.recreates, func(r deletion) bool { return r.index == d.index })
	if !skip {
		w.gone[name] = true
		c := w.counts(name)
		c.stale = true
		c.disturbed += w.passes // cleaned up
		w.rep.Deletions++
		w.traceLocked("test deletes %s", name)
	}
	w.mu.Unlock()
	if skip {
		return true
	}
	rev, err := wl.del(context.Background(), name)
	if err != nil {
		w.violate(HarmContract, "reconciletest: deleting %s: %v", name, err)
	}
	w.mu.Lock()
	w.deletedAt[rev] = name
	w.mu.Unlock()
	if d.recreate > 0 {
		wl.recreates = append(wl.recreates, d)
		slices.SortFunc(wl.recreates, func(a, b deletion) int { return a.at.Add(a.recreate).Compare(b.at.Add(b.recreate)) })
	}
	return true
}

// workWake returns when the next deletion or recreation is due, or the
// zero time.
func (w *world) workWake() []time.Time {
	var out []time.Time
	if len(w.work.deletions) > 0 {
		out = append(out, w.work.deletions[0].at)
	}
	if len(w.work.recreates) > 0 {
		out = append(out, w.work.recreates[0].at.Add(w.work.recreates[0].recreate))
	}
	return out
}
