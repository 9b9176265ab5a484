package reconcile

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/steady-go/steady/store"
)

// Reconciling is the condition type the Loop writes, as kstatus defines it,
// on the objects it reads through StoreConditions (FromStore's source). With
// Stalled (the Loop's), Ready (the reconciler's) and the ObservedGeneration
// the conditions carry, it lets kstatus read an object as InProgress,
// Current or Failed (see package debugpage, Kstatus, which reads an
// object's observedGeneration as the highest ObservedGeneration of its
// conditions):
//
//   - A generation not yet reconciled is InProgress: kstatus reads an
//     observedGeneration behind the generation as Reconciling (reason
//     LatestGenerationNotObserved). The reconciler's Ready carries the
//     generation it was computed from, and so moves it on.
//   - An object no condition has observed yet (a new one) has no such
//     generation to lag: before its first reconcile the Loop sets
//     Reconciling=True (reason "Progressing"), and waits (at most the
//     read-your-writes timeout) until its cache shows the write, so the
//     reconcile reads the object as stored.
//   - A reconcile that succeeds (nil, or RequeueAfter with no error) sets
//     the Loop's Reconciling=True to False (reason "Reconciled"); a failure
//     or a RequeueAfterWrite keeps it True.
//   - Setting Stalled=True sets the Loop's Reconciling=True to False
//     (reason "Stalled") in the same write, since kstatus reads Reconciling
//     before Stalled.
//
// The Loop's Reconciling carries no ObservedGeneration: it observes no
// spec, and a Reconciling=False of an earlier generation must not hold the
// observed generation back. The cost is two writes in an object's life,
// and none per reconcile or per generation: a burst of spec changes, or
// resyncs and hints of an unchanged object, make the Loop write no
// Reconciling. (Setting it for every new generation would cost two writes
// per spec change: 1,000 spec changes in a second made the Loop write
// 306 to 1,994 times on one object, where its bound is 5.) These writes
// are status-only, by the Loop's own manager, and a change to Reconciling
// alone is never a hint for any Loop. So a reconciler must return the
// ErrConflict of a whole-object Update, not swallow it in the hope that
// the change which beat it brings another hint: another Loop's
// Reconciling write changes the revision and brings none.
//
// A reconciler that writes Reconciling itself keeps it: the Loop writes
// the condition only on objects that have none, and changes only its own.
// Under observe-only (WithObserveOnly) the Loop writes no Reconciling, nor
// do Loops whose ConditionWriter is not StoreConditions.
const Reconciling = "Reconciling"

// Reasons of the Reconciling condition.
const (
	reasonProgressing = "Progressing"
	reasonReconciled  = "Reconciled"
	reasonStalled     = "Stalled"
)

// reconcilingBefore sets Reconciling=True on key's object before its first
// reconcile: when m says no condition has observed it and it has no
// Reconciling (and its deletion is not requested: kstatus reads it as
// Terminating whatever its conditions say). It reports whether the object
// carries the Loop's Reconciling=True now. An object already observed
// costs it no call and no lock.
func (l *Loop[K]) reconcilingBefore(t *term[K], key K, m *objectMarks) bool {
	switch {
	case l.cfg.observeOnly || m.observeOnly:
		return false
	case m.reconciling: // set before an earlier pass that did not succeed
		return l.sw.OwnsCondition(key, l.cfg.loopManager, Reconciling)
	case m.hasReconciling || m.observed > 0 || m.deleting:
		return false
	}
	c := store.Condition{Type: Reconciling, Status: store.ConditionTrue, Reason: reasonProgressing,
		Message: conditionMessage(l.name + ": reconciling generation " + strconv.FormatInt(m.gen, 10))}
	var rev int64
	ctx := store.WithWriteObserver(t.work, func(r int64) { rev = max(rev, r) })
	if !l.writeReconciling(ctx, t, key, c) {
		return false
	}
	l.waitSeen(t.work, rev)
	return true
}

// reconcilingAfter sets the Loop's Reconciling=True, which the caller
// knows the object carries, to False after a reconcile that succeeded
// (d.stalled is stalledClear). A Stalled=True write clears it itself
// (putStalled). It reports whether it wrote (or tried).
func (l *Loop[K]) reconcilingAfter(t *term[K], key K, m *objectMarks, d *decision, o *outcome) bool {
	if d.stalled != stalledClear || o.stall == stalledSet {
		return false
	}
	c := store.Condition{Type: Reconciling, Status: store.ConditionFalse, Reason: reasonReconciled,
		Message: conditionMessage(l.name + ": generation " + strconv.FormatInt(m.gen, 10) + " reconciled")}
	l.writeReconciling(t.work, t, key, c)
	return true
}

// reconcilingStopped returns the Reconciling=False that goes with a
// Stalled=True write on an object that carries Reconciling=True.
func (l *Loop[K]) reconcilingStopped(conds []store.Condition) (store.Condition, bool) {
	if !IsTrue(conds, Reconciling) {
		return store.Condition{}, false
	}
	return store.Condition{Type: Reconciling, Status: store.ConditionFalse, Reason: reasonStalled,
		Message: conditionMessage(l.name + ": stalled, see the Stalled condition")}, true
}

// writeReconciling writes c through the ConditionWriter and reports
// whether it did; a failure is logged.
func (l *Loop[K]) writeReconciling(ctx context.Context, t *term[K], key K, c store.Condition) (ok bool) {
	err := l.writeConds(ctx, key, c)
	if err != nil && t.work.Err() == nil {
		lvl := slog.LevelError
		if store.IgnoreNotFound(err) == nil {
			lvl = slog.LevelDebug
		}
		l.log.LogAttrs(t.work, lvl, "writing Reconciling failed", slog.String("controller", l.name),
			slog.Any("key", key), slog.Any("error", err))
	}
	return err == nil
}

// waitSeen waits until every cache source holds rev, or for the
// read-your-writes timeout.
func (l *Loop[K]) waitSeen(ctx context.Context, rev int64) {
	if rev <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.rywTimeout)
	defer cancel()
	for _, w := range l.waiters {
		if w.Revision() < rev && w.WaitFor(ctx, rev) != nil {
			return
		}
	}
}
