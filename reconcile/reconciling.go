package reconcile

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// The Loop writes the Reconciling condition (conditions.Reconciling states
// when and why) with these reasons.
const (
	reasonProgressing = "Progressing"
	reasonReconciled  = "Reconciled"
	reasonStalled     = "Stalled"
)

// reconcilingBefore reports whether key's object carries the Loop's
// Reconciling=True, set after an earlier pass that did not succeed
// (reconcilingUnfinished), and then reads the object's generation into
// m.gen for reconcilingAfter. An object without Reconciling=True costs it
// no call and no lock.
func (l *Loop[K]) reconcilingBefore(key K, m *objectMarks) bool {
	if l.cfg.observeOnly || m.ObserveOnly || !m.Reconciling {
		return false
	}
	if !l.sw.OwnsCondition(key, l.cfg.loopManager, conditions.Reconciling) {
		return false
	}
	_, m.gen, _ = l.sw.Conditions(key)
	return true
}

// reconcilingUnfinished sets Reconciling=True on a new object after a
// first reconcile that did not succeed (an error or a RequeueAfterWrite
// that does not set Stalled), so that kstatus reads it InProgress, not
// Current, while the Loop retries it. The object the cache held before the
// reconcile (at m.at; not the one it holds now, which may show the
// reconciler's own writes) says whether it is new: present, no condition has observed it, it
// has no Reconciling, and its deletion is not requested (kstatus reads it
// as Terminating whatever its conditions say). The cache answers from a
// bounded record of the objects that turned new or stopped being new
// (store/cache keeps the last 1,024 turns): when more objects turned
// while the reconcile ran, the object is judged as the cache holds it
// now, so that one the reconcile observed gets no Reconciling=True this
// time. A first reconcile that
// succeeds costs no Reconciling write: the object then reads as the
// reconciler left it (its Ready, at the generation it read). The write
// waits (at most the read-your-writes timeout) until the cache shows it,
// so the retry reads the object as stored. It reports whether it wrote
// (or tried).
func (l *Loop[K]) reconcilingUnfinished(t *term[K], key K, m *objectMarks, d *decision, o *outcome) bool {
	switch {
	case l.cfg.observeOnly || m.ObserveOnly:
		return false
	case !l.marks.wasFresh(key, m.at): // gone, or observed, before the reconcile
		return false
	case d.stalled == stalledClear || o.stall == stalledSet:
		return false
	}
	_, m.gen, _ = l.sw.Conditions(key)
	c := store.Condition{Type: conditions.Reconciling, Status: store.ConditionTrue, Reason: reasonProgressing,
		Message: conditionMessage(l.name + ": reconciling generation " + strconv.FormatInt(m.gen, 10))}
	var revs []written
	ctx := wrote.With(t.work, func(b any, _ string, rev int64) { revs = wroteTo(revs, backendID(b), rev) })
	if l.writeReconciling(ctx, t, key, c) {
		l.waitSeen(t.work, revs)
	}
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
	c := store.Condition{Type: conditions.Reconciling, Status: store.ConditionFalse, Reason: reasonReconciled,
		Message: conditionMessage(l.name + ": generation " + strconv.FormatInt(m.gen, 10) + " reconciled")}
	l.writeReconciling(t.work, t, key, c)
	return true
}

// reconcilingStopped returns the Reconciling=False that goes with a
// Stalled=True write on an object that carries Reconciling=True.
func (l *Loop[K]) reconcilingStopped(conds []store.Condition) (store.Condition, bool) {
	if !conditions.IsTrue(conds, conditions.Reconciling) {
		return store.Condition{}, false
	}
	return store.Condition{Type: conditions.Reconciling, Status: store.ConditionFalse, Reason: reasonStalled,
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
			keyAttr(key), slog.Any("error", err))
	}
	return err == nil
}

// waitSeen waits until every cache source over a backend written holds
// what was written to it (revs), or for the read-your-writes timeout.
func (l *Loop[K]) waitSeen(ctx context.Context, revs []written) {
	if !l.behind(revs) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.rywTimeout)
	defer cancel()
	_ = l.waitWritten(ctx, revs) // a timeout leaves the pass to read what the cache has
}
