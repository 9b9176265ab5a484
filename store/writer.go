package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/internal/wrote"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

// Writer writes objects of one Store on behalf of one manager. Get one with
// Store.As.
//
// Its writes are Create, Update, UpdateStatus, Delete, Apply and
// ApplyStatus. Every write:
//   - stamps Meta.LastWrite with the manager and the operation;
//   - records the fields it changed (or, for an apply, declared) as owned by
//     the manager in Meta.Managed;
//   - carries the Fence found in ctx (see WithFence) as an extra Txn
//     precondition, and fails with ErrFenced when it no longer holds;
//   - returns the new store revision and sets it in the caller's
//     obj.Meta.Revision, where there is an obj.
//
// A write that would change nothing (same spec, metadata, status and
// conditions) writes nothing and returns the current revision: level-triggered
// callers may repeat themselves freely.
//
// The store owns Meta.Kind, UID, Generation, StatusGeneration, DeletionRequested,
// LastWrite, Managed and Revision; what callers put there is ignored, except
// that a Kind other than the Store's or "" is rejected with ErrInvalid. A
// Writer is safe for concurrent use.
type Writer[S, T any] struct {
	s       *Store[S, T]
	manager string
}

// As returns the handle through which manager writes. An empty manager makes
// every write fail with ErrInvalid.
func (s *Store[S, T]) As(manager string) *Writer[S, T] {
	return &Writer[S, T]{s: s, manager: manager}
}

// Create stores obj as a new object: it assigns a UID and Generation 1, and
// writes Meta, Spec, Status and Conditions. It fills obj.Meta with what was
// stored, Revision included, and returns the new revision.
//
// A condition given without a LastTransitionTime gets the Store's clock
// time. It returns an error wrapping ErrAlreadyExists if an object of that name
// exists (even one whose deletion was requested), ErrInvalid for a bad name,
// kind or condition list, and ErrFenced if ctx's fence no longer holds.
func (w *Writer[S, T]) Create(ctx context.Context, obj *Object[S, T], opts ...WriteOption) (rev int64, err error) {
	ctx, d := beginDry(ctx, w, opts, "Create", nameOf(obj))
	if d != nil {
		defer func() { d.end(err) }()
	}
	if err := writeOpts(new(writeConfig), "Create", 0, opts); err != nil {
		return 0, err
	}
	return w.create(ctx, obj)
}

func (w *Writer[S, T]) create(ctx context.Context, obj *Object[S, T]) (int64, error) {
	if err := w.check(obj); err != nil {
		return 0, err
	}
	if err := validateConditions(obj.Conditions); err != nil {
		return 0, err
	}
	spec, err := encodeJSON("spec", obj.Spec)
	if err != nil {
		return 0, err
	}
	status, err := encodeJSON("status", obj.Status)
	if err != nil {
		return 0, err
	}
	conds := stampTransitions(obj.Conditions, nil, w.s.clock.Now())
	next := &rawObject{Meta: obj.Meta, Spec: spec, Status: status, Conditions: conds}
	m := &next.Meta
	m.Kind, m.UID, m.Generation, m.DeletionRequested = w.s.kind, w.s.newUID(), 1, false
	m.StatusGeneration = 0
	m.Revision, m.Managed = 0, nil
	m.LastWrite = LastWrite{Manager: w.manager, Op: ownership.OpCreate}
	if err := w.s.manageCreate(next, w.manager); err != nil {
		return 0, err
	}
	key := w.s.prefix + m.Name
	rev, err := w.put(ctx, kv.Cond{Key: key, Target: kv.CreateRevision}, nil, next, decodedSides{})
	if _, ok := ownCondFailure(err); ok {
		return 0, fmt.Errorf("%w: %s %q", ErrAlreadyExists, w.s.kind, m.Name)
	}
	if err != nil {
		return 0, err
	}
	obj.Meta, obj.Conditions = next.Meta, conds
	obj.Meta.Revision = rev
	return rev, nil
}

