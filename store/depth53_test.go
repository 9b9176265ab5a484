package store_test

// A Spec, Status or Apply configuration nested too deep for JSON (built in
// Go, or holding itself) is refused with ErrInvalid before encoding/json
// follows it: a stack overflow ends the process, which no recover
// prevents. The tests lower the goroutine stack limit so that a write
// without the check fails them (the process dies) at a depth cheap to
// build. A stored value too deep to decode is quarantined as any
// undecodable value is.

import (
	"context"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

type deepSpec53 struct {
	Data any `json:"data,omitempty"`
}

type deepStatus53 struct {
	Data any `json:"data,omitempty"`
}

type deepObj53 = store.Object[deepSpec53, deepStatus53]

// nest53 returns n maps, each the field "a" of the one before.
func nest53(n int) map[string]any {
	m := map[string]any{"leaf": "x"}
	for range n - 1 {
		m = map[string]any{"a": m}
	}
	return m
}

func TestWritesOfValuesTooDeepToStoreAreInvalid(t *testing.T) {
	old := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
	ctx := context.Background()
	st, err := store.New[deepSpec53, deepStatus53](memstore.New(), "Widget")
	require.NoError(t, err)
	w := st.As("user")
	rev, err := w.Create(ctx, &deepObj53{Meta: store.Meta{Name: "a"}, Spec: deepSpec53{Data: "ok"}})
	require.NoError(t, err)

	deep := nest53(20 * store.MaxJSONDepth)
	self := map[string]any{"x": 1.0}
	self["self"] = self
	for _, v := range []any{deep, self} {
		for op, write := range map[string]func() error{
			"Create": func() error {
				_, err := w.Create(ctx, &deepObj53{Meta: store.Meta{Name: "b"}, Spec: deepSpec53{Data: v}})
				return err
			},
			"Update": func() error {
				_, err := w.Update(ctx, &deepObj53{Meta: store.Meta{Name: "a", Revision: rev}, Spec: deepSpec53{Data: v}})
				return err
			},
			"UpdateStatus": func() error {
				_, err := w.UpdateStatus(ctx, &deepObj53{Meta: store.Meta{Name: "a", Revision: rev}, Status: deepStatus53{Data: v}})
				return err
			},
			"Apply": func() error {
				_, err := w.Apply(ctx, "a", map[string]any{"data": v})
				return err
			},
			"Apply typed": func() error {
				_, err := w.Apply(ctx, "a", deepSpec53{Data: v})
				return err
			},
			"ApplyStatus": func() error {
				_, err := w.ApplyStatus(ctx, "a", deepStatus53{Data: v}, nil)
				return err
			},
		} {
			err := write()
			require.ErrorIs(t, err, store.ErrInvalid, op)
			if len(v.(map[string]any)) == 1 { // deep
				require.ErrorContains(t, err, "nests deeper than", op)
			}
		}
	}
	// The store is as it was.
	got, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, rev, got.Meta.Revision)
	require.Equal(t, "ok", got.Spec.Data)
	_, err = st.Get(ctx, "b")
	require.ErrorIs(t, err, store.ErrNotFound)

	// The deepest spec that decodes back is stored and read: the stored
	// object, the spec struct and MaxJSONDepth-2 maps.
	_, err = w.Create(ctx, &deepObj53{Meta: store.Meta{Name: "c"}, Spec: deepSpec53{Data: nest53(store.MaxJSONDepth - 2)}})
	require.NoError(t, err)
	got, err = st.Get(ctx, "c")
	require.NoError(t, err)
	require.NotNil(t, got.Spec.Data)
	_, err = w.Create(ctx, &deepObj53{Meta: store.Meta{Name: "d"}, Spec: deepSpec53{Data: nest53(store.MaxJSONDepth - 1)}})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = w.Apply(ctx, "e", map[string]any{"data": nest53(store.MaxJSONDepth - 2)})
	require.NoError(t, err)
	_, err = w.Apply(ctx, "f", map[string]any{"data": nest53(store.MaxJSONDepth - 1)})
	require.ErrorIs(t, err, store.ErrInvalid)
}

