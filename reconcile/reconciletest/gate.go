package reconciletest

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/steady-go/steady/store"
)

// errDead is what a crashed process gets from its backend.
var errDead = fmt.Errorf("%w: reconciletest: the process has crashed", store.ErrUnavailable)

// verdict is what the scheduler decided about a write it released.
type verdict uint8

const (
	pass        verdict = iota
	conflict            // rewrite the object first, so the precondition fails
	unavailable         // fail without writing
	lostReply           // write, then report ErrUnavailable
	crashAfter          // write, then the process crashes
)

// gate holds a goroutine of the controller until the scheduler lets it go:
// the start of a reconcile, or a write.
type gate struct {
	p       *Process
	write   bool
	key     string // the reconcile's key, or the written backend key
	object  string // the primary object the write is attributed to
	faulty  bool   // a reconciler write, open to write faults
	canConf bool   // the write has a revision precondition a rewrite can fail
	release chan verdict
}

func compareGates(a, b *gate) int {
	if c := cmp.Compare(a.p.Incarnation, b.p.Incarnation); c != 0 {
		return c
	}
	if a.write != b.write {
		if a.write {
			return 1
		}
		return -1
	}
	return cmp.Compare(a.key, b.key)
}

// wait registers g and blocks until the scheduler releases it, the process
// dies, or ctx ends.
func (w *world) wait(ctx context.Context, g *gate) (verdict, error) {
	g.release = make(chan verdict, 1)
	w.mu.Lock()
	w.gates = append(w.gates, g)
	w.mu.Unlock()
	w.poke()
	select {
	case v := <-g.release:
		return v, nil
	case <-g.p.dead:
		w.dropGate(g)
		return 0, errDead
	case <-ctx.Done():
		w.dropGate(g)
		return 0, context.Cause(ctx)
	}
}

func (w *world) dropGate(g *gate) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, o := range w.gates {
		if o == g {
			w.gates = append(w.gates[:i], w.gates[i+1:]...)
			return
		}
	}
}

// release lets g go, deciding first, for a write, whether it fails.
func (w *world) release(g *gate) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, o := range w.gates {
		if o == g {
			w.gates = append(w.gates[:i], w.gates[i+1:]...)
			break
		}
	}
	if !g.write {
		w.rep.Reconciles++
		w.traceLocked("reconcile %s (process %d)", g.key, g.p.Incarnation)
		g.release <- pass
		return
	}
	v := pass
	g.p.writes++
	switch {
	case w.faultsOn && g.p.crashAt > 0 && g.p.writes == g.p.crashAt:
		v = crashAfter
	case w.faultsOn && g.faulty:
		u := w.rng.Float64()
		switch f := w.f; {
		case g.canConf && u < f.ConflictWrites:
			v = conflict
		case u >= f.ConflictWrites && u < f.ConflictWrites+f.UnavailableWrites:
			v = unavailable
		case u >= f.ConflictWrites+f.UnavailableWrites && u < f.ConflictWrites+f.UnavailableWrites+f.TimeoutWrites:
			v = lostReply
		}
	}
	if v != pass && v != crashAfter {
		name := [...]string{conflict: "conflict", unavailable: "unavailable", lostReply: "committed-but-timed-out"}[v]
		w.rep.Faults[name]++
		w.disturbLocked(g.object)
		w.traceLocked("fault %s: write %s", name, g.key)
	}
	w.traceLocked("write %s (process %d)", g.key, g.p.Incarnation)
	g.release <- v
}

// errInjected marks errors the harness made up.
var errInjected = errors.New("reconciletest: injected")
