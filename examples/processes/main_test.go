//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/examples/internal/cli"
	"github.com/steady-go/steady/store/cache"
)

// childEnv makes the test binary run the demo itself (TestCrashKillsTheFleet).
const childEnv = "PROCESSES_TEST_CHILD_FLEET"

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	if fleet := os.Getenv(childEnv); fleet != "" {
		if err := run(context.Background(), []string{"-fleet", fleet}, &stallAtCheck{os.Stdout}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// stallAtCheck writes to w and never returns from the first write of a ✓
// line, so the program stays at that checkpoint, fleet running, until it
// is killed.
type stallAtCheck struct{ w io.Writer }

func (s *stallAtCheck) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if bytes.Contains(p, []byte("✓")) {
		time.Sleep(time.Hour)
	}
	return n, err
}

// osProc is a process of a fleet as this test reads it from /proc, without
// the program's own scanner.
type osProc struct {
	name    string
	pid     int
	cmdline string
}

// fleetProcs lists the live processes whose environment carries fleet's
// marker.
func fleetProcs(t *testing.T, fleet string) map[string]osProc {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	require.NoError(t, err)
	marker := []byte("\x00STEADY_PROCESS=" + fleet + "/")
	out := map[string]osProc{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err != nil {
			continue
		}
		i := bytes.Index(append([]byte{0}, env...), marker)
		if i < 0 {
			continue
		}
		rest := env[i-1+len(marker):]
		name, _, _ := strings.Cut(string(rest[:bytes.IndexByte(append(rest, 0), 0)]), "/")
		cmd, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		key := fmt.Sprintf("%s=%d", name, pid)
		out[key] = osProc{name: name, pid: pid, cmdline: strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " ")}
	}
	return out
}

// alive reports whether pid is a live, non-zombie process.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}

var (
	checkRE = regexp.MustCompile(`✓ (.*) \| running: (.*)$`)
	pidRE   = regexp.MustCompile(`pid (\d+)`)
)

// checkpoint is one ✓ line of the timeline and what /proc held when the
// program printed it.
type checkpoint struct {
	what    string
	printed []string // name=pid, as printed
	procs   map[string]osProc
}

// verifier is the demo's stdout: it reads the timeline line by line and,
// at each checkpoint, reads /proc while the program waits for the write.
type verifier struct {
	t      *testing.T
	fleet  string
	onLine func(line string)

	mu     sync.Mutex
	buf    bytes.Buffer
	text   strings.Builder
	checks []checkpoint
	pids   map[int]bool // every PID the timeline mentioned
}

func (v *verifier) Write(p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.buf.Write(p)
	for {
		line, err := v.buf.ReadString('\n')
		if err != nil {
			v.buf.WriteString(line) // incomplete: keep for later
			return len(p), nil
		}
		line = strings.TrimSuffix(line, "\n")
		v.text.WriteString(line + "\n")
		for _, m := range pidRE.FindAllStringSubmatch(line, -1) {
			pid, _ := strconv.Atoi(m[1])
			v.pids[pid] = true
		}
		if m := checkRE.FindStringSubmatch(line); m != nil {
			c := checkpoint{what: m[1], procs: fleetProcs(v.t, v.fleet)}
			if m[2] != "none" {
				c.printed = strings.Fields(m[2])
			}
			for _, np := range c.printed {
				pid, _ := strconv.Atoi(np[strings.IndexByte(np, '=')+1:])
				v.pids[pid] = true
			}
			v.checks = append(v.checks, c)
		}
		if v.onLine != nil {
			v.onLine(line)
		}
	}
}

func newVerifier(t *testing.T, fleet string) *verifier {
	return &verifier{t: t, fleet: fleet, pids: map[int]bool{}}
}

// testFleet is a fleet name no other run uses.
func testFleet(t *testing.T) string {
	name := fmt.Sprintf("t%d-%s", os.Getpid(), regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(t.Name()), "-"))
	return strings.TrimRight(name[:min(len(name), 40)], "-")
}

// requireNoneLeft fails if a process of fleet, or a child of this test
// among pids, still lives.
func requireNoneLeft(t *testing.T, fleet string, pids map[int]bool) {
	t.Helper()
	require.Empty(t, fleetProcs(t, fleet), "processes of the fleet left behind")
	for pid := range pids {
		require.False(t, alive(pid) && isChildOf(pid, os.Getpid()), "pid %d still runs", pid)
	}
}

func pidsOf(ps map[string]osProc) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.pid)
	}
	return out
}

