package ownership_test

// Black-box tests of the documented contract, written from the package
// documentation alone.

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
)

// An Entry whose Set is nil (a record built by hand, Entry{Manager,
// Operation} with no Set) owns nothing: Apply and Update read it as the
// record without it, whoever's entry it is (the applying manager's own
// Apply entry included), rather than panicking.
func TestBlackbox49AnEntryWithANilSetOwnsNothing(t *testing.T) {
	live := map[string]any{"spec": map[string]any{"a": 1.0, "b": 2.0}}
	config := map[string]any{"spec": map[string]any{"a": 3.0}}
	for _, e := range []ownership.Entry{
		{Manager: "m", Operation: ownership.OpApply},
		{Manager: "m", Operation: ownership.OpUpdate},
		{Manager: "other", Operation: ownership.OpApply},
		{Manager: "other", Operation: ownership.OpUpdate},
	} {
		for _, opts := range [][]ownership.Option{nil, {ownership.Force()}} {
			want, err := ownership.Apply(live, config, "m", nil, opts...)
			require.NoError(t, err)
			var got ownership.Result
			require.NotPanics(t, func() { got, err = ownership.Apply(live, config, "m", ownership.Managed{e}, opts...) }, "%+v", e)
			require.NoError(t, err, "%+v", e)
			require.Equal(t, want.Object, got.Object, "%+v", e)
			require.True(t, want.Managed.Equal(got.Managed), "%+v: %v, want %v", e, got.Managed, want.Managed)
		}
		want, err := ownership.Update(live, config, "m", nil)
		require.NoError(t, err)
		var got ownership.Result
		require.NotPanics(t, func() { got, err = ownership.Update(live, config, "m", ownership.Managed{e}) }, "%+v", e)
		require.NoError(t, err, "%+v", e)
		require.True(t, want.Managed.Equal(got.Managed), "%+v: %v, want %v", e, got.Managed, want.Managed)
	}
}
