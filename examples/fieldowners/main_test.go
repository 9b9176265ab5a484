package main

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"

	"github.com/steady-go/steady/examples/internal/cli"
)

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	goleak.VerifyTestMain(m)
}

// Both scenes run on virtual time, so the 1s quiet period of scene 2 and
// the oscillation hold of scene 1 cost no real time.
func TestFightIsReportedAndOwnershipStopsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		require.NoError(t, run(t.Context(), nil, &out))
		text := out.String()
		t.Log("\n" + text)
		scene1, scene2, ok := strings.Cut(text, "2. With field ownership")
		require.True(t, ok)

		// Scene 1: the value flips, and the fight is reported with its path.
		require.Regexp(t, `went unset → [23] → [23] → [23] → [23]`, scene1)
		require.Regexp(t, `condition Stalled\(defaulter-[ab]\)=True  reason=Oscillating\n`+
			`     message: "defaulter-[ab]: fight: re-set \.spec\.replicas \d+ times within 3s after another manager changed it"`, scene1)

		// Scene 2: a conflict naming (manager, path), one write in all.
		require.Contains(t, scene2, "defaulter-b's apply of replicas=2 is refused: defaulter-a owns .spec.replicas (*ownership.ConflictError)")
		require.Contains(t, scene2, `condition Stalled(defaulter-b)=True  reason=TerminalError`)
		require.Contains(t, scene2, `.spec.replicas is managed by \"defaulter-a\"`)
		require.Contains(t, scene2, "writes to .spec: defaulter-a 1, defaulter-b 0; in the 1s after the conflict: 0 (generation 2 → 2)")
		require.Contains(t, scene2, ".spec.replicas went unset → 3\n")
		require.Contains(t, text, "Both behaved as described")
	})
}

// Without ownership the writes are unbounded until the detector steps in:
// scene 1 makes several writes per manager, scene 2 makes one in all.
func TestWritesAreBoundedOnlyWithOwnership(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		require.NoError(t, run(t.Context(), []string{"-quiet=5s"}, &out))
		m := regexp.MustCompile(`writes to \.spec: defaulter-a (\d+), defaulter-b (\d+)`).FindAllStringSubmatch(out.String(), -1)
		require.Len(t, m, 2)
		fightWrites := atoi(t, m[0][1]) + atoi(t, m[0][2])
		ownedWrites := atoi(t, m[1][1]) + atoi(t, m[1][2])
		require.GreaterOrEqual(t, fightWrites, 6, "a fight needs three re-sets by one side")
		require.Equal(t, 1, ownedWrites)
	})
}

func TestCommandLine(t *testing.T) {
	var out strings.Builder
	require.Equal(t, 0, cli.ExitCode(run(context.Background(), []string{"-h"}, &out)), "-h succeeds")
	require.Contains(t, out.String(), "-quiet", "-h prints the usage")
	for _, args := range [][]string{{"-quiet=0"}, {"-timeout=-1s"}, {"-quiet=x"}, {"-nope"}, {"extra"}} {
		err := run(context.Background(), args, &out)
		require.Equal(t, 2, cli.ExitCode(err), "args %q: %v", args, err)
	}
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// The defaulter applies what its cache shows, and a cache can still show an
// App that was deleted since (a restart against a lagging replica, a delete
// not yet delivered). Apply creates what does not exist, so its Apply must
// be conditional on what it read: it fails, and the App stays deleted.
func TestApplyFromStaleCacheDoesNotRecreateDeletedApp(t *testing.T) {
	ctx := t.Context()
	st, err := store.New[Spec, Status](memstore.New(), "App")
	require.NoError(t, err)
	_, err = st.As("user").Create(ctx, &App{Meta: store.Meta{Name: appName}, Spec: Spec{Image: "web:1.0"}})
	require.NoError(t, err)

	c := cache.New(st)
	cctx, stopCache := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(cctx) }()
	require.NoError(t, c.WaitForSync(ctx))
	stopCache() // from here on the cache sees no more events: it goes stale
	require.NoError(t, <-done)

	_, err = st.As("user").Delete(ctx, appName)
	require.NoError(t, err)
	_, ok := c.Get(appName)
	require.True(t, ok, "the stale cache still shows the deleted app")

	d := &defaulter{manager: managerA, want: defaultA, apply: true, st: st, cache: c}
	_, recErr := d.Reconcile(ctx, appName)
	_, err = st.Get(ctx, appName)
	require.ErrorIs(t, err, store.ErrNotFound, "the defaulter's Apply from a stale cache created the deleted app again")
	require.ErrorIs(t, recErr, store.ErrConflict, "the Loop retries a conflict, and the next read from the cache finds the app gone")
	require.Zero(t, d.writes.Load())
}
