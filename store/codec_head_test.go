package store

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireHead holds the head decodeRawFast gave raw, read from value, to
// what it must be: value's text up to its last write, which appendTo
// writes for raw's metadata too; and present whenever the metadata are the
// value's first member and appendMeta writes them as they are.
func requireHead(t *testing.T, raw *rawObject, value []byte) {
	t.Helper()
	full, err := raw.encode()
	require.NoError(t, err)
	if raw.head.text == nil {
		_, plain := appendMeta(nil, &raw.Meta)
		require.False(t, plain && bytes.HasPrefix(value, []byte(`{"metadata":{`)), "no head for %s", value)
		return
	}
	n := len(raw.head.text)
	require.Equal(t, string(value[:n]), string(raw.head.text), "the head is the value's")
	require.Equal(t, string(full[:n]), string(raw.head.text), "the head is what appendTo writes: %s", value)
	require.True(t, bytes.HasPrefix(full[n:], []byte(`,"lastWrite":`)), "the head ends before the last write: %s", full)
}
