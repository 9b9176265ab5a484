package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

// The kind of these tests at two versions. v2 renamed v1's image to
// containerImage and added replicas to the spec and message to the status.
// v2 is the hub.
type (
	specV1 struct {
		Image string `json:"image"`
	}
	statusV1 struct {
		Ready bool `json:"ready"`
	}
	specV2 struct {
		ContainerImage string `json:"containerImage"`
		Replicas       int    `json:"replicas,omitempty"`
	}
	statusV2 struct {
		Ready   bool   `json:"ready"`
		Message string `json:"message,omitempty"`
	}
)

func widgetVersions(t testing.TB, storage string) *store.Versions {
	t.Helper()
	v1 := store.VersionOf("v1", store.Conversion[specV1, statusV1, specV2, statusV2]{
		ToHub: func(s specV1, st statusV1) (specV2, statusV2, error) {
			return specV2{ContainerImage: s.Image}, statusV2{Ready: st.Ready}, nil
		},
		FromHub: func(s specV2, st statusV2) (specV1, statusV1, error) {
			return specV1{Image: s.ContainerImage}, statusV1{Ready: st.Ready}, nil
		},
		Renames: []store.Rename{{From: "spec.image", To: "spec.containerImage"}},
	})
	v2 := store.VersionOf("v2", store.Conversion[specV2, statusV2, specV2, statusV2]{})
	vs, err := store.NewVersions(storage, v1, v2)
	require.NoError(t, err)
	return vs
}

func versionedStores(t testing.TB, b kv.Backend, storage string) (*store.Store[specV1, statusV1], *store.Store[specV2, statusV2]) {
	t.Helper()
	vs := widgetVersions(t, storage)
	s1, err := store.New[specV1, statusV1](b, "Widget", store.WithVersion("v1", vs))
	require.NoError(t, err)
	s2, err := store.New[specV2, statusV2](b, "Widget", store.WithVersion("v2", vs))
	require.NoError(t, err)
	return s1, s2
}

// storedEnvelope reads the raw stored value of Widget name.
func storedEnvelope(t testing.TB, b kv.Backend, name string) map[string]any {
	t.Helper()
	kv, err := b.Get(context.Background(), "Widget/"+name)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(kv.Value, &m))
	return m
}

func TestVersionsServeEveryVersionAndStoreTheStorageOne(t *testing.T) {
	ctx := t.Context()
	for _, storage := range []string{"v1", "v2"} {
		t.Run("storage "+storage, func(t *testing.T) {
			b := memstore.New()
			s1, s2 := versionedStores(t, b, storage)
			require.Equal(t, "v1", s1.Version())
			require.Equal(t, storage, s2.StorageVersion())

			_, err := s2.As("new").Create(ctx, &store.Object[specV2, statusV2]{
				Meta: store.Meta{Name: "a"}, Spec: specV2{ContainerImage: "img:2", Replicas: 3}})
			require.NoError(t, err)
			require.Equal(t, storage, storedEnvelope(t, b, "a")["version"], "written at the storage version")

			got1, err := s1.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, specV1{Image: "img:2"}, got1.Spec, "a v1 reader sees the renamed field")
			got2, err := s2.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, specV2{ContainerImage: "img:2", Replicas: 3}, got2.Spec, "v2 gets back what v1 storage cannot hold")

			l, err := s1.List(ctx, store.ListOptions{})
			require.NoError(t, err)
			require.Len(t, l.Items, 1)
			require.Equal(t, "img:2", l.Items[0].Spec.Image)
		})
	}
}

// Values stored before the kind had versions are at the first version.
func TestVersionsValuesWithoutAVersionAreAtTheFirst(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	old, err := store.New[specV1, statusV1](b, "Widget")
	require.NoError(t, err)
	_, err = old.As("old").Create(ctx, &store.Object[specV1, statusV1]{Meta: store.Meta{Name: "a"}, Spec: specV1{Image: "img:1"}})
	require.NoError(t, err)
	require.NotContains(t, storedEnvelope(t, b, "a"), "version", "a kind without versions stores none")

	_, s2 := versionedStores(t, b, "v2")
	got, err := s2.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, specV2{ContainerImage: "img:1"}, got.Spec)
	got.Spec.Replicas = 2
	_, err = s2.As("new").Update(ctx, got)
	require.NoError(t, err)
	require.Equal(t, "v2", storedEnvelope(t, b, "a")["version"])

	// The program without versions does not read what it cannot.
	_, err = old.Get(ctx, "a")
	var de *store.DecodeError
	require.ErrorAs(t, err, &de)
	require.ErrorContains(t, err, `stored at version "v2"`)
}