// Update writes obj's Meta and Spec. The precondition is obj.Meta.Revision:
// if the object was written since (by anyone, status writes included), Update
// returns an error wrapping ErrConflict and writes nothing; re-read and retry.
// A zero Revision is rejected with ErrInvalid, as an update not based on a
// read would overwrite whatever it did not see.
//
// Of Meta, Update writes Labels, Annotations, Owners and Finalizers. The
// stored Status and Conditions are kept whatever obj holds (use UpdateStatus
// for those). Generation is bumped when the Spec changed, that is when its
// JSON encoding differs from the stored one. If the object's deletion was
// requested and obj has no finalizers left, Update deletes it.
//
// On success obj.Meta is what was stored, with the new Revision, which is
// returned. A missing object gives ErrNotFound. An Update of an object as the
// Store last read or wrote it is one Txn, with no read (see WithLastValues).
func (w *Writer[S, T]) Update(ctx context.Context, obj *Object[S, T], opts ...WriteOption) (rev int64, err error) {
	ctx, d := beginDry(ctx, w, opts, "Update", nameOf(obj))
	if d != nil {
		defer func() { d.end(err) }()
	}
	if err := writeOpts(new(writeConfig), "Update", 0, opts); err != nil {
		return 0, err
	}
	return w.updateObj(ctx, obj)
}

func (w *Writer[S, T]) updateObj(ctx context.Context, obj *Object[S, T]) (int64, error) {
	if err := w.check(obj); err != nil {
		return 0, err
	}
	name := obj.Meta.Name
	if obj.Meta.Revision == 0 {
		return 0, fmt.Errorf("%w: Update of %s %q needs the Revision of a read", ErrInvalid, w.s.kind, name)
	}
	key, mem, sides := w.s.rememberedOrRead(name, obj.Meta.Revision)
	read := updateRead{meta: &obj.Meta, key: key}
	w.s.holdScratch(&read)
	defer w.s.releaseScratch(&read) // once res.same, which may be its object's, is copied
	spec, err := w.s.encodeSpecIn(&read, &obj.Spec)
	if err != nil {
		return 0, err
	}
	res, err := write(ctx, w.s, "update of", key, name, mem, sides, &read, false, func(cur *rawObject, sides decodedSides) (updated, verdict, error) {
		return w.update(ctx, read.key, obj, spec, cur, sides)
	})
	if err != nil {
		return 0, err
	}
	if res.same != nil {
		obj.Meta = *res.same
	}
	return obj.Meta.Revision, nil
}

// updated is what an attempt of Update gives: nothing (the Meta to give
// the caller is in obj.Meta already), or the Meta of the current value,
// which the write left as it is.
type updated struct{ same *Meta }

