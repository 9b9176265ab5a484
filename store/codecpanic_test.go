package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// touchySpec decodes itself, and its UnmarshalJSON panics on the value
// "bomb", as a user's decoding code with a bug on one input does.
type touchySpec struct{ Image string }

func (s *touchySpec) UnmarshalJSON(b []byte) error {
	var v struct{ Image string }
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.Image == "bomb" {
		var m map[string]int
		m["x"] = 1 // assignment to entry in nil map
	}
	s.Image = v.Image
	return nil
}

type touchyStatus struct{ Ready bool }

// A Spec type whose UnmarshalJSON panics on one stored value makes that
// value a *DecodeError naming the panic (quarantined as any value that
// does not decode), for Get, List and Watch; every other value is served,
// and the next decode with the same scratch reads its value whole. It used
// to crash the process from the watch's goroutine.
func TestSpecUnmarshalJSONPanicIsADecodeError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var log syncBuffer
	st, err := store.New[touchySpec, touchyStatus](memstore.New(), "Widget", store.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	require.NoError(t, err)
	events := watchNames(ctx, t, st)
	w := st.As("a")
	for _, o := range []struct{ name, image string }{{"a-good", "img:1"}, {"b-bomb", "bomb"}, {"c-good", "img:3"}} {
		_, err := w.Create(ctx, &store.Object[touchySpec, touchyStatus]{Meta: store.Meta{Name: o.name}, Spec: touchySpec{Image: o.image}})
		require.NoError(t, err)
	}
	const why = `panicked: runtime.plainError: assignment to entry in nil map`

	for range 2 {
		got, err := st.Get(ctx, "a-good")
		require.NoError(t, err)
		require.Equal(t, "img:1", got.Spec.Image)
		_, err = st.Get(ctx, "b-bomb")
		var de *store.DecodeError
		require.ErrorAs(t, err, &de)
		require.Equal(t, "b-bomb", de.Name)
		require.ErrorContains(t, err, why)
		got, err = st.Get(ctx, "c-good")
		require.NoError(t, err)
		require.Equal(t, "img:3", got.Spec.Image)
	}

	l, err := st.List(ctx, store.ListOptions{})
	require.NoError(t, err, "a panicking decoder never fails the List")
	require.Len(t, l.Items, 2)
	require.Equal(t, "a-good", l.Items[0].Meta.Name)
	require.Equal(t, "c-good", l.Items[1].Meta.Name)
	require.Equal(t, "img:3", l.Items[1].Spec.Image)
	require.Len(t, l.Undecodable, 1)
	require.ErrorContains(t, l.Undecodable[0], why)

	require.Equal(t, "a-good", <-events)
	require.Regexp(t, "^undecodable b-bomb: .*"+why, <-events)
	require.Equal(t, "c-good", <-events)
	require.Contains(t, log.String(), `level=ERROR msg="store: decoding a value panicked" kind=Widget key=Widget/b-bomb revision=2 panic="runtime.plainError: assignment to entry in nil map" stack="goroutine`,
		"the stack is in the log")
}

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// The same at another version: a value stored at v1, whose type's
// UnmarshalJSON panics on it, read and updated through a Store serving
// v2, is a *DecodeError for the read and for the write's read (never
// overwritten); the rest is served.
func TestVersionTypeUnmarshalJSONPanicIsADecodeError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	b := memstore.New()
	v1 := store.VersionOf("v1", store.Conversion[touchySpec, touchyStatus, specV2, statusV2]{
		ToHub: func(s touchySpec, st touchyStatus) (specV2, statusV2, error) {
			return specV2{ContainerImage: s.Image}, statusV2{Ready: st.Ready}, nil
		},
		FromHub: func(s specV2, st statusV2) (touchySpec, touchyStatus, error) {
			return touchySpec{Image: s.ContainerImage}, touchyStatus{Ready: st.Ready}, nil
		},
	})
	vs, err := store.NewVersions("v1", v1, store.VersionOf("v2", store.Conversion[specV2, statusV2, specV2, statusV2]{}))
	require.NoError(t, err)
	quiet := store.WithLogger(slog.New(slog.DiscardHandler))
	s1, err := store.New[touchySpec, touchyStatus](b, "Widget", store.WithVersion("v1", vs), quiet)
	require.NoError(t, err)
	s2, err := store.New[specV2, statusV2](b, "Widget", store.WithVersion("v2", vs), quiet)
	require.NoError(t, err)
	events := watchNames(ctx, t, s2)
	for _, o := range []struct{ name, image string }{{"a-good", "img:1"}, {"b-bomb", "bomb"}, {"c-good", "img:3"}} {
		_, err := s1.As("a").Create(ctx, &store.Object[touchySpec, touchyStatus]{Meta: store.Meta{Name: o.name}, Spec: touchySpec{Image: o.image}})
		require.NoError(t, err)
	}
	const why = `panicked: runtime.plainError: assignment to entry in nil map`

	_, err = s2.Get(ctx, "b-bomb")
	var de *store.DecodeError
	require.ErrorAs(t, err, &de)
	require.ErrorContains(t, err, why)
	l, err := s2.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.Items, 2)
	require.Len(t, l.Undecodable, 1)
	require.Equal(t, "a-good", <-events)
	require.Regexp(t, "^undecodable b-bomb: .*"+why, <-events)
	require.Equal(t, "c-good", <-events)

	_, err = s2.As("b").Update(ctx, &store.Object[specV2, statusV2]{Meta: store.Meta{Name: "b-bomb", Revision: de.Revision}, Spec: specV2{ContainerImage: "fixed"}})
	require.ErrorIs(t, err, store.ErrInvalid, "a value that does not decode is never overwritten")
	require.ErrorContains(t, err, why)
	_, err = s2.As("b").Update(ctx, &store.Object[specV2, statusV2]{Meta: store.Meta{Name: "c-good", Revision: l.Items[1].Meta.Revision}, Spec: specV2{ContainerImage: "img:4"}})
	require.NoError(t, err)
	got, err := s1.Get(ctx, "c-good")
	require.NoError(t, err)
	require.Equal(t, "img:4", got.Spec.Image)
}