// A stored value nested deeper than any decoder reads (written behind the
// Store's back) is one undecodable value: Get reports it, List and Watch
// serve the others.
func TestAStoredValueTooDeepIsUndecodable(t *testing.T) {
	old := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	st, err := store.New[deepSpec53, deepStatus53](memstore.New(), "Widget")
	require.NoError(t, err)
	events := watchNames(ctx, t, st)
	w := st.As("user")
	_, err = w.Create(ctx, &deepObj53{Meta: store.Meta{Name: "a"}, Spec: deepSpec53{Data: "ok"}})
	require.NoError(t, err)
	const n = 400000 // 800 kB, under kv.MaxValueSize
	rawPut(t, st.Backend(), "Widget/b", `{"metadata":{"kind":"Widget","name":"b","uid":"x","generation":1},"spec":{"data":`+
		strings.Repeat("[", n)+strings.Repeat("]", n)+`},"status":{}}`)
	_, err = w.Create(ctx, &deepObj53{Meta: store.Meta{Name: "c"}, Spec: deepSpec53{Data: "ok"}})
	require.NoError(t, err)

	_, err = st.Get(ctx, "b")
	var de *store.DecodeError
	require.ErrorAs(t, err, &de)
	l, err := st.List(ctx, store.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.Items, 2)
	require.Len(t, l.Undecodable, 1)
	require.Equal(t, "a", <-events)
	require.Regexp(t, "^undecodable b: ", <-events)
	require.Equal(t, "c", <-events)
}

type link53 struct {
	Next *link53 `json:"next,omitempty"`
}

type chainSpec53 struct {
	Chain *link53 `json:"chain,omitempty"`
}

// A Spec type that holds itself (a pointer chain), too deep: refused too.
func TestWritesOfAChainTooDeepToStoreAreInvalid(t *testing.T) {
	old := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
	ctx := context.Background()
	st, err := store.New[chainSpec53, deepStatus53](memstore.New(), "Widget")
	require.NoError(t, err)
	var h *link53
	for range 20 * store.MaxJSONDepth {
		h = &link53{Next: h}
	}
	w := st.As("user")
	_, err = w.Create(ctx, &store.Object[chainSpec53, deepStatus53]{Meta: store.Meta{Name: "a"}, Spec: chainSpec53{Chain: h}})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = w.Apply(ctx, "a", chainSpec53{Chain: h})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = st.Get(ctx, "a")
	require.ErrorIs(t, err, store.ErrNotFound)
}

type backNode53 struct {
	Name   string      `json:"name"`
	Score  float64     `json:"score"` // no side encoder: encoding/json encodes it
	Parent *backNode53 `json:"-"`
}

type backSpec53 struct {
	Root *backNode53 `json:"root"`
}

// What encoding/json does not encode is not walked: a Spec whose json:"-"
// field points back at itself encodes, and is stored (it was refused as
// holding itself).
func TestAFieldNotEncodedMayHoldItself(t *testing.T) {
	ctx := context.Background()
	st, err := store.New[backSpec53, deepStatus53](memstore.New(), "Widget")
	require.NoError(t, err)
	n := &backNode53{Name: "x", Score: 1.5}
	n.Parent = n
	w := st.As("user")
	_, err = w.Create(ctx, &store.Object[backSpec53, deepStatus53]{Meta: store.Meta{Name: "a"}, Spec: backSpec53{Root: n}})
	require.NoError(t, err)
	_, err = w.Apply(ctx, "b", backSpec53{Root: n})
	require.NoError(t, err)
	got, err := st.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, "x", got.Spec.Root.Name)
	require.Nil(t, got.Spec.Root.Parent)
}