// update is one attempt of Update against cur, the current object, stored
// under key, with what is known of its sides, and spec, obj's encoded Spec
// (see write). It returns the Meta to give the caller when the write
// changes nothing (updated.same); when it writes, it sets obj.Meta to it
// itself once the write landed (answered, no error), the one attempt of
// the write whose answer is final whatever cur is: a Meta handed back
// through write was copied four times (~400 instructions of the other
// writer's Update, BenchmarkUpdateSpecOther).
func (w *Writer[S, T]) update(ctx context.Context, key string, obj *Object[S, T], spec []byte, cur *rawObject, sides decodedSides) (updated, verdict, error) {
	name := obj.Meta.Name
	if cur.Meta.Revision != obj.Meta.Revision {
		return updated{}, decided, w.conflict(name, obj.Meta.Revision, cur.Meta.Revision)
	}
	next := *cur
	next.Spec, next.shape = spec, knownShape{} // cur's key is not of spec
	m := &next.Meta
	m.Labels, m.Annotations = obj.Meta.Labels, obj.Meta.Annotations
	m.Owners, m.Finalizers = obj.Meta.Owners, obj.Meta.Finalizers
	specChanged := !bytes.Equal(spec, cur.Spec)
	if !specChanged && userMetaEqual(&cur.Meta, m) {
		return updated{same: &cur.Meta}, decided, nil
	}
	if specChanged {
		m.Generation++
	}
	m.LastWrite = LastWrite{Manager: w.manager, Op: ownership.OpUpdate}
	// The status side is left as it is, and so is what is known of it.
	var err error
	if sides.spec, err = w.s.manageUpdate(cur, &next, w.manager, sides.spec); err != nil {
		return updated{}, decided, err
	}
	own := kv.Cond{Key: key, Target: kv.ModRevision, Revision: cur.Meta.Revision}
	rev, _, err := w.store(ctx, own, cur, &next, sides)
	v, err := w.landed(name, obj.Meta.Revision, err)
	if v != answered || err != nil {
		return updated{}, v, err
	}
	obj.Meta = next.Meta
	if w.s.last != nil {
		// cur's may be the Store's memory, which may keep next's too.
		// Without one, they are the caller's own (obj.Meta.Managed,
		// the read's) or fresh, and nothing else holds them.
		obj.Meta.Managed = slices.Clone(m.Managed)
	}
	obj.Meta.Revision = rev
	return updated{}, v, nil
}

// userMetaEqual reports whether the caller-written parts of two Metas
// agree: an empty map or list is equal to a nil one, as encoding omits
// both. Metas with none of them (a controller's usual objects) agree at
// one test of the eight lengths, not four calls (~190 instructions of every
// Update's record, which asks it of the object before and after).
func userMetaEqual(a, b *Meta) bool {
	if len(a.Labels)|len(b.Labels)|len(a.Annotations)|len(b.Annotations)|
		len(a.Owners)|len(b.Owners)|len(a.Finalizers)|len(b.Finalizers) == 0 {
		return true
	}
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		slices.Equal(a.Owners, b.Owners) && slices.Equal(a.Finalizers, b.Finalizers)
}

// nameOf is obj's name, "" for a nil obj (which the write refuses).
func nameOf[S, T any](obj *Object[S, T]) string {
	if obj == nil {
		return ""
	}
	return obj.Meta.Name
}

// check validates the parts of obj every write needs.
func (w *Writer[S, T]) check(obj *Object[S, T]) error {
	if w.manager == "" {
		return fmt.Errorf("%w: write without a manager (use Store.As with a name)", ErrInvalid)
	}
	if obj == nil {
		return fmt.Errorf("%w: nil object", ErrInvalid)
	}
	if k := obj.Meta.Kind; k != "" && k != w.s.kind {
		return fmt.Errorf("%w: object of kind %q written to the %q store", ErrInvalid, k, w.s.kind)
	}
	return ValidateName(obj.Meta.Name)
}

func (w *Writer[S, T]) conflict(name string, want, have int64) error {
	return w.s.stale(fmt.Errorf("%w: %s %q was read at revision %d and has been written since (now %d)",
		ErrConflict, w.s.kind, name, want, have), have)
}

// stale says of err, a precondition's ErrConflict that failed against the
// object stored at revision rev, where and at what revision that object is
// stored (wrote.Stale), so that a reconcile Loop whose cache has yet to
// show it waits for the cache rather than retry the stale read. err is
// returned as it is for rev ≤ 0 (nothing stored).
func (s *Store[S, T]) stale(err error, rev int64) error {
	if rev <= 0 {
		return err
	}
	return &wrote.Stale{Err: err, Backend: s.b, Revision: rev}
}

// checkRevision applies WithRevision(want), when want is not 0, to cur, the
// current object (nil when there is none).
func (w *Writer[S, T]) checkRevision(name string, cur *rawObject, want int64) error {
	switch {
	case want == 0:
		return nil
	case cur == nil:
		return fmt.Errorf("%w: %s %q at revision %d: the object does not exist", ErrConflict, w.s.kind, name, want)
	case cur.Meta.Revision != want:
		return w.conflict(name, want, cur.Meta.Revision)
	}
	return nil
}

