package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// The objects a Store returns are the caller's, and the objects a caller
// passes to a write stay the caller's: whatever the caller does with them
// afterwards, the Store's memory of values (WithLastValues) never changes
// with them, so a later write computes from what is stored.

type aSpec struct {
	Image string
	Env   map[string]string
	Args  []string
}

type aStatus struct {
	Ready  bool
	Phases []string
	Notes  map[string]string
}

type aliasObj = store.Object[aSpec, aStatus]

func newAliasStores(t *testing.T) map[string]*store.Store[aSpec, aStatus] {
	t.Helper()
	stores := map[string]*store.Store[aSpec, aStatus]{}
	for name, opts := range map[string][]store.Option{
		"remembering": nil,
		"forgetting":  {store.WithLastValues(0)},
	} {
		st, err := store.New[aSpec, aStatus](memstore.New(), "Widget", opts...)
		require.NoError(t, err)
		stores[name] = st
	}
	return stores
}

// A caller that edits the object it wrote, in place (its maps and
// slices), and passes it to Update again, as controller-runtime code does
// with the object it fetched, gets its second edit stored too.
func TestMisuseEditingTheWrittenObjectInPlaceAndUpdatingAgainStoresTheEdit(t *testing.T) {
	ctx := context.Background()
	for name, st := range newAliasStores(t) {
		t.Run(name, func(t *testing.T) {
			w := st.As("user")
			obj := &aliasObj{
				Meta: store.Meta{Name: "a", Labels: map[string]string{"app": "one"}},
				Spec: aSpec{Image: "img", Env: map[string]string{"A": "1"}, Args: []string{"x"}},
			}
			_, err := w.Create(ctx, obj)
			require.NoError(t, err)

			obj.Meta.Labels["app"] = "two"
			obj.Spec.Env["A"] = "2"
			obj.Spec.Args[0] = "y"
			_, err = w.Update(ctx, obj)
			require.NoError(t, err)
			got, err := st.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, "two", got.Meta.Labels["app"])
			require.Equal(t, "2", got.Spec.Env["A"])
			require.Equal(t, []string{"y"}, got.Spec.Args)

			// The same object, edited in place once more.
			obj.Meta.Labels["app"] = "three"
			obj.Spec.Env["A"] = "3"
			obj.Spec.Args[0] = "z"
			_, err = w.Update(ctx, obj)
			require.NoError(t, err)
			got, err = st.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, "three", got.Meta.Labels["app"])
			require.Equal(t, "3", got.Spec.Env["A"])
			require.Equal(t, []string{"z"}, got.Spec.Args)
			require.Equal(t, int64(3), got.Meta.Generation)
		})
	}
}

// The same for the status side: UpdateStatus of one object edited in place
// twice stores both edits, and so does an Update of its labels, edited in
// place after each status write.
func TestMisuseEditingTheWrittenStatusInPlaceAndUpdatingAgainStoresTheEdit(t *testing.T) {
	ctx := context.Background()
	for name, st := range newAliasStores(t) {
		t.Run(name, func(t *testing.T) {
			w := st.As("user")
			obj := &aliasObj{
				Meta:   store.Meta{Name: "a", Labels: map[string]string{"app": "1"}},
				Status: aStatus{Phases: []string{"p"}, Notes: map[string]string{"n": "1"}},
			}
			_, err := w.Create(ctx, obj)
			require.NoError(t, err)
			for _, v := range []string{"2", "3"} {
				obj.Status.Phases[0] = "p" + v
				obj.Status.Notes["n"] = v
				_, err = w.UpdateStatus(ctx, obj)
				require.NoError(t, err)
				got, err := st.Get(ctx, "a")
				require.NoError(t, err)
				require.Equal(t, []string{"p" + v}, got.Status.Phases)
				require.Equal(t, v, got.Status.Notes["n"])
				// Then the labels of the same object, in place.
				obj.Meta.Labels["app"] = v
				_, err = w.Update(ctx, obj)
				require.NoError(t, err)
				got, err = st.Get(ctx, "a")
				require.NoError(t, err)
				require.Equal(t, v, got.Meta.Labels["app"])
			}
		})
	}
}