// A value at a version the program does not know is quarantined: a
// *DecodeError on Get, left out of List, an Undecodable watch event, and
// never overwritten by a write.
func TestVersionsUnknownVersionIsQuarantinedNeverOverwritten(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	s1, _ := versionedStores(t, b, "v1")
	value := []byte(`{"version":"v3","metadata":{"kind":"Widget","name":"a","uid":"u","lastWrite":{"manager":"x","op":"Create"},"generation":1},"spec":{"image":{"name":"i"}},"status":{}}`)
	ch, err := s1.Watch(ctx, 0)
	require.NoError(t, err)
	rev, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "Widget/a", Value: value})
	require.NoError(t, err)

	_, err = s1.Get(ctx, "a")
	var de *store.DecodeError
	require.ErrorAs(t, err, &de)
	require.ErrorContains(t, err, `stored at version "v3", which this program does not know (it knows v1, v2)`)
	l, err := s1.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, l.Items)
	require.Len(t, l.Undecodable, 1)
	ev := <-ch
	require.NotNil(t, ev.Undecodable)

	_, err = s1.As("w").Update(ctx, &store.Object[specV1, statusV1]{Meta: store.Meta{Name: "a", Revision: rev}})
	require.ErrorAs(t, err, &de)
	_, err = s1.As("w").Apply(ctx, "a", map[string]any{"image": "x"})
	require.ErrorAs(t, err, &de)
	_, err = s1.As("w").Delete(ctx, "a")
	require.ErrorAs(t, err, &de)
	kv, err := b.Get(ctx, "Widget/a")
	require.NoError(t, err)
	require.Equal(t, rev, kv.ModRevision, "never overwritten")
}

func TestVersionsWatchConverts(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	s1, s2 := versionedStores(t, b, "v2")
	ch, err := s1.Watch(ctx, 0)
	require.NoError(t, err)
	_, err = s2.As("new").Create(ctx, &store.Object[specV2, statusV2]{Meta: store.Meta{Name: "a"}, Spec: specV2{ContainerImage: "img:2"}})
	require.NoError(t, err)
	ev := <-ch
	require.Nil(t, ev.Undecodable)
	require.Equal(t, specV1{Image: "img:2"}, ev.Object.Spec)
}

// Round trips: a newer program writes (v2), an older one (v1) updates the
// spec and the status, and nothing of v2's is lost, whichever version is
// stored; the renamed field carries the older program's change.
func TestVersionsNewerWritesOlderUpdatesNothingLost(t *testing.T) {
	ctx := t.Context()
	for _, storage := range []string{"v1", "v2"} {
		t.Run("storage "+storage, func(t *testing.T) {
			b := memstore.New()
			s1, s2 := versionedStores(t, b, storage)
			obj := &store.Object[specV2, statusV2]{Meta: store.Meta{Name: "a"}, Spec: specV2{ContainerImage: "img:2", Replicas: 3}}
			_, err := s2.As("new").Create(ctx, obj)
			require.NoError(t, err)
			obj.Status = statusV2{Ready: false, Message: "warming up"}
			_, err = s2.As("new").UpdateStatus(ctx, obj)
			require.NoError(t, err)

			old, err := s1.Get(ctx, "a")
			require.NoError(t, err)
			old.Spec.Image = "img:3"
			_, err = s1.As("old").Update(ctx, old)
			require.NoError(t, err)
			old.Status.Ready = true
			_, err = s1.As("old").UpdateStatus(ctx, old)
			require.NoError(t, err)
			_, err = s1.As("old-apply").Apply(ctx, "a", map[string]any{"image": "img:4"}, store.WithForce())
			require.NoError(t, err)

			got, err := s2.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, specV2{ContainerImage: "img:4", Replicas: 3}, got.Spec, "the added field survives, the renamed one carries v1's change")
			require.Equal(t, statusV2{Ready: true, Message: "warming up"}, got.Status)
		})
	}
}

