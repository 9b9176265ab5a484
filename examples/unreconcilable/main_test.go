package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/store/cache"

	"github.com/steady-go/steady/examples/internal/cli"
)

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	goleak.VerifyTestMain(m)
}

// The demo runs on virtual time: the full story with the default 2s cap
// takes no real time, and every delay is exact.
func TestStalledThenConvergesThroughTheMapping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		require.NoError(t, run(t.Context(), nil, &out))
		text := out.String()
		t.Log("\n" + text)

		// Stalled at once, with reason, message and timestamp.
		require.Regexp(t, `0\.000s  app is Stalled=True  reason=SecretMissing  message=".*secret \\"billing-db\\" not found"  since \d\d:\d\d:\d\d\.\d{3}Z`, text)

		// Retries back off, and never wait longer than the cap.
		gaps := regexp.MustCompile(`attempt \d+, (\S+) after the last: blocked`).FindAllStringSubmatch(text, -1)
		require.GreaterOrEqual(t, len(gaps), 7)
		prev := time.Duration(0)
		for _, g := range gaps {
			d, err := time.ParseDuration(g[1])
			require.NoError(t, err)
			require.LessOrEqual(t, d, 2*time.Second, "a retry waited longer than the cap")
			require.GreaterOrEqual(t, d, prev*8/10, "the backoff shrank")
			prev = d
		}
		require.Equal(t, 2, strings.Count(text, "(the cap)"))

		// The secret's creation, not the backoff, wakes the app: virtual
		// time does not move between the creation and convergence.
		require.Regexp(t, `(\d+\.\d{3})s  created secret "billing-db" \(the Loop holds \d+ failures; next backoff retry due in 1\.9s\)`, text)
		created := regexp.MustCompile(`(\d+\.\d{3})s  created secret`).FindStringSubmatch(text)[1]
		require.Regexp(t, regexp.QuoteMeta(created)+`s  attempt \d+, 100ms after the last: configured`, text)
		require.Contains(t, text, created+"s  app is Ready=True  reason=Configured")
		require.Contains(t, text, created+"s  app is Stalled=False  reason=Recovered")
		require.Contains(t, text, "Converged (Ready, no longer Stalled) 0s after the secret was created")
	})
}

func TestCommandLine(t *testing.T) {
	var out strings.Builder
	require.Equal(t, 0, cli.ExitCode(run(context.Background(), []string{"-h"}, &out)), "-h succeeds")
	require.Contains(t, out.String(), "-capped", "-h prints the usage")
	for _, args := range [][]string{{"-cap", "1ms"}, {"-cap", "-1s"}, {"-cap", "2h"}, {"-capped", "0"}, {"-capped", "-2"}, {"-nope"}, {"extra"}} {
		err := run(context.Background(), args, &out)
		require.Equal(t, 2, cli.ExitCode(err), "args %q: %v", args, err)
	}
}
