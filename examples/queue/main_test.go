package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/examples/internal/cli"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDemoTellsTheFourScenes(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(nil, &out))
	require.Equal(t, `1. A burst of events is deduplicated
   1000 events about 3 objects -> 3 keys queued
   reconcile default/web
   reconcile default/db
   reconcile default/cache
2. A delayed key waits for its time, and keeps the earliest one
   right after AddAfter(100ms) and AddAfter(1h): 0 ready
   Get returned default/report after 100ms or more: true
3. A failing key backs off, and success resets it
   attempt 1 failed, retry in about 10ms
   attempt 2 failed, retry in about 20ms
   attempt 3 failed, retry in about 40ms
   attempt 4 failed, retry in about 80ms
   attempt 5 succeeded, failures forgotten: 0
4. A low-priority resync does not delay a normal add
   100001 keys queued; the first one handed out is default/web
   with nothing else waiting, the resync proceeds: next 32 keys are resync keys
`, out.String())
}

func TestFlagsChangeTheScenes(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run([]string{"-events=7", "-delay=5ms", "-failures=1", "-resync=40"}, &out))
	require.Equal(t, `1. A burst of events is deduplicated
   7 events about 3 objects -> 3 keys queued
   reconcile default/web
   reconcile default/db
   reconcile default/cache
2. A delayed key waits for its time, and keeps the earliest one
   right after AddAfter(5ms) and AddAfter(1h): 0 ready
   Get returned default/report after 5ms or more: true
3. A failing key backs off, and success resets it
   attempt 1 failed, retry in about 10ms
   attempt 2 succeeded, failures forgotten: 0
4. A low-priority resync does not delay a normal add
   41 keys queued; the first one handed out is default/web
   with nothing else waiting, the resync proceeds: next 32 keys are resync keys
`, out.String())
}

func TestCommandLine(t *testing.T) {
	var out strings.Builder
	require.Equal(t, 0, cli.ExitCode(run([]string{"-h"}, &out)))
	require.Contains(t, out.String(), "-events", "-h prints the usage")
	for _, args := range [][]string{
		{"-events=0"}, {"-events=-5"}, {"-delay=0s"}, {"-failures=11"}, {"-resync=31"}, {"-events=x"}, {"-nope"}, {"extra"},
	} {
		err := run(args, &out)
		require.Equal(t, 2, cli.ExitCode(err), "args %q: %v", args, err)
	}
}
