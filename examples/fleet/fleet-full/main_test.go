package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/examples/fleet/internal/demo"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// storedGroups reads the groups in the data mode's file of dir.
func storedGroups(t *testing.T, dir string) map[string]*demo.Group {
	t.Helper()
	b, err := boltstore.Open(dataFile(dir))
	require.NoError(t, err)
	defer b.Close()
	groups, err := store.New[demo.GroupSpec, demo.GroupStatus](b, "Group")
	require.NoError(t, err)
	list, err := groups.List(t.Context(), store.ListOptions{})
	require.NoError(t, err)
	m := map[string]*demo.Group{}
	for _, g := range list.Items {
		m[g.Meta.Name] = g
	}
	return m
}

// TestDataSurvivesRestart runs the demo twice on one -data directory. The
// first run is stopped in the middle of its faults, before it converged, as
// if killed; the second starts with empty memory and an empty fleet, finds
// the groups in the file, converges them, and recreates none of them: every
// group keeps its UID, its generation and its spec (including the image
// changes the first run's "ops" made).
func TestDataSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		err := run(t.Context(), []string{"-objects=10", "-data=" + dir, "-duration=2s", "-chaos=3s"}, &out)
		require.ErrorContains(t, err, "not converged after 2s", out.String())
		require.Contains(t, out.String(), "at revision 0: 0 groups kept from an earlier run")
	})
	before := storedGroups(t, dir)
	require.Len(t, before, 10)

	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		require.NoError(t, run(t.Context(), []string{"-objects=10", "-data=" + dir, "-faults=off"}, &out), out.String())
		require.Contains(t, out.String(), "10 groups kept from an earlier run")
		require.Contains(t, out.String(), "converged: all 10 groups match the store")
	})
	after := storedGroups(t, dir)
	require.Len(t, after, 10)
	changed := 0
	for name, g := range before {
		require.Equal(t, g.Meta.UID, after[name].Meta.UID, "%s is the same object, not a new one", name)
		require.Equal(t, g.Meta.Generation, after[name].Meta.Generation, "%s's spec was not written again", name)
		require.Equal(t, g.Spec, after[name].Spec)
		if g.Meta.Generation > 1 {
			changed++
		}
	}
	require.Positive(t, changed, "the first run's image changes are kept")
}

// TestDataIsOwnedByOneProcess: a second demo on the same -data directory
// is refused while the first runs.
func TestDataIsOwnedByOneProcess(t *testing.T) {
	dir := t.TempDir()
	_, _, release, err := openData(dir)
	require.NoError(t, err)
	defer release()
	var out strings.Builder
	err = run(t.Context(), []string{"-data=" + dir}, &out)
	require.ErrorIs(t, err, boltstore.ErrLocked)
}

// -debug serves steady's Prometheus series at /metrics beside the page,
// following the controller, until interrupted. In real time: the server
// listens on a real port.
func TestDebugServesPrometheusMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-objects=3", "-faults=off", "-debug=127.0.0.1:0"}, out) }()
	keep := regexp.MustCompile(`fleet: -debug: still serving (http://\S+)/debug/steady/ and the controller keeps running; Ctrl-C to stop\n`)
	require.Eventually(t, func() bool { return keep.MatchString(out.String()) }, 20*time.Second, 10*time.Millisecond, "%s", out)
	require.Contains(t, out.String(), "/metrics\n", "the first line says where the metrics are")
	resp, err := http.Get(keep.FindStringSubmatch(out.String())[1] + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Regexp(t, `controller_runtime_reconcile_total\{controller="fleet-controller",result="success"\} [1-9]`, string(body))
	require.Contains(t, string(body), `steady_cache_objects{cache="groups"} 3`)
	cancel()
	require.NoError(t, <-done)
}

// syncBuffer is a bytes.Buffer that a running demo writes to while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