// An object from Get or List, edited in place and never written, changes
// nothing the Store holds: the next Get, and a write computed from the
// Store's memory, see the stored value.
func TestMisuseEditingAReadObjectWithoutWritingChangesNothingStored(t *testing.T) {
	ctx := context.Background()
	for name, st := range newAliasStores(t) {
		t.Run(name, func(t *testing.T) {
			w := st.As("user")
			_, err := w.Create(ctx, &aliasObj{
				Meta:   store.Meta{Name: "a", Labels: map[string]string{"app": "one"}},
				Spec:   aSpec{Env: map[string]string{"A": "1"}, Args: []string{"x"}},
				Status: aStatus{Notes: map[string]string{"n": "1"}},
			})
			require.NoError(t, err)
			got, err := st.Get(ctx, "a")
			require.NoError(t, err)
			list, err := st.List(ctx, store.ListOptions{})
			require.NoError(t, err)
			require.Len(t, list.Items, 1)
			for _, o := range []*aliasObj{got, list.Items[0]} {
				o.Meta.Labels["app"] = "scribbled"
				o.Spec.Env["A"] = "scribbled"
				o.Spec.Args[0] = "scribbled"
				o.Status.Notes["n"] = "scribbled"
			}
			again, err := st.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, "one", again.Meta.Labels["app"])
			require.Equal(t, "1", again.Spec.Env["A"])
			require.Equal(t, []string{"x"}, again.Spec.Args)
			require.Equal(t, "1", again.Status.Notes["n"])

			// A write of the scribbled object's status, from the Store's
			// memory, stores the status it names and keeps the stored spec.
			_, err = w.UpdateStatus(ctx, got)
			require.NoError(t, err)
			again, err = st.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, "scribbled", again.Status.Notes["n"])
			require.Equal(t, "1", again.Spec.Env["A"])
			require.Equal(t, "one", again.Meta.Labels["app"])
		})
	}
}

// Watch's objects are fresh copies its reader owns: two watchers of one
// Store never share an event's maps, and a writer that edits the object it
// wrote, after the write, changes no watcher's event.
func TestMisuseWatchEventsAreTheReadersOwn(t *testing.T) {
	for name, st := range newAliasStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := st.As("user")
			first, err := st.Watch(ctx, 0)
			require.NoError(t, err)
			second, err := st.Watch(ctx, 0)
			require.NoError(t, err)

			obj := &aliasObj{
				Meta:   store.Meta{Name: "a", Labels: map[string]string{"app": "one"}},
				Spec:   aSpec{Env: map[string]string{"A": "1"}, Args: []string{"x"}},
				Status: aStatus{Notes: map[string]string{"n": "1"}},
			}
			_, err = w.Create(ctx, obj)
			require.NoError(t, err)
			obj.Meta.Labels["app"] = "writer"
			obj.Spec.Env["A"] = "writer"
			obj.Spec.Args[0] = "writer"
			obj.Status.Notes["n"] = "writer"

			ev := <-first
			require.Equal(t, store.Added, ev.Type)
			require.Equal(t, "one", ev.Object.Meta.Labels["app"])
			require.Equal(t, "1", ev.Object.Spec.Env["A"])
			require.Equal(t, []string{"x"}, ev.Object.Spec.Args)
			require.Equal(t, "1", ev.Object.Status.Notes["n"])
			ev.Object.Meta.Labels["app"] = "first"
			ev.Object.Spec.Env["A"] = "first"
			ev.Object.Spec.Args[0] = "first"
			ev.Object.Status.Notes["n"] = "first"

			ev2 := <-second
			require.Equal(t, "one", ev2.Object.Meta.Labels["app"])
			require.Equal(t, "1", ev2.Object.Spec.Env["A"])
			require.Equal(t, []string{"x"}, ev2.Object.Spec.Args)
			require.Equal(t, "1", ev2.Object.Status.Notes["n"])

			// A status write: the event's Prev and Object are the reader's
			// too, and neither is the other's.
			got, err := st.Get(ctx, "a")
			require.NoError(t, err)
			got.Status.Notes["n"] = "2"
			_, err = w.UpdateStatus(ctx, got)
			require.NoError(t, err)
			got.Spec.Env["A"] = "writer"
			got.Status.Notes["n"] = "writer"
			ev = <-first
			require.Equal(t, store.Modified, ev.Type)
			require.Equal(t, "2", ev.Object.Status.Notes["n"])
			require.Equal(t, "1", ev.Prev.Status.Notes["n"])
			require.Equal(t, "1", ev.Object.Spec.Env["A"])
			ev.Object.Spec.Env["A"] = "first"
			ev.Object.Meta.Labels["app"] = "first"
			require.Equal(t, "1", ev.Prev.Spec.Env["A"], "Prev shares the Spec's map with Object")
			require.Equal(t, "one", ev.Prev.Meta.Labels["app"], "Prev shares the labels with Object")
			ev2 = <-second
			require.Equal(t, "1", ev2.Object.Spec.Env["A"])
			require.Equal(t, "one", ev2.Object.Meta.Labels["app"])
			require.Equal(t, "1", ev2.Prev.Spec.Env["A"])
		})
	}
}

