package cache_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/objmarks"
	"github.com/steady-go/steady/internal/storeaccess"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// marksOf returns the marks c offers a reconcile Loop (internal/objmarks),
// after asking it to keep them.
func marksOf(t *testing.T, c *cache.Cache[cacheSpec, cacheStatus]) objmarks.Reader {
	t.Helper()
	r, ok := storeaccess.Of(c).(objmarks.Reader)
	require.True(t, ok, "a Cache offers its objects' marks")
	r.KeepMarks()
	return r
}

// requireMarks checks that the marks c offers for each name are those of
// the object Get returns when they are loud, that it offers none for an
// object whose marks are quiet or a name it does not hold, and that
// WasFresh, asked at once, says whether that object is new.
func requireMarks(t *testing.T, c *cache.Cache[cacheSpec, cacheStatus], names ...string) {
	t.Helper()
	r := marksOf(t, c)
	for _, name := range names {
		obj, held := c.Get(name)
		var want objmarks.Marks
		if held {
			want = objmarks.Of(&obj.Meta, obj.Conditions)
		}
		m, loud, at := r.Marks(name)
		require.Equal(t, held && !want.Quiet(), loud, "marks of %s (held: %v) are loud", name, held)
		require.Equal(t, held && want.Fresh(), r.WasFresh(name, at), "%s (held: %v) is fresh", name, held)
		if loud {
			require.Equal(t, want, m, "marks of %s", name)
		} else {
			require.Zero(t, m, "marks of %s", name)
		}
	}
}

// The loud marks a Cache keeps, worked out when it stored each object,
// stay those of the object it serves: from the objects it held when asked
// to keep them, and through creates,
// updates of annotations and conditions, deletions, a value that does not
// decode (the last valid object and its marks stay), a relist that
// changes, drops and recreates objects, and a transform.
func TestCacheMarksAreThoseOfTheObjectItServes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		b := memstore.New()
		st, err := store.New[cacheSpec, cacheStatus](b, "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		names := []string{"plain", "paused", "cond", "gone", "bad", "never"}
		create := func(name string, ann map[string]string, conds ...store.Condition) {
			t.Helper()
			_, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: name, Annotations: ann}, Conditions: conds})
			require.NoError(t, err)
		}
		create("plain", nil)
		create("paused", map[string]string{objmarks.PausedAnnotation: "true"})
		create("cond", nil, store.Condition{Type: "Reconciling", Status: store.ConditionFalse, Reason: "Reconciled", ObservedGeneration: 1})
		create("gone", map[string]string{objmarks.ObserveOnlyAnnotation: "true"})

		c := cache.New(st)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		r, ok := storeaccess.Of(c).(objmarks.Reader)
		require.True(t, ok, "a Cache offers its objects' marks")
		_, loud, _ := r.Marks("paused")
		require.False(t, loud, "a Cache no Loop asked keeps no marks")
		requireMarks(t, c, names...)
		m, loud, _ := r.Marks("paused")
		require.True(t, loud && m.Paused, "the paused object's marks say so")
		_, loud, _ = r.Marks("cond")
		require.False(t, loud, "an object with Reconciling=False is quiet")
		_, loud, at := r.Marks("plain")
		require.False(t, loud, "a new object asks nothing of a Loop before a reconcile: quiet")
		require.True(t, r.WasFresh("plain", at), "the new object is fresh")

		// Updates, a deletion.
		obj, _ := st.Get(ctx, "paused")
		obj.Meta.Annotations = nil
		_, err = w.Update(ctx, obj)
		require.NoError(t, err)
		obj, _ = st.Get(ctx, "plain")
		obj.Meta.Annotations = map[string]string{objmarks.ObserveOnlyAnnotation: "true"}
		_, err = w.Update(ctx, obj)
		require.NoError(t, err)
		obj, _ = st.Get(ctx, "cond")
		obj.Conditions = []store.Condition{{Type: "Reconciling", Status: store.ConditionTrue, Reason: "Progressing"}}
		_, err = w.UpdateStatus(ctx, obj)
		require.NoError(t, err)
		rev, err := w.Delete(ctx, "gone")
		require.NoError(t, err)
		require.NoError(t, c.WaitFor(ctx, rev))
		requireMarks(t, c, names...)
		m, _, _ = r.Marks("plain")
		require.Equal(t, objmarks.Marks{ObserveOnly: true}, m)
		m, _, _ = r.Marks("cond")
		require.Equal(t, objmarks.Marks{Reconciling: true, HasReconciling: true}, m)
		_, loud, _ = r.Marks("gone")
		require.False(t, loud, "a deleted object has no marks")

		// Values that do not decode: cond keeps its last valid object.
		raw := func(key, v string) int64 {
			rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(v)})
			require.NoError(t, err)
			return rev
		}
		raw("Widget/cond", "not json")
		rev = raw("Widget/bad", `{"metadata":{"kind":"Widget","name":"cond","uid":"forged","annotations":{"steady.dev/paused":"true"}}}`)
		require.NoError(t, c.WaitFor(ctx, rev))
		requireMarks(t, c, names...)
		m, _, _ = r.Marks("cond")
		require.True(t, m.Reconciling, "the last valid object's marks stay")

		// A relist that finds paused changed, plain gone and cond recreated.
		l := &store.List[cacheSpec, cacheStatus]{Revision: c.Revision() + 1}
		for _, o := range c.List(nil) {
			cp := *o
			cp.Meta.Revision = l.Revision
			switch o.Meta.Name {
			case "plain":
				continue
			case "paused":
				cp.Meta.Annotations = map[string]string{objmarks.PausedAnnotation: "true"}
			case "cond":
				cp.Meta.UID, cp.Conditions = "recreated", nil
			}
			l.Items = append(l.Items, &cp)
		}
		require.Equal(t, 4, c.ApplyListing(l), "paused changed, plain deleted, cond deleted and added")
		requireMarks(t, c, names...)
		m, _, _ = r.Marks("paused")
		require.Equal(t, objmarks.Marks{Paused: true}, m)
		m, loud, at = r.Marks("cond")
		require.False(t, loud, "the recreated object, not yet observed, is quiet")
		require.Equal(t, objmarks.Marks{}, m)
		require.True(t, r.WasFresh("cond", at), "the recreated object is new")
	})
}