// checkUID applies WithUID(uid) to cur, the current object.
func (w *Writer[S, T]) checkUID(cur *rawObject, uid string) error {
	if uid != "" && uid != cur.Meta.UID {
		return w.s.stale(fmt.Errorf("%w: %s %q was replaced (UID %s, want %s)", ErrConflict, w.s.kind, cur.Meta.Name, cur.Meta.UID, uid), cur.Meta.Revision)
	}
	return nil
}

// landed turns the error of an attempt's Txn into its verdict: a failed own
// cond means the object was written since the current value, a race, or,
// when the caller named the revision it read (want), a conflict; anything
// else is the Backend's answer.
func (w *Writer[S, T]) landed(name string, want int64, err error) (verdict, error) {
	if cf, ok := ownCondFailure(err); ok {
		if want != 0 {
			return decided, w.conflict(name, want, cf.Actual)
		}
		return raced, nil
	}
	return answered, err
}

// store writes next under the own-key cond: it deletes the object when its
// deletion was requested and it has no finalizers left, and puts it
// otherwise.
func (w *Writer[S, T]) store(ctx context.Context, own kv.Cond, cur, next *rawObject, sides decodedSides) (rev int64, deleted bool, err error) {
	if next.Meta.DeletionRequested && len(next.Meta.Finalizers) == 0 {
		rev, err = w.txn(ctx, own, kv.Write{Kind: kv.WriteDelete, Key: own.Key})
		return rev, true, err
	}
	rev, err = w.put(ctx, own, cur, next, sides)
	return rev, false, err
}

// put encodes next and writes it under the own-key cond (and ctx's fence),
// then remembers it (see WithLastValues) with what is known of its sides.
// cur is the value the cond holds the key to (nil for a creation), which
// admission sees as the old object: the Store's memory, or a read of the
// write's own, what no write hands to its caller (see lastValues.wrote).
func (w *Writer[S, T]) put(ctx context.Context, own kv.Cond, cur, next *rawObject, sides decodedSides) (int64, error) {
	return w.putKeeping(ctx, own, cur, next, sides, nil)
}

// putKeeping is put, remembering mine (see WithLastValues): next itself
// when the caller neither reads nor hands out next once it returns (a
// status apply's, whose object is its own) and next.Status is cur's or an
// allocation of its own that nothing else holds (the apply's encoding),
// so that the memory of values keeps it rather than a copy, and shares
// that status in its records (see lastValues.wroteGiven); nil, and the
// memory keeps a copy of next. Only mine is kept, never next, which
// therefore does not escape through put: Writer.update's next, a copy of
// the current value, stays on its stack.
func (w *Writer[S, T]) putKeeping(ctx context.Context, own kv.Cond, cur, next *rawObject, sides decodedSides, mine *rawObject) (int64, error) {
	if w.s.trace != nil {
		tr := w.s.traceOf(ctx)
		if op := next.Meta.LastWrite.Op; tr == "" && cur != nil && (op == ownership.OpApplyStatus || op == ownership.OpUpdateStatus) {
			// An untraced status write (the Loop's own conditions, say)
			// keeps the recorded trace, so the reconcile that the traced
			// write caused still links to it.
			tr = cur.Meta.LastWrite.Trace
		}
		next.Meta.LastWrite.Trace = tr
	}
	val, head, err := w.s.encodeStoredOver(cur, next)
	if err != nil {
		return 0, err
	}
	// next takes the head of its own value (none when cur's does not
	// describe next, see storedHead): the memory of values may keep it.
	next.head = storedHead{}
	if w.s.admission != nil {
		if val, sides, err = w.admit(own, cur, next, val, sides); err != nil {
			return 0, err
		}
	} else if head > 0 {
		next.head = headText(val[:head])
	}
	h := wrote.HooksOf(ctx)
	if d := dryRunOf(h); d != nil {
		d.dryMeta(next.Meta)
		return w.txnAs(ctx, h, d, own, kv.Write{Kind: kv.WritePut, Key: own.Key, Value: val})
	}
	// val is the Store's own encoding, never modified once written: the
	// Backend may keep it (Owned), and the memory of values does.
	pending := sides.status != nil
	if pending {
		w.s.last.writing(own.Key, val, sides.status) // its event may be judged before wrote
		defer func() {
			if pending { // the write failed, or panicked: wroteGiven did not forget it
				w.s.last.doneWriting(own.Key, val)
			}
		}()
	}
	rev, err := w.txnAs(ctx, h, nil, own, kv.Write{Kind: kv.WritePut, Key: own.Key, Value: val, Owned: true})
	if err == nil {
		if w.s.last != nil {
			if mine == nil {
				mine = new(rawObject)
				*mine = *next // what wroteGiven copies of a next not given
			}
			w.s.last.wroteGiven(own.Key, rev, cur, mine, val, sides, true, pending)
		}
		pending = false
	}
	return rev, err
}