func TestNewVersionsRefusesBadInput(t *testing.T) {
	v2 := store.VersionOf("v2", store.Conversion[specV2, statusV2, specV2, statusV2]{})
	for name, make := range map[string]func() error{
		"none":            func() error { _, err := store.NewVersions("v1"); return err },
		"storage unknown": func() error { _, err := store.NewVersions("v9", v2); return err },
		"nil version":     func() error { _, err := store.NewVersions("v2", v2, nil); return err },
		"twice":           func() error { _, err := store.NewVersions("v2", v2, v2); return err },
		"bad name": func() error {
			_, err := store.NewVersions("v2", v2, store.VersionOf("a/b", store.Conversion[specV2, statusV2, specV2, statusV2]{}))
			return err
		},
		"two hubs": func() error {
			_, err := store.NewVersions("v2", v2, store.VersionOf("v1", store.Conversion[specV1, statusV1, specV1, statusV1]{}))
			return err
		},
		"served types": func() error {
			vs, err := store.NewVersions("v2", v2)
			require.NoError(t, err)
			_, err = store.New[specV1, statusV1](memstore.New(), "Widget", store.WithVersion("v2", vs))
			return err
		},
		"served unknown": func() error {
			vs, err := store.NewVersions("v2", v2)
			require.NoError(t, err)
			_, err = store.New[specV2, statusV2](memstore.New(), "Widget", store.WithVersion("v1", vs))
			return err
		},
		"nil versions": func() error {
			_, err := store.New[specV2, statusV2](memstore.New(), "Widget", store.WithVersion("v1", nil))
			return err
		},
	} {
		require.ErrorIs(t, make(), store.ErrInvalid, name)
	}
}

// A conversion that fails quarantines the value on read.
func TestVersionsConversionErrorIsADecodeError(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	v1 := store.VersionOf("v1", store.Conversion[specV1, statusV1, specV2, statusV2]{
		ToHub: func(specV1, statusV1) (specV2, statusV2, error) {
			return specV2{}, statusV2{}, errors.New("no")
		},
	})
	v2 := store.VersionOf("v2", store.Conversion[specV2, statusV2, specV2, statusV2]{})
	vs, err := store.NewVersions("v1", v1, v2)
	require.NoError(t, err)
	s1, err := store.New[specV1, statusV1](b, "Widget", store.WithVersion("v1", vs))
	require.NoError(t, err)
	s2, err := store.New[specV2, statusV2](b, "Widget", store.WithVersion("v2", vs))
	require.NoError(t, err)
	_, err = s1.As("a").Create(ctx, &store.Object[specV1, statusV1]{Meta: store.Meta{Name: "a"}})
	require.NoError(t, err)
	_, err = s2.Get(ctx, "a")
	var de *store.DecodeError
	require.ErrorAs(t, err, &de)
	require.ErrorContains(t, err, `converting version "v1" to the hub: no`)
}

// A value at another version whose Spec does not decode as that version's
// type is a *DecodeError saying why, and the next conversion, which may
// reuse the decoder, reads its value whole.
func TestVersionsUndecodableSpecAtAnotherVersionIsADecodeError(t *testing.T) {
	ctx := t.Context()
	b := memstore.New()
	_, s2 := versionedStores(t, b, "v1")
	for name, spec := range map[string]string{"bad": `{"image":7}`, "good": `{"image":"img:1"}`} {
		value := []byte(`{"version":"v1","metadata":{"kind":"Widget","name":"` + name + `","uid":"u","lastWrite":{"manager":"x","op":"Create"},"generation":1},"spec":` + spec + `,"status":{"ready":true}}`)
		_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "Widget/" + name, Value: value})
		require.NoError(t, err)
	}
	for range 2 {
		_, err := s2.Get(ctx, "bad")
		var de *store.DecodeError
		require.ErrorAs(t, err, &de)
		require.ErrorContains(t, err, `spec at version "v1": json: cannot unmarshal number into Go struct field specV1.image of type string`)
		got, err := s2.Get(ctx, "good")
		require.NoError(t, err)
		require.Equal(t, specV2{ContainerImage: "img:1"}, got.Spec)
		require.Equal(t, statusV2{Ready: true}, got.Status)
	}
}

// panickyVersions is widgetVersions whose v1 conversion funcs panic on the
// value whose image is "bomb" (a user's func that dereferences what that
// one value leaves nil).
func panickyVersions(t testing.TB, storage string) *store.Versions {
	t.Helper()
	v1 := store.VersionOf("v1", store.Conversion[specV1, statusV1, specV2, statusV2]{
		ToHub: func(s specV1, st statusV1) (specV2, statusV2, error) {
			if s.Image == "bomb" {
				panic("ToHub: nil pointer on bomb")
			}
			return specV2{ContainerImage: s.Image}, statusV2{Ready: st.Ready}, nil
		},
		FromHub: func(s specV2, st statusV2) (specV1, statusV1, error) {
			if s.ContainerImage == "bomb" {
				panic(errors.New("FromHub: nil pointer on bomb"))
			}
			return specV1{Image: s.ContainerImage}, statusV1{Ready: st.Ready}, nil
		},
	})
	v2 := store.VersionOf("v2", store.Conversion[specV2, statusV2, specV2, statusV2]{})
	vs, err := store.NewVersions(storage, v1, v2)
	require.NoError(t, err)
	return vs
}