// A transformed object's marks are those of the object as transformed:
// what the Cache serves.
func TestCacheMarksAreThoseOfTheTransformedObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		_, err = st.As("alice").Create(ctx, &cobj{Meta: store.Meta{Name: "a", Annotations: map[string]string{objmarks.PausedAnnotation: "true"}}})
		require.NoError(t, err)
		c := cache.New(st, cache.WithTransform(func(o *cobj) {
			o.Meta.Annotations = map[string]string{objmarks.ObserveOnlyAnnotation: "true"}
		}))
		r := marksOf(t, c)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		requireMarks(t, c, "a")
		m, _, _ := r.Marks("a")
		require.Equal(t, objmarks.Marks{ObserveOnly: true}, m)
	})
}

// WasFresh answers about the object held when Marks stamped its read,
// whatever happened since: an object that was observed, created, deleted,
// recreated or stripped of its conditions after the stamp was, before,
// what it was then; every change of an object counts, each name's
// earliest after the stamp deciding. A stamp taken after the changes
// answers about the objects held now.
func TestCacheWasFreshAnswersAboutTheObjectAsItWasAtTheStamp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		observed := []store.Condition{{Type: "Ready", Status: store.ConditionFalse, Reason: "Waiting", ObservedGeneration: 1}}
		create := func(name string, conds []store.Condition) int64 {
			t.Helper()
			rev, err := w.Create(ctx, &cobj{Meta: store.Meta{Name: name}, Conditions: conds})
			require.NoError(t, err)
			return rev
		}
		setConds := func(name string, conds []store.Condition) int64 {
			t.Helper()
			o, err := st.Get(ctx, name)
			require.NoError(t, err)
			o.Conditions = conds
			rev, err := w.UpdateStatus(ctx, o)
			require.NoError(t, err)
			return rev
		}
		del := func(name string) int64 {
			t.Helper()
			rev, err := w.Delete(ctx, name)
			require.NoError(t, err)
			return rev
		}
		for _, name := range []string{"observed-after", "stripped-after", "deleted-after", "twice", "untouched-new", "untouched-seen"} {
			var conds []store.Condition
			if name == "stripped-after" || name == "untouched-seen" {
				conds = observed
			}
			create(name, conds)
		}
		c := cache.New(st)
		r := marksOf(t, c)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))

		_, _, at := r.Marks("any")
		setConds("observed-after", observed)
		setConds("stripped-after", nil)
		del("deleted-after")
		create("created-after", nil)
		setConds("twice", observed)
		del("twice")
		rev := create("twice", nil)
		require.NoError(t, c.WaitFor(ctx, rev))

		was := map[string]bool{
			"observed-after": true, "stripped-after": false, "deleted-after": true, "created-after": false,
			"twice": true, "untouched-new": true, "untouched-seen": false, "never": false,
		}
		now := map[string]bool{
			"observed-after": false, "stripped-after": true, "deleted-after": false, "created-after": true,
			"twice": true, "untouched-new": true, "untouched-seen": false, "never": false,
		}
		_, _, after := r.Marks("any")
		for name, want := range was {
			require.Equal(t, want, r.WasFresh(name, at), "%s was fresh at the stamp", name)
			require.Equal(t, now[name], r.WasFresh(name, after), "%s is fresh at a stamp taken after", name)
		}
		requireMarks(t, c, slices.Collect(maps.Keys(was))...)
	})
}