// txn runs one write under its own-key cond and, when ctx carries one, the
// fence. A failed own cond comes back as the *CondFailedError (see
// ownCondFailure) for the caller to name; a failed fence is ErrFenced.
func (w *Writer[S, T]) txn(ctx context.Context, own kv.Cond, wr kv.Write) (int64, error) {
	h := wrote.HooksOf(ctx)
	return w.txnAs(ctx, h, dryRunOf(h), own, wr)
}

// txnAs is txn for a write that looked up ctx's write hooks (h, whose
// write limit, fence and observers it takes) and its dry run in them (d;
// nil for none): put, on every write, which need not look again.
func (w *Writer[S, T]) txnAs(ctx context.Context, h *wrote.Hooks, d *dryRun, own kv.Cond, wr kv.Write) (int64, error) {
	if err := storeaccess.WaitWriteLimit(ctx, h); err != nil {
		return 0, err
	}
	// The conds come from a pool: a Backend does not retain them once Txn
	// returns (kv.Backend), and the slice would otherwise be allocated on
	// every write, as it escapes through the interface call.
	buf := condPool.Get().(*[2]kv.Cond)
	conds := append(buf[:0], own)
	fence, fenced := fenceOf(h)
	if fenced {
		conds = append(conds, fence.cond())
	}
	var rev int64
	var err error
	if d != nil {
		rev, err = w.dryTxn(ctx, d, conds, wr)
	} else {
		rev, err = w.s.b.Txn(ctx, conds, wr)
	}
	*buf = [2]kv.Cond{} // the pool keeps no keys alive
	condPool.Put(buf)
	// errors.As's target escapes: only a failed write pays for it.
	if err != nil {
		var cf *kv.CondFailedError
		if errors.As(err, &cf) && cf.Index > 0 {
			return 0, fenceFailed(fence, cf.Actual)
		}
	}
	if err == nil && d == nil {
		observeWrite(h, w.s.b, strings.TrimPrefix(wr.Key, w.s.prefix), rev)
		if wr.Kind == kv.WriteDelete {
			w.s.last.forget(wr.Key, rev)
		}
	}
	return rev, err
}

// condPool holds the conds of txnAs's Txns: a write's own cond and ctx's
// fence.
var condPool = sync.Pool{New: func() any { return new([2]kv.Cond) }}

// ownCondFailure returns the failed cond when err is the failure of a
// write's own-key cond.
func ownCondFailure(err error) (*kv.CondFailedError, bool) {
	if err == nil {
		return nil, false // errors.As's target escapes: no allocation for a success
	}
	var cf *kv.CondFailedError
	if errors.As(err, &cf) && cf.Index == 0 {
		return cf, true
	}
	return nil, false
}