func TestDemo(t *testing.T) {
	fleet := testFleet(t)
	v := newVerifier(t, fleet)
	start := time.Now()
	require.NoError(t, run(t.Context(), []string{"-fleet", fleet}, v))
	t.Logf("the demo took %v:\n%s", time.Since(start), v.text.String())

	// Each checkpoint printed exactly what the OS ran at that moment:
	// the same names and PIDs, each running the default command.
	want := []struct {
		what  string
		names []string
	}{
		{"3 running, the leftover swept", []string{"web-0", "web-1", "web-2"}},
		{"repaired: web-1 has a new process", []string{"web-0", "web-1", "web-2"}},
		{"adopted: the same PIDs, nothing started", []string{"web-0", "web-1", "web-2"}},
		{"swept: web-2 stopped and its Instance gone", []string{"web-0", "web-1"}},
		{"all gone: no process, no Instance", nil},
	}
	require.Len(t, v.checks, len(want))
	byName := make([]map[string]int, len(want))
	for i, c := range v.checks {
		require.Equal(t, want[i].what, c.what)
		var onOS []string
		for key, p := range c.procs {
			onOS = append(onOS, key)
			require.Equal(t, "sleep 3600", p.cmdline, key)
		}
		slices.Sort(onOS)
		require.Equal(t, c.printed, onOS, "%s: printed vs /proc", c.what)
		byName[i] = map[string]int{}
		for _, p := range c.procs {
			byName[i][p.name] = p.pid
		}
		names := slices.Sorted(maps.Keys(byName[i]))
		require.Equal(t, want[i].names, names, c.what)
	}

	// The leftover was swept.
	stray := regexp.MustCompile(`os: start web-9 pid (\d+)`).FindStringSubmatch(v.text.String())
	require.NotNil(t, stray)
	strayPID, _ := strconv.Atoi(stray[1])
	require.NotContains(t, pidsOf(v.checks[0].procs), strayPID)
	// kill -9 was repaired with a new process; the others kept theirs.
	require.NotEqual(t, byName[0]["web-1"], byName[1]["web-1"])
	require.Equal(t, byName[0]["web-0"], byName[1]["web-0"])
	require.Equal(t, byName[0]["web-2"], byName[1]["web-2"])
	// The restarted controllers adopted the processes: same PIDs.
	require.Equal(t, byName[1], byName[2])
	require.Equal(t, 3, strings.Count(v.text.String(), "(running before this controller started)"))
	// Scaling down stopped web-2 only; deleting the set went through the GC.
	require.Equal(t, byName[2]["web-0"], byName[3]["web-0"])
	require.Equal(t, byName[2]["web-1"], byName[3]["web-1"])
	require.Contains(t, v.text.String(), "Instance web-0 marked for deletion by gc")
	require.Contains(t, v.text.String(), "Instance web-1 marked for deletion by gc")

	requireNoneLeft(t, fleet, v.pids)
}

// isChildOf reports whether pid's parent is ppid.
func isChildOf(pid, ppid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(f) > 1 && f[1] == strconv.Itoa(ppid)
}

// Cancelling run (Ctrl-C) in the middle of the story still kills every
// process it started before it returns.
func TestCancelKillsTheFleet(t *testing.T) {
	fleet := testFleet(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	v := newVerifier(t, fleet)
	v.onLine = func(line string) {
		if strings.Contains(line, "== kill -9") {
			cancel()
		}
	}
	err := run(ctx, []string{"-fleet", fleet}, v)
	require.ErrorIs(t, err, context.Canceled)
	// The story may pass one more checkpoint before it sees the cancel (CI
	// once saw the repair land first); it must not reach its end.
	require.NotEmpty(t, v.checks)
	require.Len(t, v.checks[0].procs, 3, "three were running when it was cancelled")
	require.NotContains(t, v.text.String(), "== done")
	requireNoneLeft(t, fleet, v.pids)
}

// A crash of the whole program (SIGKILL: no deferred cleanup runs) still
// takes its processes with it: each is started with the parent-death signal.
// The program runs in a child process that stops at its first checkpoint.
func TestCrashKillsTheFleet(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	fleet := testFleet(t)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+fleet)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	sc := bufio.NewScanner(out)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "✓ 3 running") {
			break
		}
	}
	require.Len(t, fleetProcs(t, fleet), 3, "three run before the crash:\n%s", strings.Join(seen, "\n"))
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	go func() { _, _ = io.Copy(io.Discard, out) }()
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "killed: %v", err)

	// The kernel delivers the parent-death signal as the parent exits;
	// the children's own exit is asynchronous, so give it a moment.
	deadline := time.Now().Add(5 * time.Second)
	for len(fleetProcs(t, fleet)) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Empty(t, fleetProcs(t, fleet), "processes outlived their crashed parent")
}

func TestBadArguments(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-replicas", "1"}, "-replicas 1"},
		{[]string{"-replicas", "-4"}, "-replicas -4"},
		{[]string{"-replicas", "51"}, "-replicas 51"},
		{[]string{"-fleet", "Bad/Name"}, "-fleet"},
		{[]string{"-set", "Web"}, "-set"},
		{[]string{"-timeout", "0s"}, "-timeout"},
		{[]string{"--", "no-such-command-steady"}, "no-such-command-steady"},
		{[]string{"-nope"}, "not defined"},
	}
	for _, tt := range tests {
		var out strings.Builder
		err := run(t.Context(), tt.args, &out)
		require.ErrorContains(t, err, tt.want, "args %q", tt.args)
		require.Equal(t, 2, cli.ExitCode(err), "a bad command line exits 2")
	}
	var out strings.Builder
	require.Equal(t, 0, cli.ExitCode(run(t.Context(), []string{"-h"}, &out)), "-h succeeds")
	require.Contains(t, out.String(), "usage: processes", "-h prints the usage")
}

// Another run of the same fleet is refused, and its processes are left
// alone.
func TestRefusesABusyFleet(t *testing.T) {
	fleet := testFleet(t)
	other := newOSProcs(fleet, func(string, ...any) {})
	pid, err := other.start("web-0", "someone-else", []string{"sleep", "3600"})
	require.NoError(t, err)
	defer func() { require.NoError(t, other.shutdown()) }()

	var out strings.Builder
	err = run(t.Context(), []string{"-fleet", fleet}, &out)
	require.ErrorContains(t, err, "already has processes")
	require.True(t, alive(pid), "the other run's process is left alone")
}
