package scripts

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fuzzRepo makes a repository of files with scripts/fuzz.sh in it, and a
// fake go command that each run of go test -fuzz asks what to do: it logs
// "module-dir package target fuzztime minimizetime" to calls, then runs
// the next line of the file steps (the last line once they run out) as a
// bash command in the module's directory, with $target and $pkg set.
func fuzzRepo(t *testing.T, files map[string]string, steps ...string) (root, calls string) {
	t.Helper()
	script, err := os.ReadFile("fuzz.sh")
	require.NoError(t, err)
	root = t.TempDir()
	files["scripts/fuzz.sh"] = string(script)
	for name, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	aux := t.TempDir()
	calls = filepath.Join(aux, "calls")
	require.NoError(t, os.WriteFile(filepath.Join(aux, "steps"), []byte(strings.Join(steps, "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(aux, "go"), []byte(`#!/usr/bin/env bash
# go test -run '^$' -fuzz ^T$ -fuzztime B -fuzzminimizetime M PKG
while (($#)); do
  case $1 in
    -fuzz) target=${2#^} target=${target%$} ;;
    -fuzztime) budget=$2 ;;
    -fuzzminimizetime) minimize=$2 ;;
  esac
  pkg=$1
  shift
done
aux=$(dirname "$0")
echo "$(basename "$PWD") $pkg $target $budget $minimize" >>"$aux/calls"
n=$(wc -l <"$aux/calls")
steps=$(wc -l <"$aux/steps")
eval "$(sed -n "$((n < steps ? n : steps))p" "$aux/steps")"
`), 0o755))
	return root, calls
}

// runFuzzSh runs root's scripts/fuzz.sh with args, with the fake go of
// fuzzRepo (none: the real one), and returns its output and exit code.
func runFuzzSh(t *testing.T, root, calls string, args ...string) (string, int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	// A script that loops on its arguments fails the test, not the suite.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, append([]string{filepath.Join(root, "scripts/fuzz.sh")}, args...)...)
	cmd.Dir = root
	cmd.Env = os.Environ()
	if calls != "" {
		cmd.Env = append(cmd.Env, "GO="+filepath.Join(filepath.Dir(calls), "go"))
	} else {
		goTool, err := exec.LookPath("go")
		require.NoError(t, err)
		cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(goTool)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	out, err := cmd.CombinedOutput()
	if exit, ok := err.(*exec.ExitError); ok {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err, "%s", out)
	return string(out), 0
}

const fuzzTarget = `package %s

import "testing"

func %s(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {})
}
`

func fuzzFile(pkg, name string) string {
	return strings.NewReplacer("%s(", name+"(", "package %s", "package "+pkg).Replace(fuzzTarget)
}

// The coordinator's race, as go test reports it at the end of a budget.
const deadlineRace = `echo "fuzz: elapsed: 40s, execs: 553052 (16332/sec), new interesting: 0 (total: 20)"; printf -- '--- FAIL: %s (40.08s)\n    context deadline exceeded\nFAIL\nexit status 1\nFAIL\texample.com/fake/%s\t40.104s\n' "$target" "$pkg"; exit 1`

// fuzz.sh finds every fuzz target of every module by itself, each under
// its own module (a nested module's targets are not the outer one's; one
// in a raw string, a test's source text, is named and not fuzzed), and
// fuzzes each with the budgets given (minimizing a new input for 2s by
// default, not go test's 60s); -run picks targets by name.
func TestFuzzShFindsEveryTargetOfEveryModule(t *testing.T) {
	root, calls := fuzzRepo(t, map[string]string{
		"go.mod":              "module example.com/fake\n\ngo 1.26.0\n",
		"top_test.go":         fuzzFile("fake", "FuzzTop"),
		"a/a_test.go":         fuzzFile("a", "FuzzA") + "\nfunc FuzzA2(f *testing.F) {}\n\nfunc TestNotFuzz(t *testing.T) {}\n",
		"a/helper.go":         "package a\n\nfunc FuzzLike(f *int) {}\n",
		"a/source_test.go":    "package a\n\nconst src = `package x\n\nfunc FuzzInAString(f *testing.F) {}\n`\n",
		"sub/go.mod":          "module example.com/fake/sub\n\ngo 1.26.0\n",
		"sub/b/b_test.go":     fuzzFile("b", "FuzzB"),
		"a/testdata/x/go.mod": "module x\n",
	}, `echo "fuzz: elapsed: 1s, execs: 1234 (1234/sec), new interesting: 3 (total: 4)"; echo ok`)
	out, code := runFuzzSh(t, root, calls, "-t", "7s")
	require.Equal(t, 0, code, out)
	got, err := os.ReadFile(calls)
	require.NoError(t, err)
	base := filepath.Base(root)
	require.ElementsMatch(t, []string{
		base + " ./a FuzzA 7s 2s", base + " ./a FuzzA2 7s 2s", base + " . FuzzTop 7s 2s", "sub ./b FuzzB 7s 2s",
	}, strings.Split(strings.TrimSpace(string(got)), "\n"), "one go test a target, in its module's directory")
	require.Contains(t, out, "ok   ./sub ./b FuzzB in ")
	require.Contains(t, out, ", 1234 executions, 3 new interesting\n", "each target's executions and finds")
	require.Contains(t, out, "fuzz: 4 passed, 0 failed (0 fuzzed again)\n")
	require.Contains(t, out, "NOTE ./a/source_test.go: FuzzInAString is in a raw string, not a target\n")

	require.NoError(t, os.Remove(calls))
	out, code = runFuzzSh(t, root, calls, "-run", "^FuzzA")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "fuzz: 2 passed, 0 failed (0 fuzzed again)\n", "-run FuzzA: FuzzA and FuzzA2")

	out, code = runFuzzSh(t, root, calls, "-run", "Nothing")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "no fuzz target matches 'Nothing'", "a run that fuzzes nothing is not a pass")

	require.NoError(t, os.Remove(calls))
	out, code = runFuzzSh(t, root, calls, "-run", "FuzzTop", "-t", "300x", "-m", "50x")
	require.Equal(t, 0, code, out)
	got, err = os.ReadFile(calls)
	require.NoError(t, err)
	require.Equal(t, base+" . FuzzTop 300x 50x\n", string(got), "budgets as counts")

	out, code = runFuzzSh(t, root, calls, "-t", "40")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "-t wants a duration (40s, 2m) or a count (200000x), got '40'")
	out, code = runFuzzSh(t, root, calls, "-m", "")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "-m wants a duration (40s, 2m) or a count (200000x), got ''")
	for _, flag := range []string{"-t", "-m", "-run"} {
		out, code = runFuzzSh(t, root, calls, flag) // its value left out
		require.Equal(t, 2, code, out)
		require.Contains(t, out, "fuzz.sh: "+flag+" wants a value", "a flag without its value")
	}
}

// A failing input go test wrote fails the target at once, named, and is
// not fuzzed again; a failure that wrote none fails it too, unless it is
// the coordinator's bare deadline race, which is fuzzed again once and
// fails only if it comes again.
// A go test that passed without fuzzing (no such target) fails: a run of
// nothing is not a pass.
func TestFuzzShFailsOnFindingsAndFuzzesAgainOnlyOnTheDeadlineRace(t *testing.T) {
	files := func() map[string]string {
		return map[string]string{"go.mod": "module example.com/fake\n\ngo 1.26.0\n", "p/p_test.go": fuzzFile("p", "FuzzP")}
	}
	for _, c := range []struct {
		name  string
		steps []string
		code  int
		want  []string
		calls int
	}{
		{
			name:  "an input written",
			steps: []string{`mkdir -p "$pkg/testdata/fuzz/$target" && echo 'go test fuzz v1' >"$pkg/testdata/fuzz/$target/5f0c1d" && printf -- '--- FAIL: %s (0.21s)\n    p_test.go:7: found\n    Failing input written to testdata/fuzz/%s/5f0c1d\nFAIL\n' "$target" "$target"; exit 1`},
			code:  1,
			want:  []string{"FAIL . ./p FuzzP in ", "failing input: ./p/testdata/fuzz/FuzzP/5f0c1d", "p_test.go:7: found", "fuzz: 0 passed, 1 failed (0 fuzzed again)"},
			calls: 1,
		},
		{
			name:  "the deadline race, then a pass",
			steps: []string{deadlineRace, `echo "fuzz: elapsed: 40s, execs: 600000 (15000/sec)"`},
			want:  []string{"AGAIN . ./p FuzzP: context deadline exceeded, no input written", "ok   . ./p FuzzP in ", ", 600000 executions", "fuzz: 1 passed, 0 failed (1 fuzzed again)"},
			calls: 2,
		},
		{
			name:  "the deadline race twice",
			steps: []string{deadlineRace},
			code:  1,
			want:  []string{"AGAIN . ./p FuzzP", "FAIL . ./p FuzzP in ", "context deadline exceeded", "fuzz: 0 passed, 1 failed (1 fuzzed again)"},
			calls: 2,
		},
		{
			name:  "a deadline inside another failure",
			steps: []string{`printf -- '--- FAIL: %s (3.00s)\n    context deadline exceeded\n    p_test.go:9: the store did not answer\nFAIL\n' "$target"; exit 1`},
			code:  1,
			want:  []string{"FAIL . ./p FuzzP in ", "p_test.go:9: the store did not answer", "fuzz: 0 passed, 1 failed (0 fuzzed again)"},
			calls: 1,
		},
		{
			name:  "nothing fuzzed",
			steps: []string{`printf 'testing: warning: no tests to run\nPASS\nok  \texample.com/fake/p\t0.01s\n'`},
			code:  1,
			want:  []string{"FAIL . ./p FuzzP in ", "go test fuzzed nothing: no target FuzzP in ./p?", "fuzz: 0 passed, 1 failed (0 fuzzed again)"},
			calls: 1,
		},
		{
			name:  "a build failure",
			steps: []string{`echo "p/p_test.go:3:1: syntax error"; exit 1`},
			code:  1,
			want:  []string{"syntax error", "fuzz: 0 passed, 1 failed (0 fuzzed again)"},
			calls: 1,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, calls := fuzzRepo(t, files(), c.steps...)
			out, code := runFuzzSh(t, root, calls)
			require.Equal(t, c.code, code, out)
			for _, w := range c.want {
				require.Contains(t, out, w)
			}
			got, err := os.ReadFile(calls)
			require.NoError(t, err)
			require.Equal(t, c.calls, strings.Count(string(got), "\n"), "go test runs: %s", got)
		})
	}
}

// With the real go command: a target whose property fails on nearly any
// input fails, and fuzz.sh names the input go test wrote.
func TestFuzzShNamesTheInputARealFuzzerFound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a fuzz target: go test, without -short")
	}
	root, _ := fuzzRepo(t, map[string]string{
		"go.mod": "module example.com/fake\n\ngo 1.26.0\n",
		"p/p_test.go": `package p

import "testing"

func FuzzShort(f *testing.F) {
	f.Add([]byte("a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1 {
			t.Fatalf("a long input: %q", b)
		}
	})
}
`,
	})
	out, code := runFuzzSh(t, root, "", "-t", "20s")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "FAIL . ./p FuzzShort in ")
	require.Regexp(t, `failing input: \./p/testdata/fuzz/FuzzShort/[0-9a-f]+`, out)
	require.Contains(t, out, "fuzz: 0 passed, 1 failed (0 fuzzed again)\n")
}
