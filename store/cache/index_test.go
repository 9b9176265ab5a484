package cache_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

func TestCacheIndexes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		web := map[string]string{"app": "web", "tier": "front"}
		db := map[string]string{"app": "db"}
		src := newScripted(10,
			mkObj("a", "ua", 3, web, "owner1"),
			mkObj("b", "ub", 4, web, "owner1", "owner2"),
			mkObj("c", "uc", 5, db, "owner2"),
			mkObj("d", "ud", 6, nil))
		c := cache.New(src)
		require.NoError(t, c.AddLabelIndex("app"), "an index added before Run")
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		// An index added after the first listing is built over the contents.
		require.NoError(t, c.AddIndex("image", func(o *cobj) []string {
			if o.Spec.Image == "" {
				return []string{"none", "none"} // duplicates count once
			}
			return []string{o.Spec.Image}
		}))

		require.Equal(t, []string{"a", "b"}, objNames(c.ByIndex(cache.IndexOwnerUID, "owner1")))
		require.Equal(t, []string{"b", "c"}, objNames(c.ByIndex(cache.IndexOwnerUID, "owner2")))
		require.Equal(t, []string{"a", "b"}, objNames(c.ByLabel("app", "web")), "indexed")
		require.Equal(t, []string{"a", "b"}, objNames(c.ByLabel("tier", "front")), "scanned")
		require.Equal(t, []string{"a", "b", "c", "d"}, objNames(c.ByIndex("image", "none")))
		require.Nil(t, c.ByIndex("no such index", "x"))
		require.Nil(t, c.ByIndex(cache.IndexOwnerUID, "nobody"))

		// Changes move objects between index values.
		w := <-src.streams
		a, _ := c.Get("a")
		a2 := mkObj("a", "ua", 11, db, "owner2")
		a2.Spec.Image = "nginx"
		w.send(evModified(a, a2))
		b, _ := c.Get("b")
		w.send(evDeleted(b, 12))
		synctest.Wait()
		require.Nil(t, c.ByIndex(cache.IndexOwnerUID, "owner1"))
		require.Equal(t, []string{"a", "c"}, objNames(c.ByIndex(cache.IndexOwnerUID, "owner2")))
		require.Equal(t, []string{"a", "c"}, objNames(c.ByLabel("app", "db")))
		require.Empty(t, c.ByLabel("app", "web"))
		require.Equal(t, []string{"a"}, objNames(c.ByIndex("image", "nginx")))
		require.Equal(t, []string{"c", "d"}, objNames(c.ByIndex("image", "none")))

		for _, bad := range []struct {
			name string
			fn   cache.IndexFunc[cacheSpec, cacheStatus]
		}{
			{"", func(*cobj) []string { return nil }},
			{"x", nil},
			{cache.IndexOwnerUID, func(*cobj) []string { return nil }},
			{cache.LabelIndexName("app"), func(*cobj) []string { return nil }},
		} {
			require.ErrorIs(t, c.AddIndex(bad.name, bad.fn), store.ErrInvalid, "AddIndex(%q)", bad.name)
		}
	})
}

// A value that files many objects switches from a slice to a map; adding
// and removing across that boundary keeps the index exact.
func TestCacheIndexLargeValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var objs []*cobj
		var want []string
		for i := range 40 {
			name := string(rune('a'+i/26)) + string(rune('a'+i%26))
			objs = append(objs, mkObj(name, "u"+name, int64(i+1), nil, "boss"))
			want = append(want, name)
		}
		src := newScripted(100, objs...)
		c := cache.New(src)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(t.Context()))
		require.Equal(t, want, objNames(c.ByIndex(cache.IndexOwnerUID, "boss")))

		w := <-src.streams
		for i, o := range objs[:30] {
			cur, _ := c.Get(o.Meta.Name)
			w.send(evDeleted(cur, int64(101+i)))
		}
		synctest.Wait()
		require.Equal(t, want[30:], objNames(c.ByIndex(cache.IndexOwnerUID, "boss")))
		for i, o := range objs[:5] {
			w.send(evAdded(mkObj(o.Meta.Name, "new"+o.Meta.Name, int64(200+i), nil, "boss")))
		}
		synctest.Wait()
		require.Equal(t, slices.Concat(want[:5], want[30:]), objNames(c.ByIndex(cache.IndexOwnerUID, "boss")))
	})
}

// The owner index (IndexOwnerUID) files each object under its owners'
// UIDs through every change, whether or not it moved Meta.Owners
// (reindexLocked skips the index for a change that keeps them): after each
// of many random creations, changes of spec, changes of owners (the same
// number of owners, other UIDs, another order) and deletions, ByIndex
// gives, for every UID, the cached objects a scan finds.
func TestOwnerIndexFollowsRandomChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[cacheSpec, cacheStatus](memstore.New(), "Widget")
		require.NoError(t, err)
		c := cache.New[cacheSpec, cacheStatus](st)
		stop := startCache(t, c)
		defer stop()
		require.NoError(t, c.WaitForSync(ctx))
		uids := []string{"u0", "u1", "u2", "u3"}
		r := rand.New(rand.NewPCG(7, 26))
		owners := func() []store.OwnerRef {
			var out []store.OwnerRef
			for _, i := range r.Perm(len(uids))[:r.IntN(3)] {
				out = append(out, store.OwnerRef{Kind: "Set", Name: "set-" + uids[i], UID: uids[i]})
			}
			return out
		}
		w := st.As("alice")
		for step := range 400 {
			name := fmt.Sprintf("w%d", r.IntN(12))
			o, err := st.Get(ctx, name)
			var rev int64
			switch {
			case errors.Is(err, store.ErrNotFound):
				rev, err = w.Create(ctx, &cobj{Meta: store.Meta{Name: name, Owners: owners()}})
			case err != nil:
			case r.IntN(5) == 0:
				rev, err = w.Delete(ctx, name)
			case r.IntN(2) == 0:
				o.Spec.Replicas++
				rev, err = w.Update(ctx, o)
			default:
				o.Meta.Owners = owners()
				rev, err = w.Update(ctx, o)
			}
			require.NoError(t, err, "step %d", step)
			require.NoError(t, c.WaitFor(ctx, rev))
			for _, uid := range uids {
				want := []string{}
				for _, obj := range c.List(nil) {
					if slices.ContainsFunc(obj.Meta.Owners, func(o store.OwnerRef) bool { return o.UID == uid }) {
						want = append(want, obj.Meta.Name)
					}
				}
				require.Equal(t, want, objNames(c.ByIndex(cache.IndexOwnerUID, uid)), "step %d, owner %s", step, uid)
			}
		}
	})
}
