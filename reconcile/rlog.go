package reconcile

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
)

// Logger returns the logger of the reconcile running with ctx: the Loop's
// logger (WithLogger) with the attributes controller (the Loop's name),
// key and reconcileID, so every line a reconciler logs through it can be
// joined with the Loop's own lines about that reconcile, its trace
// (otelsteady sets steady.reconcile_id) and its events. It is built on
// first use, once per reconcile. For a ctx that does not come from a Loop it
// returns slog.Default().
func Logger(ctx context.Context) *slog.Logger {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	if !ok || r.logger == nil {
		return slog.Default()
	}
	if lg := r.log.Load(); lg != nil {
		return lg
	}
	lg := r.logger(r)
	r.log.Store(lg)
	return lg
}

// ReconcileID returns the ID of the reconcile running with ctx, "" for a
// ctx that does not come from a Loop. IDs are unique within a process and,
// with high probability, across restarts: a random prefix per Loop and a
// count of its reconciles ("5f3a09c1-42"). The Loop's log lines about a
// reconcile carry it as reconcileID.
func ReconcileID(ctx context.Context) string {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	if !ok || r.idPrefix == "" {
		return ""
	}
	return r.reconcileID()
}

// newIDPrefix returns a Loop's random reconcile ID prefix.
func newIDPrefix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%08x", binary.BigEndian.Uint32(b[:]))
}

func (r *recorder) reconcileID() string { return fmt.Sprintf("%s-%d", r.idPrefix, r.id) }

// idAttr is the reconcileID attribute of the Loop's lines about the
// reconcile rec runs.
func (r *recorder) idAttr() slog.Attr { return slog.String("reconcileID", r.reconcileID()) }

// setLogger makes rec build its reconcile's logger, on demand, from the
// Loop's logger with the key slot holds.
func (l *Loop[K]) setLogger(rec *recorder, slot *runningSlot[K]) {
	rec.idPrefix = l.idPrefix
	rec.logger = func(r *recorder) *slog.Logger {
		slot.mu.Lock()
		key := slot.key
		slot.mu.Unlock()
		return l.log.With(slog.String("controller", l.name), slog.Any("key", key), r.idAttr())
	}
}
