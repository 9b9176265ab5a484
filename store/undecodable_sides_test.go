package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

// A write decodes the metadata and the side it changes: over a value whose
// other side does not decode (a newer program's field during a rolling
// upgrade) it goes through and keeps that side's bytes as stored, and the
// key stays quarantined until the whole value is valid. A value whose
// metadata does not decode refuses every write.
func TestAWriteKeepsTheBytesOfTheSideItDoesNotDecode(t *testing.T) {
	ctx := context.Background()
	for name, st := range newAliasStores(t) {
		t.Run(name, func(t *testing.T) {
			w := st.As("user")
			_, err := w.Create(ctx, &aliasObj{Meta: store.Meta{Name: "a"}, Spec: aSpec{Image: "1"}})
			require.NoError(t, err)
			rev := rawPut(t, st.Backend(), "Widget/a",
				`{"metadata":{"kind":"Widget","name":"a","uid":"x","generation":3},"spec":{"Image":5},"status":{}}`)
			_, err = st.Get(ctx, "a")
			var de *store.DecodeError
			require.ErrorAs(t, err, &de)

			// The status side decodes: a status write goes through, the
			// spec's bytes stay, and the key stays quarantined.
			_, err = w.UpdateStatus(ctx, &aliasObj{Meta: store.Meta{Name: "a", Revision: rev}, Status: aStatus{Ready: true}})
			require.NoError(t, err)
			raw, err := st.Backend().Get(ctx, "Widget/a")
			require.NoError(t, err)
			require.Contains(t, string(raw.Value), `"spec":{"Image":5}`)
			_, err = st.Get(ctx, "a")
			require.ErrorAs(t, err, &de)

			// A spec write that leaves a valid spec makes it an object
			// again, with the status written above.
			_, err = w.Apply(ctx, "a", map[string]any{"Image": "2"})
			require.NoError(t, err)
			obj, err := st.Get(ctx, "a")
			require.NoError(t, err)
			require.Equal(t, "2", obj.Spec.Image)
			require.True(t, obj.Status.Ready)

			// Metadata that does not decode refuses every write but Purge.
			bad := `{"metadata":{"kind":"Widget","name":"a","generation":"three"},"spec":{},"status":{}}`
			rev = rawPut(t, st.Backend(), "Widget/a", bad)
			for op, write := range map[string]func() error{
				"Update": func() error {
					_, err := w.Update(ctx, &aliasObj{Meta: store.Meta{Name: "a", Revision: rev}, Spec: aSpec{Image: "3"}})
					return err
				},
				"UpdateStatus": func() error {
					_, err := w.UpdateStatus(ctx, &aliasObj{Meta: store.Meta{Name: "a", Revision: rev}, Status: aStatus{Ready: true}})
					return err
				},
				"Apply":       func() error { _, err := w.Apply(ctx, "a", map[string]any{"Image": "3"}); return err },
				"ApplyStatus": func() error { _, err := w.ApplyStatus(ctx, "a", map[string]any{"Ready": true}, nil); return err },
				"Delete":      func() error { _, err := w.Delete(ctx, "a", nil); return err },
			} {
				require.ErrorIs(t, write(), store.ErrInvalid, op)
				raw, err := st.Backend().Get(ctx, "Widget/a")
				require.NoError(t, err, op)
				require.Equal(t, rev, raw.ModRevision, "%s wrote %s", op, raw.Value)
				require.True(t, strings.Contains(string(raw.Value), `"three"`), op)
			}
		})
	}
}
