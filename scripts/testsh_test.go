// Package scripts holds the tests of the repository's shell scripts.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A test that skips itself (the browser test without Chromium) is named on
// a SKIP line with its reason, and the summary counts it as skipped, not
// among the passed: test.sh's "ok" must not hide that something did not run.
func TestTestShPrintsSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("runs test.sh on a module of its own: go test, without -short")
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err)
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	script, err := os.ReadFile("test.sh")
	require.NoError(t, err)

	// A repository of one module, with one passing and one skipping test.
	root := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	write("scripts/test.sh", string(script))
	write("go.mod", "module example.com/fake\n\ngo 1.26.0\n")
	write("fake_test.go", `package fake

import "testing"

func TestRuns(t *testing.T) {}

func TestBrowser(t *testing.T) { t.Skip("no chromium on PATH") }
`)
	cmd := exec.Command(bash, filepath.Join(root, "scripts/test.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(goTool)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "SKIP TestBrowser: no chromium on PATH\n")
	require.Contains(t, string(out), ", 1 SKIPPED\n", "the module's line says it")
	require.Contains(t, string(out), "tests: 1 passed, 0 failed, 1 SKIPPED", "the summary says it")
}
