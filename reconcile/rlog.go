package reconcile

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"unicode/utf8"
)

// Logger returns the logger of the reconcile running with ctx: the Loop's
// logger (WithLogger) with the attributes controller (the Loop's name),
// key (a key whose text is over 256 bytes as its first bytes and its
// length) and reconcileID, so every line a reconciler logs through it can be
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
	r.used.Store(true)
	r.log.Store(lg)
	return lg
}

// ReconcileID returns the ID of the reconcile running with ctx, "" for a
// ctx that does not come from a Loop. IDs are unique within a process and,
// with high probability, across restarts: a random prefix per Loop and a
// count ("5f3a09c1-42"). The count numbers the reconciles whose ID was
// used (by ReconcileID, Logger, an event, or the Loop's own log lines and
// RecentFailure), in the order of first use: a reconcile that uses none
// takes no number. The Loop's log lines about a reconcile carry it as
// reconcileID.
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

func (r *recorder) reconcileID() string { return fmt.Sprintf("%s-%d", r.idPrefix, r.idNumber()) }

// idNumber returns the number of the reconcile's ID, taking the next of
// the Loop's count the first time it is asked for. A reconcile that never
// uses its ID (most: it logs nothing, records no event and does not fail)
// takes none, so the workers share no counter they write at every
// reconcile. Safe for concurrent use: goroutines of one reconcile that
// ask at once get the same number, and take one number between them (a
// compare-and-swap after the count's increment would leave a gap in the
// count for every loser).
func (r *recorder) idNumber() uint64 {
	if id := r.id.Load(); id != 0 {
		return id
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if id := r.id.Load(); id != 0 {
		return id
	}
	r.used.Store(true)
	id := r.ids.Add(1)
	r.id.Store(id)
	return id
}

// idAttr is the reconcileID attribute of the Loop's lines about the
// reconcile rec runs.
func (r *recorder) idAttr() slog.Attr { return slog.String("reconcileID", r.reconcileID()) }

// setLogger makes rec build its reconcile's logger, on demand, from the
// Loop's logger with the key slot holds.
func (l *Loop[K]) setLogger(rec *recorder, slot *runningSlot[K]) {
	rec.idPrefix, rec.ids = l.idPrefix, &l.reconciles
	rec.logger = func(r *recorder) *slog.Logger {
		slot.mu.Lock()
		key := slot.key
		slot.mu.Unlock()
		return l.log.With(slog.String("controller", l.name), keyAttr(key), r.idAttr())
	}
}

// maxLoggedKey bounds a key's text in the Loop's log lines. A key is the
// user's value: logged whole, a 100 KB key would make each line 100 KB,
// and the log's size unbounded although its number of lines is bounded.
const maxLoggedKey = 256

// keyAttr is the key attribute of the Loop's lines: the key itself, or,
// for a key whose text (a string, or a fmt.Stringer's String) is longer
// than maxLoggedKey bytes, its first bytes and its length.
func keyAttr[K comparable](key K) slog.Attr {
	var s string
	switch k := any(key).(type) {
	case string:
		s = k
	case fmt.Stringer:
		s = k.String()
	default:
		return slog.Any("key", key)
	}
	if len(s) <= maxLoggedKey {
		return slog.Any("key", key)
	}
	cut := maxLoggedKey
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return slog.String("key", fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s)))
}
