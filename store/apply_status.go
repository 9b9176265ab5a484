package store

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/steady-go/steady/internal/jsonscan"
	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store/kv"
)

// ApplyStatus is server-side apply on the status subresource: manager
// declares the Status fields and the Conditions it wants, and the store
// merges them with what other managers own there. Conditions are owned by
// type, so the reconcile Loop can own Stalled while the user's reconciler
// owns Ready, and neither write removes or overwrites the other's. The
// spec, metadata and Generation are never touched.
//
// status is the desired Status: a value of the Status type, another struct
// with the same JSON names, a map[string]any tree, or nil to apply no status
// fields. conditions are the conditions the manager owns: one that it applied
// before and leaves out now is removed (unless another manager owns it too).
// A condition's LastTransitionTime is kept from the stored condition of that
// type when its Status did not change, and set to the Store's clock when it
// did and the time given is zero; so re-applying the same conditions writes
// nothing.
//
// Like Apply, it returns a *ownership.ConflictError (errors.As) when it would
// change a field another manager owns, unless WithForce is given; it writes
// nothing when nothing changes (Changed false, revision unchanged); and it
// re-reads and merges again when a concurrent write lands first.
// WithObserved(m) rejects it with ErrConflict unless the stored object is the
// one the caller read as m, at the same spec (UID and Generation): pass it
// whenever the status was computed from a read, so the status never lands
// on a later spec nor on an object deleted and recreated under the same
// name. (WithGeneration(g) alone checks the spec only, and WithUID(u) the
// identity only.) It needs no status freshness check (it
// declares fields rather than rewriting what it read) and bumps
// StatusGeneration when it writes. A missing object gives ErrNotFound:
// status is never created. An ApplyStatus that changes an object the Store
// remembers as it is stored is one Txn, with no read (see WithLastValues).
func (w *Writer[S, T]) ApplyStatus(ctx context.Context, name string, status any, conditions []Condition, opts ...WriteOption) (res ApplyResult, err error) {
	// The options are read once, for the dry run and for the write (a
	// Loop's apply carries WithObserved).
	var cfg writeConfig
	optErr := writeOpts(&cfg, "ApplyStatus", optForce|optUID|optGeneration, opts)
	ctx, d := startDry(ctx, w, cfg.dryInto, cfg.dry, "ApplyStatus", name)
	if d != nil {
		defer func() { d.end(err) }()
	}
	if err := w.checkName(name); err != nil {
		return ApplyResult{}, err
	}
	if err := validateConditions(conditions); err != nil {
		return ApplyResult{}, err
	}
	if optErr != nil {
		return ApplyResult{}, optErr
	}
	// Each attempt's write condition names the key: the memory's string
	// when it remembers the object, else built once.
	key, mem, sides := w.s.latest(name)
	return write(ctx, w.s, "status apply to", key, name, mem, sides, nil, false, func(cur *rawObject, sides decodedSides) (ApplyResult, verdict, error) {
		return w.applyStatus(ctx, key, name, status, conditions, cfg, cur, sides.status)
	})
}

// applyStatus is one attempt of ApplyStatus against cur, the current object
// (see write), stored under key, whose status side is known when not nil.
func (w *Writer[S, T]) applyStatus(ctx context.Context, key, name string, status any, conditions []Condition, cfg writeConfig, cur *rawObject, known *decodedSide) (ApplyResult, verdict, error) {
	if err := w.checkStatusTarget(cur, cfg); err != nil {
		return ApplyResult{}, decided, err
	}
	next, sides, err := w.mergeStatus(status, conditions, cfg.force, cur, known)
	out := ApplyResult{Revision: cur.Meta.Revision, Generation: cur.Meta.Generation, UID: cur.Meta.UID}
	switch {
	case err != nil:
		return ApplyResult{}, decided, err
	case next == nil:
		return out, decided, nil
	}
	own := kv.Cond{Key: key, Target: kv.ModRevision, Revision: cur.Meta.Revision}
	// next is not used again, and its Status is cur's or the merge's own
	// encoding (statusFromTree, appliedStatus; admission's defaults).
	out.Revision, err = w.putKeeping(ctx, own, cur, next, sides, next)
	v, err := w.landed(name, 0, err)
	if v != answered || err != nil {
		return ApplyResult{}, v, err
	}
	out.Changed = true
	return out, v, nil
}