// loudSpec encodes itself, and its MarshalJSON panics on the image
// "bomb".
type loudSpec struct{ Image string }

func (s loudSpec) MarshalJSON() ([]byte, error) {
	if s.Image == "bomb" {
		var p *struct{ s string }
		_ = p.s // nil pointer dereference
	}
	return json.Marshal(struct{ Image string }{s.Image})
}

// A Spec type whose MarshalJSON panics makes the write that encodes it
// fail with ErrInvalid naming the panic, whatever goroutine writes (the
// Loop's own condition writes of a kind with versions encode Spec and
// Status too); nothing is stored, and the next write goes through.
func TestSpecMarshalJSONPanicIsAnInvalidWrite(t *testing.T) {
	ctx := t.Context()
	const why = `panicked: runtime.errorString: runtime error: invalid memory address or nil pointer dereference`
	st, err := store.New[loudSpec, touchyStatus](memstore.New(), "Widget")
	require.NoError(t, err)
	w := st.As("a")
	_, err = w.Create(ctx, &store.Object[loudSpec, touchyStatus]{Meta: store.Meta{Name: "a"}, Spec: loudSpec{Image: "bomb"}})
	require.ErrorIs(t, err, store.ErrInvalid)
	require.ErrorContains(t, err, why)
	_, err = st.Get(ctx, "a")
	require.ErrorIs(t, err, store.ErrNotFound, "nothing stored")
	obj := &store.Object[loudSpec, touchyStatus]{Meta: store.Meta{Name: "a"}, Spec: loudSpec{Image: "img:1"}}
	_, err = w.Create(ctx, obj)
	require.NoError(t, err)
	obj.Spec.Image = "bomb"
	_, err = w.Update(ctx, obj)
	require.ErrorIs(t, err, store.ErrInvalid)
	require.ErrorContains(t, err, why)

	// At another version: a status write converts to the storage version,
	// whose MarshalJSON panics.
	b := memstore.New()
	v1 := store.VersionOf("v1", store.Conversion[loudSpec, touchyStatus, specV2, statusV2]{
		ToHub: func(s loudSpec, st touchyStatus) (specV2, statusV2, error) {
			return specV2{ContainerImage: s.Image}, statusV2{Ready: st.Ready}, nil
		},
		FromHub: func(s specV2, st statusV2) (loudSpec, touchyStatus, error) {
			return loudSpec{Image: s.ContainerImage}, touchyStatus{Ready: st.Ready}, nil
		},
	})
	vs, err := store.NewVersions("v1", v1, store.VersionOf("v2", store.Conversion[specV2, statusV2, specV2, statusV2]{}))
	require.NoError(t, err)
	s2, err := store.New[specV2, statusV2](b, "Widget", store.WithVersion("v2", vs))
	require.NoError(t, err)
	_, err = s2.As("a").Create(ctx, &store.Object[specV2, statusV2]{Meta: store.Meta{Name: "a"}, Spec: specV2{ContainerImage: "bomb"}})
	require.ErrorIs(t, err, store.ErrInvalid)
	require.ErrorContains(t, err, why)
	_, err = s2.As("a").Create(ctx, &store.Object[specV2, statusV2]{Meta: store.Meta{Name: "b"}, Spec: specV2{ContainerImage: "img:2"}})
	require.NoError(t, err)
}