// The Cache keeps a bounded record of turns: when more turns than it keeps
// came after a stamp, WasFresh answers about the object held now, as if
// none of them were the name's. An object observed during a reconcile,
// followed by that many other turns, is then judged not new; one that
// turned new again, new.
func TestCacheWasFreshAfterTheRecordOverflowedAnswersAboutTheObjectNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		w := st.As("alice")
		_, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: "a"}})
		require.NoError(t, err)
		c := cache.New(st)
		r := marksOf(t, c)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))

		_, _, at := r.Marks("a")
		o, err := st.Get(ctx, "a")
		require.NoError(t, err)
		o.Conditions = []store.Condition{{Type: "Ready", Status: store.ConditionFalse, Reason: "Waiting", ObservedGeneration: 1}}
		rev, err := w.UpdateStatus(ctx, o)
		require.NoError(t, err)
		require.NoError(t, c.WaitFor(ctx, rev))
		_, _, now := r.Marks("a")
		require.False(t, r.WasFresh("a", now), "a is observed now")
		// Turns kept, less the one of a: the record still holds a's.
		l := &store.List[cacheSpec, cacheStatus]{}
		for i := range cache.TurnsKept - 1 {
			l.Items = append(l.Items, &cobj{Meta: store.Meta{Name: fmt.Sprintf("new-%04d", i), UID: "u", Revision: 1}})
		}
		cur, _ := c.Get("a")
		l.Items = append(l.Items, cur)
		slices.SortFunc(l.Items, func(a, b *cobj) int { return strings.Compare(a.Meta.Name, b.Meta.Name) })
		l.Revision = c.Revision() + 1
		c.ApplyListing(l)
		require.True(t, r.WasFresh("a", at), "every turn since the stamp kept: a was new")

		// One more turn: the record lost a's.
		l.Items = slices.DeleteFunc(l.Items, func(o *cobj) bool { return o.Meta.Name == "new-0000" })
		l.Revision++
		c.ApplyListing(l)
		require.False(t, r.WasFresh("a", at), "a turn since the stamp lost: a is judged as it is now")

		// a turns new again: its turn lands where the lost ones were, and
		// still the object held now answers.
		l.Revision++
		for i, o := range l.Items {
			if o.Meta.Name == "a" {
				cp := *o
				cp.Conditions, cp.Meta.Revision = nil, l.Revision
				l.Items[i] = &cp
			}
		}
		c.ApplyListing(l)
		require.True(t, r.WasFresh("a", at), "turns since the stamp lost: a is judged as it is now, new")
	})
}
