package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The three programs in turn: v1 data, read and migrated by v2, then read
// and updated by v1 with nothing of v2's lost.
func TestV1DataMigratedByV2AndStillReadByV1(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(t.Context(), []string{"-n", "12", "-rate", "1000"}, &out))
	text := out.String()
	t.Log("\n" + text)
	v1, rest, _ := strings.Cut(text, "== the v2 program")
	v2, again, _ := strings.Cut(rest, "== the v1 program")
	require.Contains(t, v1, "created 12 widgets")
	require.Contains(t, v1, "stored: v1=12")
	require.Contains(t, v2, "read 12 widgets at v2, 0 undecodable; widget-00: containerImage=registry/app:0")
	require.Contains(t, v2, "migrate: scanned 5,", "a progress line per page")
	require.Contains(t, v2, "migrate: scanned 12, migrated 11, already current 1, undecodable 0, retried 0")
	require.Contains(t, v2, "stored: v2=12")
	require.Contains(t, again, "widget-00 at v1: image=registry/app:0 ready=false")
	require.Contains(t, again, "widget-00 updated at v1: image=registry/app:0-patched ready=true")
	require.Contains(t, again, "stored: v1=1 v2=11")
	require.Contains(t, again, "widget-00 as v2 sees it: {ContainerImage:registry/app:0-patched Replicas:3} {Ready:true Message:scaled to 3}")
}
