package main

import (
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/examples/internal/cli"
	"github.com/steady-go/steady/store/cache"
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
