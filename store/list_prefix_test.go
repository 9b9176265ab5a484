package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// ListOptions.NamePrefix lists the names under it, page by page; a prefix
// with a slash is invalid.
func TestListNamePrefix(t *testing.T) {
	ctx := context.Background()
	st := newTypedStore(t, memstore.New())
	for _, team := range []string{"a", "ab", "b"} {
		for i := range 3 {
			_, err := st.As("alice").Create(ctx, &typedObj{Meta: store.Meta{Name: fmt.Sprintf("%s.w%d", team, i)}})
			require.NoError(t, err)
		}
	}
	var names []string
	opts := store.ListOptions{NamePrefix: "a.", Limit: 2}
	for {
		l, err := st.List(ctx, opts)
		require.NoError(t, err)
		for _, o := range l.Items {
			names = append(names, o.Meta.Name)
		}
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
	}
	require.Equal(t, []string{"a.w0", "a.w1", "a.w2"}, names)
	_, err := st.List(ctx, store.ListOptions{NamePrefix: "a/"})
	require.ErrorIs(t, err, store.ErrInvalid)
}
