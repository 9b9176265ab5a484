package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/examples/internal/cli"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/memstore"
)

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	goleak.VerifyTestMain(m)
}

// The README's "A whole controller" block is controller.go, byte for byte,
// so the README cannot show code that does not compile or does not work.
func TestReadmeShowsControllerGo(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	file, err := os.ReadFile("controller.go")
	require.NoError(t, err)

	_, section, ok := strings.Cut(string(readme), "\n## A whole controller\n")
	require.True(t, ok, `README has no "## A whole controller" section`)
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```go\n")
	require.True(t, ok, "the section has no ```go block")
	block, _, ok = strings.Cut(block, "\n```\n")
	require.True(t, ok, "the ```go block is not closed")
	require.Equal(t, string(file), block+"\n", "README's block differs from examples/readme/controller.go: copy the file into the README")
}

// The controller converges every step a user takes: children created with
// owner references, scaled and rolled to a new image, a bad spec reported
// as Stalled (Terminal) and cleared once fixed, and the children garbage
// collected after their App is deleted.
func TestControllerConvergesEveryStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out strings.Builder
		require.NoError(t, demo(t.Context(), nil, &out), out.String())
		text := out.String()
		for _, want := range []string{
			"replicas [web-0 web-1 web-2] at web:v1, each controlled by web; web Ready at generation 1, status {Replicas:3}",
			"replicas [web-0] at web:v2, each controlled by web; web Ready at generation 2, status {Replicas:1}",
			"web Stalled, reason TerminalError: apps: replicas -1: want 0 to 100",
			"replicas [web-0 web-1] at web:v2, each controlled by web; web Ready at generation 4, status {Replicas:2}",
			"web's replicas are gone (garbage collected)",
		} {
			require.Contains(t, text, want)
		}
	})
}

func TestCommandLine(t *testing.T) {
	var out strings.Builder
	require.Equal(t, 0, cli.ExitCode(demo(t.Context(), []string{"-h"}, &out)))
	require.Contains(t, out.String(), "usage: readme")
	require.Equal(t, 2, cli.ExitCode(demo(t.Context(), []string{"x"}, &out)))
	require.Equal(t, 2, cli.ExitCode(demo(t.Context(), []string{"-x"}, &out)))
}

// A reconcile that read an App writes no status on the App of that name
// that replaced it, though both are at generation 1: here the cache still
// holds the App the user deleted (it lags behind the store), and the store
// holds its successor, which nobody reconciled.
func TestReconcileWritesNoStatusOnASuccessor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		newApps := func(b kv.Backend) *store.Store[AppSpec, AppStatus] {
			st, err := store.New[AppSpec, AppStatus](b, "App")
			require.NoError(t, err)
			return st
		}
		seen, now := newApps(memstore.New()), newApps(memstore.New())
		app := func() *store.Object[AppSpec, AppStatus] {
			return &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "web"}, Spec: AppSpec{Replicas: 0, Image: "web:v1"}}
		}
		_, err := seen.As("user").Create(ctx, app()) // the App the reconcile reads
		require.NoError(t, err)
		_, err = now.As("user").Create(ctx, app()) // its successor, also at generation 1
		require.NoError(t, err)
		replicas, err := store.New[ReplicaSpec, ReplicaStatus](now.Backend(), "Replica")
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(ctx)
		appCache, replicaCache := cache.New(seen), cache.New(replicas)
		var wg sync.WaitGroup
		for _, run := range []func(context.Context) error{appCache.Run, replicaCache.Run} {
			wg.Go(func() { _ = run(ctx) })
		}
		defer wg.Wait()
		defer cancel()
		require.NoError(t, appCache.WaitForSync(ctx))
		require.NoError(t, replicaCache.WaitForSync(ctx))

		ctl := &appController{apps: appCache, appSt: now, replicas: replicaCache, repSt: replicas}
		_, err = ctl.Reconcile(ctx, "web")
		require.ErrorIs(t, err, store.ErrConflict, "the status of the App it read is refused on its successor")
		got, err := now.Get(ctx, "web")
		require.NoError(t, err)
		require.Empty(t, got.Conditions, "README's pattern wrote Ready on an App it never read")
	})
}
