package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// exactMeta answers for each Meta what it answers without the last write
// it found valid before (decodeScratch.validWrite): a last write equal to
// that one is valid, and any other is looked at, each of its strings, so
// that one with a string of invalid UTF-8 (which the encoding replaces) is
// never taken for valid, however often it comes and whatever came before.
func TestExactMetaRemembersOnlyAValidLastWrite(t *testing.T) {
	ok := LastWrite{Manager: "ctl", Op: "ApplyStatus"}
	metas := []Meta{
		{LastWrite: ok},
		{LastWrite: LastWrite{Manager: "ctl\xff", Op: "ApplyStatus"}},
		{LastWrite: LastWrite{Manager: "ctl", Op: "Apply\xffStatus"}},
		{LastWrite: LastWrite{Manager: "ctl", Op: "ApplyStatus", Trace: "\xff"}},
		{LastWrite: LastWrite{Manager: "user", Op: "Update", Trace: "t"}},
		{LastWrite: ok, Labels: map[string]string{}, Annotations: map[string]string{"a": "b"}},
		{LastWrite: ok, Labels: map[string]string{"a": "\xff"}},
		{LastWrite: ok, Annotations: map[string]string{"\xff": "b"}},
	}
	var valid LastWrite
	for range 2 {
		for i := range metas {
			for _, m := range []*Meta{&metas[i], &metas[0], &metas[i]} {
				want := exactMeta(m, metaSame{}, nil)
				require.Equal(t, want, exactMeta(m, metaSame{}, &valid), "%+v after %+v", m.LastWrite, valid)
				require.True(t, validUTF8(valid.Manager, string(valid.Op), valid.Trace), "a valid last write remembered")
			}
		}
	}
	require.False(t, exactMeta(&metas[1], metaSame{}, &LastWrite{Manager: "ctl", Op: "ApplyStatus"}))
	require.True(t, exactMeta(&metas[5], metaSame{}, nil), "empty labels, plain annotations")
}