// A conversion func that panics on one value makes that value a
// *DecodeError naming the panic, as a conversion error does, wherever it
// is decoded (Get, List, Watch, a write's read); every other value is
// served. Stored at v1 and served at v2, it is v1's ToHub that panics;
// stored at v2 (the hub) and served at v1, v1's FromHub.
func TestVersionsConversionPanicIsADecodeError(t *testing.T) {
	for _, tc := range []struct{ storage, served, panics string }{
		{"v1", "v2", `converting version "v1" to the hub: panicked: string: ToHub: nil pointer on bomb`},
		{"v2", "v1", `converting the hub to version "v1": panicked: *errors.errorString: FromHub: nil pointer on bomb`},
	} {
		t.Run("stored at "+tc.storage, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			b := memstore.New()
			vs := panickyVersions(t, tc.storage)
			s1, err := store.New[specV1, statusV1](b, "Widget", store.WithVersion("v1", vs))
			require.NoError(t, err)
			s2, err := store.New[specV2, statusV2](b, "Widget", store.WithVersion("v2", vs))
			require.NoError(t, err)
			// Written at the storage version, through its own Store: no
			// conversion on the way in.
			write := func(name, image string) {
				if tc.storage == "v1" {
					_, err = s1.As("a").Create(ctx, &store.Object[specV1, statusV1]{Meta: store.Meta{Name: name}, Spec: specV1{Image: image}})
				} else {
					_, err = s2.As("a").Create(ctx, &store.Object[specV2, statusV2]{Meta: store.Meta{Name: name}, Spec: specV2{ContainerImage: image}})
				}
				require.NoError(t, err)
			}
			get := func(name string) error { _, err := s2.Get(ctx, name); return err }
			list := func() ([]string, []*store.DecodeError) {
				l, err := s2.List(ctx, store.ListOptions{})
				require.NoError(t, err, "a panicking conversion never fails the List")
				var names []string
				for _, o := range l.Items {
					names = append(names, o.Meta.Name)
				}
				return names, l.Undecodable
			}
			update := func(name string, rev int64) error {
				_, err := s2.As("b").Update(ctx, &store.Object[specV2, statusV2]{Meta: store.Meta{Name: name, Revision: rev}, Spec: specV2{ContainerImage: "fixed"}})
				return err
			}
			if tc.served == "v1" {
				get = func(name string) error { _, err := s1.Get(ctx, name); return err }
				list = func() ([]string, []*store.DecodeError) {
					l, err := s1.List(ctx, store.ListOptions{})
					require.NoError(t, err, "a panicking conversion never fails the List")
					var names []string
					for _, o := range l.Items {
						names = append(names, o.Meta.Name)
					}
					return names, l.Undecodable
				}
				update = func(name string, rev int64) error {
					_, err := s1.As("b").Update(ctx, &store.Object[specV1, statusV1]{Meta: store.Meta{Name: name, Revision: rev}, Spec: specV1{Image: "fixed"}})
					return err
				}
			}
			var events <-chan string
			if tc.served == "v2" {
				events = watchNames(ctx, t, s2)
			} else {
				events = watchNames(ctx, t, s1)
			}

			write("a-good", "img:1")
			write("b-bomb", "bomb")
			write("c-good", "img:3")

			require.NoError(t, get("a-good"))
			err = get("b-bomb")
			var de *store.DecodeError
			require.ErrorAs(t, err, &de)
			require.Equal(t, "b-bomb", de.Name)
			require.ErrorContains(t, err, tc.panics)
			require.NoError(t, get("c-good"))

			names, bad := list()
			require.Equal(t, []string{"a-good", "c-good"}, names)
			require.Len(t, bad, 1)
			require.Equal(t, "b-bomb", bad[0].Name)
			require.ErrorContains(t, bad[0], tc.panics)

			require.Equal(t, "a-good", <-events)
			require.Equal(t, "undecodable b-bomb: "+tc.panics, <-events)
			require.Equal(t, "c-good", <-events)

			err = update("b-bomb", de.Revision)
			require.ErrorIs(t, err, store.ErrInvalid, "a value that does not convert is never overwritten")
			require.ErrorContains(t, err, tc.panics)
		})
	}
}

// watchNames watches s from now and sends the name of each object
// an event carries, or "undecodable NAME: REASON".
func watchNames[S, T any](ctx context.Context, t *testing.T, s *store.Store[S, T]) <-chan string {
	t.Helper()
	l, err := s.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	events, err := s.Watch(ctx, l.Revision)
	require.NoError(t, err)
	out := make(chan string, 16)
	go func() {
		for ev := range events {
			if ev.Undecodable != nil {
				out <- "undecodable " + ev.Undecodable.Name + ": " + ev.Undecodable.Err.Error()
			} else {
				out <- ev.Object.Meta.Name
			}
		}
	}()
	return out
}
