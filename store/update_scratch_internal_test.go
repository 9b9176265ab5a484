package store

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/race"
)

// An Update of a Store that remembers no values holds scratch space for
// its write, in which it reads the current object and encodes its spec
// (see updateRead). The space it gives back holds nothing of the write:
// no object (the caller's Meta, the Backend's value), and its spec buffer
// empty, kept for the next Update unless it grew past maxPooledEncode.
// Updates that take the space in turn store each its own spec.
func TestUpdateGivesBackItsScratchSpaceEmpty(t *testing.T) {
	if race.Enabled {
		t.Skip("reads the Store's pool (the race detector's sync.Pool drops items at random)")
	}
	ctx := t.Context()
	b := newMapBackend()
	st := newReadAsStore(t, b)
	user := st.As("user")
	for _, name := range []string{"a", "b"} {
		_, err := user.Create(ctx, &Object[keepSpec, keepStatus]{Meta: Meta{Name: name}, Spec: keepSpec{Image: "img", Args: []string{name}}})
		require.NoError(t, err)
	}
	update := func(name, image string) {
		t.Helper()
		o, err := st.Get(ctx, name)
		require.NoError(t, err)
		o.Spec.Image = image
		_, err = user.Update(ctx, o)
		require.NoError(t, err)
	}
	held := func() *decodeScratch {
		t.Helper()
		sc := st.borrowScratch()
		defer st.giveBack(sc)
		require.Zero(t, sc.raw, "the object read")
		require.Empty(t, sc.spec, "the spec's encoding")
		return sc
	}
	update("a", "image-of-a")
	require.NotZero(t, cap(held().spec), "the spec buffer is kept")
	update("b", "b")
	update("a", strings.Repeat("x", maxPooledEncode))
	require.Zero(t, cap(held().spec), "a spec buffer past maxPooledEncode is dropped")
	for name, image := range map[string]string{"a": strings.Repeat("x", maxPooledEncode), "b": "b"} {
		o, err := st.Get(ctx, name)
		require.NoError(t, err)
		require.Equal(t, keepSpec{Image: image, Args: []string{name}}, o.Spec)
	}
}
