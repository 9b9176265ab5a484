package cache_test

import (
	"reflect"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// fleetApp is an object of a fleet: its name aside, what every other one
// has (one selector, one list of arguments, the same writer).
func fleetApp(name string) *appObj {
	return &appObj{Meta: store.Meta{Name: name, Labels: map[string]string{"app": "web", "tier": "front"}},
		Spec: appSpec{Replicas: 1, Args: []string{"--port=80", "--v=2"}, Selector: map[string]string{"app": "web"}}}
}

func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sharesAll reports whether x and y share their ownership records, their
// labels and their Spec's list and map.
func sharesAll(x, y *appObj) bool {
	return &x.Meta.Managed[0] == &y.Meta.Managed[0] && sameMap(x.Meta.Labels, y.Meta.Labels) &&
		&x.Spec.Args[0] == &y.Spec.Args[0] && sameMap(x.Spec.Selector, y.Spec.Selector)
}

// TestCacheObjectsOfAFleetShareWhatTheyHaveEqual: the objects of a Cache
// without a transform are shared and read-only, and objects of different
// names share their equal ownership records and labels and their Spec's
// equal lists and maps of strings, whether a listing (on one page or on several) or
// the watch decoded them, and
// after the watched Store's own status writes, which add a manager's
// record to each: a fleet's objects then cost one copy of what they repeat.
// A caller that changes what they share is reported for every object that
// shares it, and a Store's own reads share nothing.
func TestCacheObjectsOfAFleetShareWhatTheyHaveEqual(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, other := watchedAndOther(t)
		alice := other.As("alice")
		for _, name := range []string{"a", "b"} {
			_, err := alice.Create(ctx, fleetApp(name))
			require.NoError(t, err)
		}
		var mu sync.Mutex
		var modified []string
		// A page per object: a listing's pages share too.
		c := cache.New(st, cache.WithPageSize(1), cache.WithMutationDetector(func(err error) {
			var m *cache.MutationError
			require.ErrorAs(t, err, &m)
			mu.Lock()
			modified = append(modified, m.Name)
			mu.Unlock()
		}))
		stop := startApps(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		for _, name := range []string{"c", "d"} {
			rev, err := alice.Create(ctx, fleetApp(name))
			require.NoError(t, err)
			require.NoError(t, c.WaitFor(ctx, rev))
		}
		get := func(name string) *appObj {
			o, ok := c.Get(name)
			require.True(t, ok, name)
			return o
		}
		require.True(t, sharesAll(get("a"), get("b")), "listed")
		require.True(t, sharesAll(get("c"), get("d")), "watched")

		ctl := st.As("ctl")
		for _, name := range []string{"a", "b", "c", "d"} {
			rev, err := ctl.ApplyStatus(ctx, name, appStatus{Ready: 1}, nil)
			require.NoError(t, err)
			require.NoError(t, c.WaitFor(ctx, rev.Revision))
			stored, err := other.Get(ctx, name)
			require.NoError(t, err)
			require.Equal(t, stored, get(name), "the object stored")
		}
		require.Len(t, get("a").Meta.Managed, 2, "alice's record and ctl's")
		// The watch and the listings remember apart what they handed out:
		// the labels the listing decoded and those the watch did are two
		// maps; the records of the status writes are the watch's. A status
		// write's event keeps the Spec of the object it was written over
		// (the listing's lists and maps) when the Cache's goroutine decodes
		// it before the writer has remembered its write, and decodes it
		// with the watch's otherwise: the two goroutines race, so a fleet
		// holds at most two copies of what it repeats, never one per
		// object.
		fleet := []*appObj{get("a"), get("b"), get("c"), get("d")}
		args := map[*string]bool{}
		selectors := map[any]bool{}
		for _, o := range fleet {
			require.True(t, &o.Meta.Managed[0] == &fleet[0].Meta.Managed[0], "%s: the records after a status write of each", o.Meta.Name)
			args[&o.Spec.Args[0]] = true
			selectors[reflect.ValueOf(o.Spec.Selector).UnsafePointer()] = true
		}
		require.True(t, sameMap(fleet[0].Meta.Labels, fleet[1].Meta.Labels) && sameMap(fleet[2].Meta.Labels, fleet[3].Meta.Labels),
			"the labels after a status write of each")
		require.LessOrEqual(t, len(args), 2, "the Spec's lists after a status write of each")
		require.LessOrEqual(t, len(selectors), 2, "the Spec's maps after a status write of each")

		// A Store's reads are the caller's own.
		x, err := st.Get(ctx, "a")
		require.NoError(t, err)
		y, err := st.Get(ctx, "b")
		require.NoError(t, err)
		l, err := st.List(ctx, store.ListOptions{})
		require.NoError(t, err)
		sharesAny := func(x, y *appObj) bool {
			return &x.Meta.Managed[0] == &y.Meta.Managed[0] || sameMap(x.Meta.Labels, y.Meta.Labels) ||
				&x.Spec.Args[0] == &y.Spec.Args[0] || sameMap(x.Spec.Selector, y.Spec.Selector)
		}
		require.False(t, sharesAny(x, y), "Get")
		require.False(t, sharesAny(l.Items[0], l.Items[1]), "List")

		require.NoError(t, c.Check())
		get("a").Spec.Selector["tier"] = "front" // a caller's fault
		err = c.Check()
		var m *cache.MutationError
		require.ErrorAs(t, err, &m)
		for _, o := range fleet {
			if sameMap(o.Spec.Selector, fleet[0].Spec.Selector) {
				require.ErrorContains(t, err, `"`+o.Meta.Name+`"`, "every object that shares the map")
			} else {
				require.NotContains(t, err.Error(), `"`+o.Meta.Name+`"`, "an object with a map of its own")
			}
		}
		delete(get("a").Spec.Selector, "tier")
		require.NoError(t, c.Check())
		mu.Lock()
		require.Empty(t, modified)
		mu.Unlock()
	})
}

// TestCacheWithATransformSharesNothingBetweenObjects: a transform changes
// the objects it is given in place, each its own (see WithTransform): its
// change to one object's maps and list shows in no other, listed or
// watched.
func TestCacheWithATransformSharesNothingBetweenObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		mem := memstore.New()
		st, err := store.New[appSpec, appStatus](mem, "App")
		require.NoError(t, err)
		alice := st.As("alice")
		for _, name := range []string{"a", "b"} {
			_, err = alice.Create(ctx, fleetApp(name))
			require.NoError(t, err)
		}
		c := cache.New(st, cache.WithMutationDetector(func(err error) { t.Error(err) }),
			cache.WithTransform(func(o *appObj) {
				o.Meta.Labels["name"] = o.Meta.Name
				o.Spec.Selector["name"] = o.Meta.Name
				o.Spec.Args[0] = o.Meta.Name
			}))
		stop := startApps(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		for _, name := range []string{"c", "d"} {
			rev, err := alice.Create(ctx, fleetApp(name))
			require.NoError(t, err)
			require.NoError(t, c.WaitFor(ctx, rev))
		}
		for _, name := range []string{"a", "b", "c", "d"} {
			o, ok := c.Get(name)
			require.True(t, ok)
			require.Equal(t, map[string]string{"app": "web", "tier": "front", "name": name}, o.Meta.Labels, name)
			require.Equal(t, map[string]string{"app": "web", "name": name}, o.Spec.Selector, name)
			require.Equal(t, []string{name, "--v=2"}, o.Spec.Args, name)
		}
		require.NoError(t, c.Check())
	})
}