// mergeStatus merges status and conditions, manager's applied status side,
// into cur's, and returns the object to store with its ownership record, or
// nil when nothing changes, and what is known of its sides: the status
// side's record, decoded, when the write keeps cur's record (the fields
// manager applied are the ones it owned) and stores the applied status as
// its canonical encoding, as a controller's status apply does, or is a
// manager's first apply of a flat status (firstStatusApply). The Store
// remembers it with the write (see WithLastValues), and its change judge
// takes it from there for the write's event (see sideManaged) instead of
// decoding it again. known, when not nil, is cur's status side as
// decodeSideOf gives it.
func (w *Writer[S, T]) mergeStatus(status any, conditions []Condition, force bool, cur *rawObject, known *decodedSide) (*rawObject, decodedSides, error) {
	conds := conditions
	if len(conds) > 0 { // the clock is read only for conditions to stamp
		conds = stampTransitions(conditions, cur.Conditions, w.s.clock.Now())
	}
	// A status of type T whose JSON form round-trips is encoded once, alone
	// (by its side encoder, as a write encodes it): if the merge keeps it as
	// applied, that is the encoding to store; a manager's apply of a flat
	// one, first or of the fields it owns, is read from the texts alone
	// (flatStatusApply).
	var applied json.RawMessage
	if _, ok := status.(T); ok && w.s.plainStatus {
		b, err := w.s.encodeApplied(status)
		if err != nil {
			return nil, decodedSides{}, err
		}
		applied = b
		if len(conds) == 0 {
			if next, sides, ok, err := w.flatStatusApply(cur, applied, known); ok || err != nil {
				return next, sides, err
			}
		}
		// Boxed only for the merge: the fast path above takes the bytes.
		status = json.RawMessage(b)
	}
	return w.mergeStatusTrees(status, applied, conds, force, cur)
}

// encodeApplied is encodeJSON of status, a T, with the Store's sideEncoder
// of T, looked up once (statusEnc): in sideEncoderOf's sync.Map, the
// lookup was ~170 instructions of every status apply. status is encoded as
// given: a T boxed again was an allocation.
func (s *Store[S, T]) encodeApplied(status any) ([]byte, error) {
	p := s.statusEnc.Load()
	if p == nil {
		enc := sideEncoderOf(reflect.TypeFor[T]())
		p = &enc
		s.statusEnc.Store(p)
	}
	if *p != nil {
		if b, ok := encodeWith(*p, reflect.ValueOf(status)); ok {
			return b, nil // no code of the user's ran
		}
	}
	return encodeJSON("applied status", status)
}

// mergeStatusTrees is mergeStatus by the status side's trees, for any
// apply: applied, when not nil, is status's encoding as a T.
func (w *Writer[S, T]) mergeStatusTrees(status any, applied json.RawMessage, conds []Condition, force bool, cur *rawObject) (*rawObject, decodedSides, error) {
	oopts := []ownership.Option{ownership.WithSchema(w.s.schemas.status)}
	if force {
		oopts = append(oopts, ownership.Force())
	}
	config, err := statusConfigTree(status, conds)
	if err != nil {
		return nil, decodedSides{}, fmt.Errorf("%w: applied status: %v", ErrInvalid, err)
	}
	liveTree, err := statusTree(cur)
	if err != nil {
		return nil, decodedSides{}, err
	}
	dec, codec := w.s.schemas.decodeSideOf(cur, statusSide, liveTree)
	res, err := ownership.Apply(liveTree, config, w.manager, dec.managed, oopts...)
	if err != nil {
		return nil, decodedSides{}, applyError(err)
	}
	if !res.Changed {
		return nil, decodedSides{}, nil
	}
	if applied == nil || !treeEqual(res.Object["status"], config["status"]) {
		applied = nil // the merge kept fields of other managers': encode the result
	}
	next, err := w.statusFromTree(cur, res.Object, applied, liveTree)
	if err != nil {
		return nil, decodedSides{}, err
	}
	kept, err := w.s.schemas.setManagedOver(cur, next, statusSide, res.Managed, dec, codec)
	if err != nil {
		return nil, decodedSides{}, err
	}
	var sides decodedSides
	if kept && applied != nil {
		sides.status = &dec
	}
	return next, sides, nil
}

