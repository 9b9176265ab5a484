// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/internal/race"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A test that skips itself (the browser test without Chromium) is named on
// a SKIP line with its reason, and the summary counts it as skipped, not
// among the passed: test.sh's "ok" must not hide that something did not run.
func TestTestShPrintsSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("runs test.sh on a module of its own: go test, without -short")
	}
	// A repository of one module, with one passing and one skipping test.
	root := fakeRepo(t, map[string]string{"fake_test.go": `package fake

import "testing"

func TestRuns(t *testing.T) {}

func TestBrowser(t *testing.T) { t.Skip("no chromium on PATH") }
`})
	out, err := runTestSh(t, root)
	require.NoError(t, err, "%s", out)
	require.Contains(t, out, "SKIP TestBrowser: no chromium on PATH\n")
	require.Contains(t, out, ", 1 SKIPPED\n", "the module's line says it")
	require.Contains(t, out, "tests: 1 passed, 0 failed, 1 SKIPPED", "the summary says it")
	require.Regexp(t, `(?m)^== module \. \(go test\): ok in \d+s \(\d+s of CPU\), 1 SKIPPED$`, out, "each module's line has its time and CPU")
}

// README's command runs every test without the race detector, and
// test.sh -race (which .ci/run runs after it) runs every test with it:
// the fake module's TestRace passes only when built as each run says.
// The -race half runs when this test runs under the race detector (in
// test.sh -race), which has compiled the standard library with -race
// already: README's command, without it, would compile it for this half
// alone (about 19 CPU-seconds from an empty build cache).
func TestTestShRunsWithTheRaceDetectorOnlyWhenAsked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs test.sh on a module of its own: go test, without -short")
	}
	root := fakeRepo(t, map[string]string{
		"race_test.go": `//go:build race

package fake

import (
	"os"
	"testing"
)

func TestRace(t *testing.T) {
	if os.Getenv("WANT_RACE") != "1" {
		t.Fatal("built with -race")
	}
}
`,
		"norace_test.go": `//go:build !race

package fake

import (
	"os"
	"testing"
)

func TestRace(t *testing.T) {
	if os.Getenv("WANT_RACE") == "1" {
		t.Fatal("built without -race")
	}
}
`,
	})
	t.Setenv("WANT_RACE", "0")
	out, err := runTestSh(t, root)
	require.NoError(t, err, "%s", out)
	require.Regexp(t, `(?m)^== module \. \(go test\): ok in \d+s \(\d+s of CPU\)$`, out)
	require.Contains(t, out, "tests: 1 passed, 0 failed, 0 skipped")

	if !race.Enabled {
		t.Log("test.sh -race runs the -race half")
		return
	}
	t.Setenv("WANT_RACE", "1")
	out, err = runTestSh(t, root, "-short", "-race") // -race need not come first
	require.NoError(t, err, "%s", out)
	require.Regexp(t, `(?m)^== module \. \(go test -race\): ok in \d+s \(\d+s of CPU\)$`, out)
	require.Contains(t, out, "tests: 1 passed, 0 failed, 0 skipped")
}

// A test that test.sh's -run patterns name but that did not run (renamed,
// say) fails the run, by name: it must not drop out of its lane unseen.
// The fake repository's reconcile/reconciletest has TestSchedules, and
// none of the other tests the script runs there without -race.
func TestTestShFailsWhenATestItNamesDidNotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs test.sh on a module of its own: go test, without -short")
	}
	root := fakeRepo(t, map[string]string{
		"reconcile/reconciletest/fake_test.go": `package reconciletest

import (
	"flag"
	"testing"
)

var _ = flag.Int("schedules", 0, "test.sh passes -schedules")

func TestSchedules(t *testing.T) {}
`,
	})
	out, err := runTestSh(t, root)
	require.Error(t, err, "%s", out)
	require.Contains(t, out, "MISSING TestCorpus\n")
	require.Contains(t, out, "MISSING TestZoo\n")
	require.NotContains(t, out, "MISSING TestSchedules\n", "it ran")
	require.Contains(t, out, "FAIL reconcile/reconciletest seed sweeps (beside the modules): the tests above are named in its -run pattern")
	require.Contains(t, out, "tests: 1 passed, 1 failed", "the summary counts the failure")
}

// fakeRepo writes a repository of one module holding scripts/test.sh and
// files (path: contents) into a temporary directory, and returns it.
func fakeRepo(t *testing.T, files map[string]string) string {
	script, err := os.ReadFile("test.sh")
	require.NoError(t, err)
	root := t.TempDir()
	files["scripts/test.sh"] = string(script)
	files["go.mod"] = "module example.com/fake\n\ngo 1.26.0\n"
	for name, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	return root
}

// runTestSh runs root's scripts/test.sh with args in root and returns its
// output.
func runTestSh(t *testing.T, root string, args ...string) (string, error) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err)
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	cmd := exec.Command(bash, append([]string{filepath.Join(root, "scripts/test.sh")}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(goTool)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// coldrun.sh -tests runs README's test command on an empty build cache of
// its own, passes it its arguments, prints its CPU-seconds and the load,
// and fails over the budget, or when the tests fail. (A stub stands in
// for test.sh here: the real one, cold, takes minutes.)
func TestColdrunTestsReportsCPUSecondsAgainstABudget(t *testing.T) {
	script, err := os.ReadFile("coldrun.sh")
	require.NoError(t, err)
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "scripts/coldrun.sh"), script, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "scripts/test.sh"), []byte(`
[ -d "$GOCACHE" ] && [ -z "$(ls -A "$GOCACHE")" ] || { echo "build cache not empty: $GOCACHE"; exit 3; }
touch "$GOCACHE/built"
echo "test.sh $*"
echo "tests: 1 passed, 0 failed, 0 skipped"
[ "${1:-}" != -fail ]
`), 0o644))
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	coldrun := func(args ...string) (string, error) {
		cmd := exec.Command(bash, append([]string{filepath.Join(root, "scripts/coldrun.sh"), "-tests"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	gocache := filepath.Join(t.TempDir(), "gocache")
	out, err := coldrun("-gocache", gocache, "-race")
	require.NoError(t, err, "%s", out)
	require.Contains(t, out, "test.sh -race\n", "its arguments go to test.sh")
	require.Regexp(t, `(?m)^coldrun: \d+\.\d CPU-seconds \(user [0-9.]+ \+ sys [0-9.]+\), [0-9.]+ s wall, README's test command \(bash scripts/test.sh -race\) on an empty build cache, module cache warm; load average [0-9. ]+ before, [0-9. ]+ after$`, out)
	require.DirExists(t, gocache, "-gocache keeps the build cache")

	out, err = coldrun("-gocache", gocache)
	require.Error(t, err, "%s", out)
	require.Contains(t, out, "is not empty", "a used build cache is not cold")

	out, err = coldrun("-budget", "-1")
	require.Error(t, err, "%s", out)
	require.Contains(t, out, "coldrun: over the budget of -1 CPU-seconds")

	out, err = coldrun("-fail")
	require.Error(t, err, "%s", out)
	require.Contains(t, out, "coldrun: the tests failed")
}