// A write that changes nothing still leaves the caller's object its own:
// a caller that writes an object unchanged (a level-triggered pass with
// nothing to do), then edits it in place and writes it again, gets the
// edit stored.
func TestMisuseEditingInPlaceAfterAWriteThatChangedNothingStoresTheEdit(t *testing.T) {
	ctx := context.Background()
	for name, st := range newAliasStores(t) {
		t.Run(name, func(t *testing.T) {
			w := st.As("user")
			_, err := w.Create(ctx, &aliasObj{
				Meta:   store.Meta{Name: "a", Labels: map[string]string{"app": "0"}, Annotations: map[string]string{"n": "0"}},
				Status: aStatus{Notes: map[string]string{"n": "0"}},
			})
			require.NoError(t, err)
			obj, err := st.Get(ctx, "a")
			require.NoError(t, err)
			for _, v := range []string{"1", "2", "3"} {
				rev := obj.Meta.Revision
				_, err = w.Update(ctx, obj) // nothing to change
				require.NoError(t, err)
				require.Equal(t, rev, obj.Meta.Revision)
				_, err = w.UpdateStatus(ctx, obj) // nothing to change
				require.NoError(t, err)
				require.Equal(t, rev, obj.Meta.Revision)

				obj.Meta.Labels["app"] = v
				obj.Meta.Annotations["n"] = v
				_, err = w.Update(ctx, obj)
				require.NoError(t, err)
				require.Greater(t, obj.Meta.Revision, rev, "the edit was written")
				got, err := st.Get(ctx, "a")
				require.NoError(t, err)
				require.Equal(t, v, got.Meta.Labels["app"])
				require.Equal(t, v, got.Meta.Annotations["n"])
			}
		})
	}
}

// Two Stores over one Backend, one remembering values and one not, writing
// the same keys: what one remembers is stale after the other's write, and
// no write of either is computed from a value it did not see. Every write
// lands on the stored object or fails with ErrConflict, whichever Store
// wrote last.
func TestMisuseTwoStoresOverOneBackendNeverWriteFromAStaleMemory(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	remembering, err := store.New[aSpec, aStatus](mem, "Widget")
	require.NoError(t, err)
	forgetting, err := store.New[aSpec, aStatus](mem, "Widget", store.WithLastValues(0))
	require.NoError(t, err)
	r, f := remembering.As("r"), forgetting.As("f")

	_, err = r.Create(ctx, &aliasObj{Meta: store.Meta{Name: "a", Labels: map[string]string{"by": "r"}}, Spec: aSpec{Image: "1"}})
	require.NoError(t, err)
	seen, err := remembering.Get(ctx, "a")
	require.NoError(t, err)

	// The other Store changes the labels behind the first one's back.
	other, err := forgetting.Get(ctx, "a")
	require.NoError(t, err)
	other.Meta.Labels["by"] = "f"
	other.Meta.Finalizers = []string{"f/keep"}
	_, err = f.Update(ctx, other)
	require.NoError(t, err)

	// An Update from the remembered read conflicts, and writes nothing.
	seen.Spec.Image = "2"
	_, err = r.Update(ctx, seen)
	require.ErrorIs(t, err, store.ErrConflict)
	// An UpdateStatus from it is a labels-only change behind it: it lands,
	// and keeps the other Store's labels and finalizer.
	seen.Status.Ready = true
	_, err = r.UpdateStatus(ctx, seen)
	require.NoError(t, err)
	got, err := forgetting.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "1", got.Spec.Image)
	require.True(t, got.Status.Ready)
	require.Equal(t, "f", got.Meta.Labels["by"])
	require.Equal(t, []string{"f/keep"}, got.Meta.Finalizers)

	// The other Store writes again; Apply and ApplyStatus, which name no
	// revision, merge with what is stored, not with the memory.
	got.Spec.Env = map[string]string{"F": "1"}
	_, err = f.Update(ctx, got)
	require.NoError(t, err)
	got.Status.Notes = map[string]string{"f": "1"}
	_, err = f.UpdateStatus(ctx, got)
	require.NoError(t, err)
	_, err = r.Apply(ctx, "a", map[string]any{"Image": "3"})
	require.NoError(t, err)
	_, err = r.ApplyStatus(ctx, "a", map[string]any{"Phases": []string{"r"}}, nil)
	require.NoError(t, err)
	got, err = forgetting.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "3", got.Spec.Image)
	require.Equal(t, map[string]string{"F": "1"}, got.Spec.Env)
	require.Equal(t, map[string]string{"f": "1"}, got.Status.Notes)
	require.Equal(t, []string{"r"}, got.Status.Phases)
	require.Equal(t, []string{"f/keep"}, got.Meta.Finalizers)

	// A Delete by the remembering Store after the other one added a
	// finalizer it never saw only marks the object.
	_, err = r.Create(ctx, &aliasObj{Meta: store.Meta{Name: "b"}})
	require.NoError(t, err)
	b, err := forgetting.Get(ctx, "b")
	require.NoError(t, err)
	b.Meta.Finalizers = []string{"f/keep"}
	_, err = f.Update(ctx, b)
	require.NoError(t, err)
	_, err = r.Delete(ctx, "b")
	require.NoError(t, err)
	b, err = forgetting.Get(ctx, "b")
	require.NoError(t, err, "a Delete from a stale memory removed an object with a finalizer")
	require.True(t, b.Meta.DeletionRequested)

	// A deletion and a re-creation behind the remembering Store's back: its
	// status write for the old object conflicts on the UID.
	old, err := remembering.Get(ctx, "a")
	require.NoError(t, err)
	_, err = f.Purge(ctx, "a", 0)
	require.NoError(t, err)
	_, err = f.Create(ctx, &aliasObj{Meta: store.Meta{Name: "a"}, Spec: aSpec{Image: "new"}})
	require.NoError(t, err)
	old.Status.Ready = false
	old.Status.Notes = map[string]string{"r": "old"}
	_, err = r.UpdateStatus(ctx, old)
	require.ErrorIs(t, err, store.ErrConflict)
	_, err = r.ApplyStatus(ctx, "a", map[string]any{"Ready": true}, nil, store.WithObserved(old.Meta))
	require.ErrorIs(t, err, store.ErrConflict)
	got, err = forgetting.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "new", got.Spec.Image)
	require.Equal(t, aStatus{}, got.Status)
}