// statusConfigTree is the status-side tree of an applied status and
// conditions: configTree of the two under "status" and "conditions", each
// left out when empty. It builds what it can without encoding it first: a
// status given as its JSON (a T, see mergeStatus) is decoded alone, and
// conditions are built as conditionsTree builds them; anything else takes
// configTree, as does what those decline.
func statusConfigTree(status any, conds []Condition) (map[string]any, error) {
	general := func() (map[string]any, error) {
		return configTree(struct {
			Status     any         `json:"status,omitempty"`
			Conditions []Condition `json:"conditions,omitempty"`
		}{addressable(status), conds})
	}
	raw, isRaw := status.(json.RawMessage)
	if status != nil && (!isRaw || raw == nil) {
		return general()
	}
	tree := make(map[string]any, 2)
	if len(conds) > 0 {
		c, ok := conditionsTree(conds)
		if !ok {
			return general()
		}
		tree["conditions"] = c
	}
	if isRaw {
		v, err := jsonscan.Decode(raw)
		if err != nil {
			return general() // its error
		}
		tree["status"] = v
	}
	return tree, nil
}

// statusFromTree builds the object to store from the merged status-side
// tree: cur with the tree's status, in the canonical encoding of T, and its
// conditions. status, when not nil, is the tree's status already in that
// encoding (an applied status of type T, see plainJSON), which saves
// encoding the tree and decoding it as a T to encode that again. The status
// and conditions the merge left as they were in live, cur's status-side
// tree, are cur's.
func (w *Writer[S, T]) statusFromTree(cur *rawObject, tree map[string]any, status []byte, live map[string]any) (*rawObject, error) {
	var conds []Condition
	c, hasConds := tree["conditions"]
	keptConds := hasConds && treeEqual(c, live["conditions"]) // shared when kept: quick
	if status == nil && cur.Status != nil && treeEqual(tree["status"], live["status"]) {
		// The merge left the stored status as it was (an apply of
		// conditions only, as the Loop's): its stored encoding is the one.
		status = cur.Status
	}
	switch {
	case status == nil:
		var doc struct {
			Status     T           `json:"status"`
			Conditions []Condition `json:"conditions"`
		}
		if keptConds {
			delete(tree, "conditions") // tree is the merge's own map
			defer func() { tree["conditions"] = c }()
		}
		if err := decodeStrict(tree, &doc); err != nil {
			return nil, fmt.Errorf("%w: applied status of %s %q does not fit its type: %v", ErrInvalid, w.s.kind, cur.Meta.Name, err)
		}
		var err error
		if status, err = encodeJSON("status", doc.Status); err != nil {
			return nil, err
		}
		conds = doc.Conditions
	case hasConds && !keptConds:
		if err := decodeStrict(c, &conds); err != nil {
			return nil, fmt.Errorf("%w: applied conditions of %s %q do not fit: %v", ErrInvalid, w.s.kind, cur.Meta.Name, err)
		}
	}
	if keptConds {
		conds = slices.Clone(cur.Conditions)
	}
	if err := validateConditions(conds); err != nil {
		return nil, err
	}
	next := *cur
	next.Status, next.Conditions = status, conds
	next.Meta.LastWrite = LastWrite{Manager: w.manager, Op: ownership.OpApplyStatus}
	next.Meta.StatusGeneration++
	return &next, nil
}

// stampTransitions returns conds with LastTransitionTime moved only where the
// Status changed: kept from the stored condition of the same type when the
// Status is the same, set to now when it changed (or is new) and no time was
// given.
func stampTransitions(conds, stored []Condition, now time.Time) []Condition {
	if len(conds) == 0 {
		return conds
	}
	out := make([]Condition, len(conds))
	for i, c := range conds {
		switch old := findCondition(stored, c.Type); {
		case old != nil && old.Status == c.Status:
			c.LastTransitionTime = old.LastTransitionTime
		case c.LastTransitionTime.IsZero():
			c.LastTransitionTime = now.UTC()
		}
		out[i] = c
	}
	return out
}

func findCondition(conds []Condition, typ string) *Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}
