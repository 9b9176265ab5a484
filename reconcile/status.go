package reconcile

import (
	"context"
	"slices"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/objmarks"
	"github.com/steady-go/steady/internal/objpath"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
)

// ConditionWriter is how the Loop reads and writes the Stalled condition of the
// object behind a key. The Loop owns only Stalled: WriteCondition must leave
// every other condition, and the status, as they are.
//
// A Source carries the ConditionWriter to the Loop (see Source): FromStore's
// source is one for its kind, and WithConditionWriter attaches any other.
type ConditionWriter[K comparable] interface {
	// Conditions returns the object's current conditions and generation,
	// typically from a cache (it is called after reconciles that may clear
	// Stalled, so it must be cheap). ok is false when the object is gone.
	// The returned slice is read-only.
	Conditions(key K) (conds []store.Condition, generation int64, ok bool)
	// OwnsCondition reports whether manager owns the condition of type typ
	// on the object, by the object's field ownership. The Loop clears only
	// a Stalled condition its own manager owns, so a Loop does not clear a
	// report it never wrote. It is false when the object or the condition
	// is gone, or when ownership cannot be read.
	OwnsCondition(key K, manager, typ string) bool
	// WriteCondition writes c on the object as manager (the Loop's own
	// manager, the field manager (WithFieldManager, LoopInfo.FieldManager)+"-loop"). ctx carries the leadership fence. A
	// missing object is not an error.
	WriteCondition(ctx context.Context, key K, manager string, c store.Condition) error
}

// StoreConditions returns the ConditionWriter for objects of a typed store (the
// one FromStore's source carries): it reads conditions from the cache and
// ownership from their managed fields, and writes a condition with
// ApplyStatus as the Loop's own manager, applying it with the other
// conditions that manager owns on the stored object (read for it), and no
// status fields. Conditions are owned by type, so the write never touches
// the user's Ready or status, never drops the Loop's other conditions
// (Stalled, Reconciling, Paused), and re-applying an unchanged one writes
// nothing. The Loop owns Stalled, so the apply is forced: a reconciler that
// wrote Stalled itself loses it to the Loop.
//
// Its OwnsCondition follows the store's attribution of field ownership: a
// manager owns a condition when it owns the condition's status or the
// condition itself, which applying the condition claims. Two Loops that
// both wrote Stalled on one object therefore both own it: either one's
// recovery clears it, and the other sets it again at its next failure. To
// keep their reports apart, give each Loop its own condition type (a
// ConditionWriter that renames Stalled, as examples/fieldowners does).
func StoreConditions[S, T any](c *cache.Cache[S, T], st *store.Store[S, T]) ConditionWriter[string] {
	return newStoreConditions(c, st)
}

// writerLacks says what s lacks: a nil cache or store; "" when it lacks
// nothing (New refuses a ConditionWriter that lacks one).
func (s storeConditions[S, T]) writerLacks() string {
	switch {
	case s.c == nil:
		return "a nil cache"
	case s.st == nil:
		return "a nil store"
	}
	return ""
}

type storeConditions[S, T any] struct {
	c  *cache.Cache[S, T]
	st *store.Store[S, T]
	mk *cacheMarks[S, T] // never nil
}

func newStoreConditions[S, T any](c *cache.Cache[S, T], st *store.Store[S, T]) storeConditions[S, T] {
	s := storeConditions[S, T]{c: c, st: st, mk: &cacheMarks[S, T]{c: c, st: st}}
	if c != nil {
		if s.mk.mr, _ = storeaccess.Of(c).(objmarks.Reader); s.mk.mr != nil {
			s.mk.mr.KeepMarks()
		}
	}
	return s
}

func (s storeConditions[S, T]) Conditions(name string) ([]store.Condition, int64, bool) {
	obj, ok := s.c.Get(name)
	if !ok {
		return nil, 0, false
	}
	return obj.Conditions, obj.Meta.Generation, true
}