// rawPut writes value at key behind every Store's back.
func rawPut(t *testing.T, b kv.Backend, key, value string) int64 {
	t.Helper()
	rev, err := b.Txn(context.Background(), nil, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(value)})
	require.NoError(t, err)
	return rev
}

// A value made undecodable behind the back of a Store that remembers the
// object as it was (not JSON, null, metadata of the wrong shape, kind or
// name) is never written over from that memory: Update, status writes,
// applies and Delete of it fail with the *DecodeError (or ErrConflict, for
// a write at the old revision), the bad value stays until Purge, and the
// Store's other objects read and write as before.
func TestMisuseAValueMadeUndecodableBehindARememberingStoreIsNotWrittenOver(t *testing.T) {
	ctx := context.Background()
	for name, st := range newAliasStores(t) {
		t.Run(name, func(t *testing.T) {
			w := st.As("user")
			for _, n := range []string{"a", "b"} {
				_, err := w.Create(ctx, &aliasObj{Meta: store.Meta{Name: n}, Spec: aSpec{Image: "1"}})
				require.NoError(t, err)
			}
			seen, err := st.Get(ctx, "a")
			require.NoError(t, err)
			for i, bad := range []string{`{"metadata": 7}`, `not json`, `null`, `{"metadata":{"kind":"Other","name":"a"}}`, `{"metadata":{"kind":"Widget","name":"real"}}`} {
				rev := rawPut(t, st.Backend(), "Widget/a", bad)
				requireBad := func(err error, what string) {
					t.Helper()
					require.Error(t, err, "%s over %q", what, bad)
					var de *store.DecodeError
					if !errors.As(err, &de) {
						require.ErrorIs(t, err, store.ErrConflict, "%s over %q", what, bad)
					}
					raw, err := st.Backend().Get(ctx, "Widget/a")
					require.NoError(t, err)
					require.Equal(t, bad, string(raw.Value), "%s over %q wrote over it", what, bad)
					require.Equal(t, rev, raw.ModRevision)
				}
				next := *seen
				next.Spec.Image = fmt.Sprint("u", i)
				_, err = w.Update(ctx, &next)
				requireBad(err, "Update")
				next = *seen
				next.Status.Ready = true
				_, err = w.UpdateStatus(ctx, &next)
				requireBad(err, "UpdateStatus")
				_, err = w.Apply(ctx, "a", map[string]any{"Image": "apply"})
				requireBad(err, "Apply")
				_, err = w.ApplyStatus(ctx, "a", map[string]any{"Ready": true}, nil)
				requireBad(err, "ApplyStatus")
				_, err = w.Delete(ctx, "a")
				requireBad(err, "Delete")

				_, err = st.Get(ctx, "a")
				var de *store.DecodeError
				require.ErrorAs(t, err, &de)
				require.ErrorIs(t, err, store.ErrInvalid)
				list, err := st.List(ctx, store.ListOptions{})
				require.NoError(t, err)
				require.Len(t, list.Items, 1)
				require.Equal(t, "b", list.Items[0].Meta.Name)
				require.Len(t, list.Undecodable, 1)
				// The rest goes on.
				b, err := st.Get(ctx, "b")
				require.NoError(t, err)
				b.Spec.Image = fmt.Sprint("b", i)
				_, err = w.Update(ctx, b)
				require.NoError(t, err)
			}
			_, err = w.Purge(ctx, "a", 0)
			require.NoError(t, err)
			_, err = w.Create(ctx, &aliasObj{Meta: store.Meta{Name: "a"}, Spec: aSpec{Image: "again"}})
			require.NoError(t, err)
		})
	}
}

