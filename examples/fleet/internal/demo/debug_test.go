package demo

import (
	"context"
	"flag"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store/cache"

	"github.com/steady-go/steady/examples/internal/cli"
	steadymetrics "github.com/steady-go/steady/metrics"
)

// fakeDebug is a Program's Debug that serves nothing and remembers what it
// was shown.
type fakeDebug struct {
	mu      sync.Mutex
	addr    string
	loops   int // Loops tracked
	closed  bool
	reports int // reconciles reported to it
}

func (f *fakeDebug) start(addr string, w io.Writer) (Debugger, error) {
	f.addr = addr
	return f, nil
}

func (f *fakeDebug) Metrics(own steadymetrics.Loop) steadymetrics.Loop {
	return countingTee{own, f}
}

func (f *fakeDebug) Track(*reconcile.Loop[string], *cache.Cache[GroupSpec, GroupStatus]) {
	f.mu.Lock()
	f.loops++
	f.mu.Unlock()
}

func (f *fakeDebug) URL() string { return "http://" + f.addr + "/debug/steady/" }

func (f *fakeDebug) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

func (f *fakeDebug) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reports
}

// countingTee reports to own, and counts reconciles for its fakeDebug.
type countingTee struct {
	steadymetrics.Loop
	f *fakeDebug
}

func (c countingTee) ReconcileDone(ctl, result string, d time.Duration) {
	c.Loop.ReconcileDone(ctl, result, d)
	c.f.mu.Lock()
	c.f.reports++
	c.f.mu.Unlock()
}

// cancelOn is a writer that, once the text it was given contains want,
// calls then (once).
type cancelOn struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	then func()
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := strings.Contains(c.b.String(), c.want)
	c.b.Write(p)
	if !seen && strings.Contains(c.b.String(), c.want) {
		c.then()
	}
	return len(p), nil
}

func (c *cancelOn) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// With -debug the demo does not exit at its verdict: it says so, and the
// controller keeps running (and reporting to the debug server) until
// interrupted; then Run returns the verdict.
func TestDebugKeepsRunningUntilInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeDebug{}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var saidAt time.Time
		var atVerdict int
		out := &cancelOn{want: "Ctrl-C to stop\n", then: func() {
			saidAt, atVerdict = time.Now(), f.count()
			time.AfterFunc(time.Minute, cancel) // the user looks for a minute
		}}
		err := Run(ctx, []string{"-objects=3", "-faults=off", "-debug=127.0.0.1:8080"}, out, Program{Debug: f.start})
		require.NoError(t, err, "interrupted after converging: the verdict stands")
		text := out.String()
		require.Contains(t, text, "converged: all 3 groups match the store")
		require.Contains(t, text, "fleet: -debug: still serving http://127.0.0.1:8080/debug/steady/ and the controller keeps running; Ctrl-C to stop\n")
		require.Equal(t, time.Minute, time.Since(saidAt), "Run returned when interrupted, not at the verdict")
		require.Greater(t, f.count(), atVerdict, "the controller kept reconciling (resync) after the verdict")
		require.Equal(t, 1, f.loops)
		require.True(t, f.closed)
	})
}

// Without a Program's Debug or Data, -debug and -data are refused (exit
// 2) with a message that says which program has them: the default program
// compiles neither.
func TestDefaultProgramHasNoDebugOrData(t *testing.T) {
	var out strings.Builder
	for _, flag := range []string{"-debug=127.0.0.1:8080", "-data=/tmp/x"} {
		err := run(t.Context(), []string{flag}, &out)
		require.Equal(t, 2, cli.ExitCode(err), "%v", err)
		require.ErrorContains(t, err, "is in go run ./examples/fleet/fleet-full")
	}
	f := &fakeDebug{}
	require.ErrorIs(t, Run(t.Context(), []string{"-h"}, &out, Program{Name: "fleet-full", Debug: f.start}), flag.ErrHelp)
	require.Contains(t, out.String(), "Usage of fleet-full:", "-h names the program")
}
