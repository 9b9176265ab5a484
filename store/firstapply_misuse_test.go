package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// A caller that changes, in place, the ownership records of the objects
// it read (Get, a watch's events) after a controller's first status
// apply leaves the Store's own as they were: the next object's first
// apply, which writes the same record, stores the merge's, and the
// object read keeps its stored record. With and without the memory of
// values.
func TestFirstStatusApplyRecordOutlivesACallersChanges(t *testing.T) {
	type spec struct {
		Replicas int `json:"replicas"`
	}
	type status struct {
		Ready int `json:"ready"`
	}
	for _, remember := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		var opts []store.Option
		if !remember {
			opts = append(opts, store.WithLastValues(0))
		}
		st, err := store.New[spec, status](memstore.New(), "Rec", opts...)
		require.NoError(t, err)
		events, err := st.Watch(ctx, 0)
		require.NoError(t, err)
		apply := func(name string) {
			_, err := st.As("user").Create(ctx, &store.Object[spec, status]{Meta: store.Meta{Name: name}, Spec: spec{Replicas: 1}})
			require.NoError(t, err)
			_, err = st.As("ctrl").ApplyStatus(ctx, name, status{Ready: 2}, nil)
			require.NoError(t, err)
		}
		spoil := func(o *store.Object[spec, status]) {
			if o == nil {
				return
			}
			for i := range o.Meta.Managed {
				o.Meta.Managed[i].Manager, o.Meta.Managed[i].Fields = "spoiled", "spoiled"
			}
		}
		apply("o-1")
		got, err := st.Get(ctx, "o-1")
		require.NoError(t, err)
		want := slices.Clone(got.Meta.Managed)
		require.Len(t, want, 2, "the creator's entry and ctrl's status entry")
		spoil(got)
		for range 2 { // o-1's create and status apply
			ev := <-events
			spoil(ev.Object)
			spoil(ev.Prev)
		}
		apply("o-2")
		got2, err := st.Get(ctx, "o-2")
		require.NoError(t, err)
		require.Equal(t, want, got2.Meta.Managed, "remember=%v", remember)
		again, err := st.Get(ctx, "o-1")
		require.NoError(t, err)
		require.Equal(t, want, again.Meta.Managed, "remember=%v", remember)
		cancel()
		for range events {
		}
	}
}