func (s storeConditions[S, T]) OwnsCondition(name, manager, typ string) bool {
	obj, ok := s.c.Get(name)
	return ok && ownsCondition(s.st, obj, manager, typ)
}

func (s storeConditions[S, T]) WriteCondition(ctx context.Context, name, manager string, c store.Condition) error {
	return s.writeConditions(ctx, name, manager, c)
}

// conditionsWriter is the optional side of a ConditionWriter that writes
// several conditions in one write (StoreConditions has it).
type conditionsWriter[K comparable] interface {
	writeConditions(ctx context.Context, key K, manager string, cs ...store.Condition) error
}

// writeConditions applies cs as manager, in one write, together with every
// other condition manager owns on the stored object as it is: an apply
// declares the manager's whole set of conditions, and one that left those
// out would remove them (a Paused write would drop the Loop's Stalled). The
// stored object is read for them, not the cached one, which may not show
// the Loop's last write yet.
func (s storeConditions[S, T]) writeConditions(ctx context.Context, name, manager string, cs ...store.Condition) error {
	// The conditions were judged on the cached object: they must not land
	// on a successor of the same name.
	var uid string
	if obj, ok := s.c.Get(name); ok {
		uid = obj.Meta.UID
	}
	stored, err := s.st.Get(ctx, name)
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	if uid != "" && stored.Meta.UID != uid {
		return nil
	}
	all := slices.Clone(cs)
	for _, c := range stored.Conditions {
		if !slices.ContainsFunc(cs, func(x store.Condition) bool { return x.Type == c.Type }) &&
			ownsCondition(s.st, stored, manager, c.Type) {
			all = append(all, c)
		}
	}
	_, err = s.st.As(manager).ApplyStatus(ctx, name, nil, all, store.WithForce(), store.WithUID(stored.Meta.UID))
	return store.IgnoreNotFound(err)
}

// writeConds writes cs on key's object as the Loop's manager: in one write
// when the ConditionWriter can, else one by one, up to the first error.
func (l *Loop[K]) writeConds(ctx context.Context, key K, cs ...store.Condition) error {
	if w, ok := l.sw.(conditionsWriter[K]); ok {
		return w.writeConditions(ctx, key, l.cfg.loopManager, cs...)
	}
	for _, c := range cs {
		if err := l.sw.WriteCondition(ctx, key, l.cfg.loopManager, c); err != nil {
			return err
		}
	}
	return nil
}

// ownsCondition reports whether manager owns obj's condition of type typ,
// as the store attributes field ownership (FieldChanges, that is
// ownership.Attribute over Meta.Managed): whether a change of the
// condition's status would be manager's, because manager owns the status
// or the condition itself (the list item, which applying it claims). The
// question is put as that change, from a probe copy of obj whose condition
// status differs, to obj as stored. If obj's ownership cannot be read, the
// change counts as foreign, and the answer is false.
func ownsCondition[S, T any](st *store.Store[S, T], obj *store.Object[S, T], manager, typ string) bool {
	i := slices.IndexFunc(obj.Conditions, func(c store.Condition) bool { return c.Type == typ })
	if i < 0 {
		return false
	}
	probe := *obj
	probe.Conditions = slices.Clone(obj.Conditions)
	probe.Conditions[i].Status = "probe"
	owned, _ := st.FieldChanges(&probe, obj, manager)
	return slices.ContainsFunc(owned, conditionStatusPath(typ).Equal)
}

// conditionPath is the path of the condition of type t, as the store's
// managed fields and FieldChanges spell it: .conditions[type="t"].
func conditionPath(t string) diff.Path {
	return objpath.Conditions.Key(diff.KeyField{Name: "type", Value: t})
}

// conditionStatusPath is the path of the status of the condition of type t.
func conditionStatusPath(t string) diff.Path { return conditionPath(t).Field("status") }