// A value whose strings hold invalid UTF-8, written behind the Store's
// back, reads as encoding/json reads it (each bad byte U+FFFD), through
// Get, List and Watch alike: both as the Store writes values (its own
// decoder reads them) and in another shape (encoding/json reads it).
func TestMisuseInvalidUTF8InAStoredValueReadsAsEncodingJSONReadsIt(t *testing.T) {
	bad := strings.NewReplacer("LBL", "x\xffy", "IMG", "i\xc3", "KEY", "k\xfe", "ARG", "\xed\xa0\x80", "NOTE", "\xff")
	for name, st := range newAliasStores(t) {
		// The Store's own shape: an object it wrote, its strings then
		// spliced with invalid bytes.
		w := st.As("user")
		_, err := w.Create(context.Background(), &aliasObj{
			Meta:   store.Meta{Name: "written", Labels: map[string]string{"l": "LBL"}},
			Spec:   aSpec{Image: "IMG", Env: map[string]string{"KEY": "v"}, Args: []string{"ARG"}},
			Status: aStatus{Notes: map[string]string{"n": "NOTE"}},
		})
		require.NoError(t, err)
		kv, err := st.Backend().Get(context.Background(), "Widget/written")
		require.NoError(t, err)
		values := map[string]string{
			"written": bad.Replace(string(kv.Value)),
			"other": bad.Replace(`{"metadata":{"kind":"Widget","name":"other","uid":"u","labels":{"l":"LBL"},"generation":1},` +
				`"spec":{"Image":"IMG","Env":{"KEY":"v"},"Args":["ARG"]},"status":{"Notes":{"n":"NOTE"}},"conditions":null}`),
		}
		for obj, value := range values {
			t.Run(name+"/"+obj, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				events, err := st.Watch(ctx, 0)
				require.NoError(t, err)
				rawPut(t, st.Backend(), "Widget/"+obj, value)
				var want aliasObj
				require.NoError(t, json.Unmarshal([]byte(value), &want))
				require.Equal(t, "x\uFFFDy", want.Meta.Labels["l"])

				got, err := st.Get(ctx, obj)
				require.NoError(t, err)
				list, err := st.List(ctx, store.ListOptions{})
				require.NoError(t, err)
				var listed *aliasObj
				for _, o := range list.Items {
					if o.Meta.Name == obj {
						listed = o
					}
				}
				require.NotNil(t, listed)
				var watched *aliasObj
				for watched == nil {
					ev := <-events
					require.NotNil(t, ev.Object, "%v", ev.Undecodable)
					if ev.Object.Meta.Name == obj && ev.Object.Meta.Revision == got.Meta.Revision {
						watched = ev.Object
					}
				}
				for what, o := range map[string]*aliasObj{"Get": got, "List": listed, "Watch": watched} {
					require.Equal(t, want.Meta.Labels, o.Meta.Labels, what)
					require.Equal(t, want.Spec, o.Spec, what)
					require.Equal(t, want.Status, o.Status, what)
				}
			})
		}
	}
}
