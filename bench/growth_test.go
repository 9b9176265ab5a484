package bench

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeCtl writes a program named side into dir that stands for
// ctl-steady or ctl-clientgo: each run prints the next line of
// dir/side.N (N the -objects it was given, N+I with -idle I) after
// "side=side objects=N", logs "side N" to dir/order, and "side G" to
// dir/gogc, G its GOGC ("unset" when it has none).
func fakeCtl(t *testing.T, dir, side string, figures map[string][]string) string {
	t.Helper()
	for n, lines := range figures {
		require.NoError(t, os.WriteFile(filepath.Join(dir, side+"."+n), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	}
	prog := filepath.Join(dir, side)
	script := `#!/usr/bin/env bash
set -eu
n= idle=
while (($#)); do
  [[ $1 == -objects ]] && n=$2
  [[ $1 == -idle ]] && idle=$2
  shift
done
[[ -z $idle ]] || n=$n+$idle
dir=$(dirname "$0") side=$(basename "$0")
c=$(cat "$dir/$side.$n.count" 2>/dev/null || echo 0)
echo $((c + 1)) >"$dir/$side.$n.count"
echo "$side $n" >>"$dir/order"
echo "$side ${GOGC-unset}" >>"$dir/gogc"
echo "set-up done"
echo "side=$side objects=$n $(sed -n "$((c + 1))p" "$dir/$side.$n")"
`
	require.NoError(t, os.WriteFile(prog, []byte(script), 0o755))
	return prog
}

// bashTempDir skips t where bash cannot run growth.sh, and returns a
// directory for its fake programs.
func bashTempDir(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a bash script")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	return t.TempDir()
}

// growthSh runs growth.sh with args, and env added to the environment,
// and returns what it printed on stdout and its exit code.
func growthSh(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"growth.sh"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), 0
}

// growth.sh runs the programs it is given, four a round in ABBA order,
// and reports each side's growth as the median over rounds of the large
// run's CPU per event over the small run's: the amortized figure where a
// run has one, the measured one where it reads -1, a round in which a run
// merged updates left out, one in which a run only lagged counted. Its
// verdict is steady's median growth against the bound: exit 0 within it,
// 3 over it.
func TestGrowthShJudgesSteadysMedianGrowth(t *testing.T) {
	dir := bashTempDir(t)
	steady := fakeCtl(t, dir, "steady", map[string][]string{
		"100": {
			"cpu_us_per_event=19 cpu_amortized_us_per_event=20 missed=0 kept_up=1",
			"cpu_us_per_event=22 cpu_amortized_us_per_event=-1 missed=0 kept_up=1",
			"cpu_us_per_event=21 cpu_amortized_us_per_event=21 missed=0 kept_up=1",
		},
		"1000": {
			"cpu_us_per_event=35 cpu_amortized_us_per_event=30 missed=0 kept_up=1",   // 30/20
			"cpu_us_per_event=33 cpu_amortized_us_per_event=-1 missed=0 kept_up=1",   // 33/22
			"cpu_us_per_event=90 cpu_amortized_us_per_event=99 missed=12 kept_up=0"}, // merged: left out
	})
	clientgo := fakeCtl(t, dir, "client-go", map[string][]string{
		"100":  {"cpu_us_per_event=30 cpu_amortized_us_per_event=30 missed=0 kept_up=1", "cpu_us_per_event=30 cpu_amortized_us_per_event=30 missed=0 kept_up=1", "cpu_us_per_event=30 cpu_amortized_us_per_event=30 missed=0 kept_up=1"},
		"1000": {"cpu_us_per_event=57 cpu_amortized_us_per_event=57 missed=0 kept_up=1", "cpu_us_per_event=63 cpu_amortized_us_per_event=63 missed=0 kept_up=0", "cpu_us_per_event=60 cpu_amortized_us_per_event=60 missed=0 kept_up=1"},
	})
	run := func(bound string) (string, int) {
		for _, f := range []string{"steady.100.count", "steady.1000.count", "client-go.100.count", "client-go.1000.count", "order"} {
			os.Remove(filepath.Join(dir, f))
		}
		return growthSh(t, []string{"STEADY_CTL=" + steady, "CLIENTGO_CTL=" + clientgo}, "-r", "3", "-n", "100", "-N", "1000", "-b", bound)
	}

	out, code := run("1.5")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^steady +21\.00 +31\.50 +1\.50 +1\.50-1\.50 +2 of 3 \(2\)$`, out,
		"rounds 1 and 2 (30/20, the measured 33/22 where the amortized reads -1); round 3 left out")
	require.Regexp(t, `(?m)^client-go +30\.00 +60\.00 +2\.00 +1\.90-2\.10 +3 of 3 \(0\)$`, out)
	require.Contains(t, out, "merged updates (left out of the growth):\n  steady large round 3: 12 updates missed\n")
	require.Contains(t, out, "lagged past -max-lag, every update reconciled (counted):\n  client-go large round 2\n")
	require.Contains(t, out, "steady: growth 1.50 is within the bound 1.5\n")
	order, err := os.ReadFile(filepath.Join(dir, "order"))
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{
		"steady 100", "steady 1000", "client-go 1000", "client-go 100",
		"client-go 100", "client-go 1000", "steady 1000", "steady 100",
		"steady 100", "steady 1000", "client-go 1000", "client-go 100",
	}, "\n")+"\n", string(order), "ABBA over sides and sizes")

	out, code = run("1.45")
	require.Equal(t, 3, code, out)
	require.Contains(t, out, "steady: growth 1.50 is over the bound 1.45\n")
}

// With no round left to count (steady merged updates at the large size in
// every one), growth.sh gives no verdict and exits 4: neither within the
// bound nor over it.
func TestGrowthShGivesNoVerdictWhenNoRoundCounts(t *testing.T) {
	dir := bashTempDir(t)
	steady := fakeCtl(t, dir, "steady", map[string][]string{
		"100":  {"cpu_us_per_event=20 cpu_amortized_us_per_event=20 missed=0 kept_up=1", "cpu_us_per_event=20 cpu_amortized_us_per_event=20 missed=0 kept_up=1"},
		"1000": {"cpu_us_per_event=25 cpu_amortized_us_per_event=25 missed=7 kept_up=0", "cpu_us_per_event=25 cpu_amortized_us_per_event=25 missed=9 kept_up=0"},
	})
	out, code := growthSh(t, []string{"STEADY_CTL=" + steady}, "-r", "2", "-n", "100", "-N", "1000", "-s", "steady")
	require.Equal(t, 4, code, out)
	require.Regexp(t, `(?m)^steady +- +- +- +- +0 of 2 \(0\)$`, out)
	require.Contains(t, out, "steady: every round merged updates: no verdict\n")
}

// growth.sh refuses sides it does not know, and a run without steady's
// (the verdict is steady's), with exit 2, before it builds or runs
// anything.
func TestGrowthShRejectsBadSides(t *testing.T) {
	bashTempDir(t)
	for _, sides := range []string{"steady,kubebuilder", "client-go", ""} {
		out, code := growthSh(t, []string{"STEADY_CTL=/nonexistent", "CLIENTGO_CTL=/nonexistent"}, "-s", sides)
		require.Equal(t, 2, code, "-s %q: %s", sides, out)
		require.Empty(t, out, "-s %q", sides)
	}
}

// With -i, each round also runs steady's small key space in the large
// heap (-idle large-small), between its small and large runs, and
// growth.sh reports that run's figure, its ratio to the small one, and
// the heap's share of the growth, (heap-small)/(large-small), as medians
// over the rounds in which all three counted. A heap run that merged
// updates leaves its round out of the share, not out of the growth.
func TestGrowthShSplitsTheGrowthWithTheHeapRun(t *testing.T) {
	dir := bashTempDir(t)
	steady := fakeCtl(t, dir, "steady", map[string][]string{
		"100": {
			"cpu_us_per_event=20 cpu_amortized_us_per_event=20 missed=0 kept_up=1",
			"cpu_us_per_event=20 cpu_amortized_us_per_event=20 missed=0 kept_up=1",
			"cpu_us_per_event=20 cpu_amortized_us_per_event=20 missed=0 kept_up=1",
		},
		"100+900": {
			"cpu_us_per_event=26 cpu_amortized_us_per_event=26 missed=0 kept_up=1", // 1.3x; 6 of 10
			"cpu_us_per_event=28 cpu_amortized_us_per_event=-1 missed=0 kept_up=0", // 1.4x; 8 of 12
			"cpu_us_per_event=99 cpu_amortized_us_per_event=99 missed=5 kept_up=0", // merged: left out
		},
		"1000": {
			"cpu_us_per_event=30 cpu_amortized_us_per_event=30 missed=0 kept_up=1",
			"cpu_us_per_event=32 cpu_amortized_us_per_event=32 missed=0 kept_up=1",
			"cpu_us_per_event=30 cpu_amortized_us_per_event=30 missed=0 kept_up=1",
		},
	})
	out, code := growthSh(t, []string{"STEADY_CTL=" + steady}, "-r", "3", "-n", "100", "-N", "1000", "-s", "steady", "-i")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^steady +20\.00 +30\.00 +1\.50 +1\.50-1\.60 +3 of 3 \(0\)$`, out, "the heap run's merged updates do not leave round 3 out of the growth")
	require.Contains(t, out, "steady, the small key space in the large heap (-i): 27.00 us/event, 1.35x the small (1.30-1.40) over 2 rounds (1 fell back); the heap's share of the growth 63% (60-67%) over 2 rounds\n")
	require.Contains(t, out, "  steady heap round 3: 5 updates missed\n")
	require.Contains(t, out, "  steady heap round 2\n", "lagged")
	order, err := os.ReadFile(filepath.Join(dir, "order"))
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{
		"steady 100", "steady 100+900", "steady 1000",
		"steady 1000", "steady 100+900", "steady 100",
		"steady 100", "steady 100+900", "steady 1000",
	}, "\n")+"\n", string(order), "the heap run between the small and the large, ABBA")
}

// A round whose large run cost no more than its small one has no growth
// for the heap to take a share of: growth.sh gives the heap run's ratio
// and no share, rather than a share of nothing.
func TestGrowthShGivesNoShareOfNoGrowth(t *testing.T) {
	dir := bashTempDir(t)
	steady := fakeCtl(t, dir, "steady", map[string][]string{
		"100":     {"cpu_us_per_event=20 cpu_amortized_us_per_event=20 missed=0 kept_up=1"},
		"100+900": {"cpu_us_per_event=24 cpu_amortized_us_per_event=24 missed=0 kept_up=1"},
		"1000":    {"cpu_us_per_event=19 cpu_amortized_us_per_event=19 missed=0 kept_up=1"},
	})
	out, code := growthSh(t, []string{"STEADY_CTL=" + steady}, "-r", "1", "-n", "100", "-N", "1000", "-s", "steady", "-i")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "steady, the small key space in the large heap (-i): 24.00 us/event, 1.20x the small (1.20-1.20) over 1 rounds (0 fell back); the heap's share of the growth - (no round grew)\n")
}

// GOGC in growth.sh's environment reaches every program it runs, and its
// summary names the setting the figures were taken at: the GC's default
// (100) when none is set.
func TestGrowthShPassesGOGCToEachRunAndNamesIt(t *testing.T) {
	for _, gogc := range []string{"200", ""} {
		dir := bashTempDir(t)
		steady := fakeCtl(t, dir, "steady", map[string][]string{
			"100":  {"cpu_us_per_event=20 cpu_amortized_us_per_event=-1 missed=0 kept_up=1"},
			"1000": {"cpu_us_per_event=28 cpu_amortized_us_per_event=-1 missed=0 kept_up=1"},
		})
		cmd := exec.Command("bash", "growth.sh", "-r", "1", "-n", "100", "-N", "1000", "-s", "steady")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOGC=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "STEADY_CTL="+steady)
		want, named := "steady unset\nsteady unset\n", "GOGC=100;"
		if gogc != "" {
			cmd.Env = append(cmd.Env, "GOGC="+gogc)
			want, named = "steady 200\nsteady 200\n", "GOGC=200;"
		}
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		got, err := os.ReadFile(filepath.Join(dir, "gogc"))
		require.NoError(t, err)
		require.Equal(t, want, string(got), "the GOGC each program ran with")
		require.Contains(t, string(out), named)
		require.Regexp(t, `(?m)^steady +20\.00 +28\.00 +1\.40 `, string(out))
	}
}

// With -m, each round also runs each side at the sizes it names, between
// the small and the large run in order of size (reversed in ABBA), with a
// warm-up of two updates per object or the small run's, whichever is more,
// and growth.sh gives per side and size the median figure and the median
// ratio to the small run of the same round. A mid-size run that merged
// updates leaves its round out of its own row, not out of the verdict; a
// small run that merged leaves its round out of every row.
func TestGrowthShGivesTheGrowthAtEachMidSize(t *testing.T) {
	dir := bashTempDir(t)
	ok := func(f string) string {
		return "cpu_us_per_event=1 cpu_amortized_us_per_event=" + f + " missed=0 kept_up=1"
	}
	steady := fakeCtl(t, dir, "steady", map[string][]string{
		"100":  {ok("20"), ok("20"), ok("20"), "cpu_us_per_event=20 cpu_amortized_us_per_event=20 missed=3 kept_up=0"},
		"200":  {ok("24"), ok("26"), "cpu_us_per_event=99 cpu_amortized_us_per_event=99 missed=4 kept_up=0", ok("25")}, // 1.2, 1.3; merged; small merged
		"400":  {ok("28"), "cpu_us_per_event=27 cpu_amortized_us_per_event=-1 missed=0 kept_up=0", ok("29"), ok("29")}, // 1.4, 1.35 (fell back, lagged), 1.45
		"1000": {ok("30"), ok("30"), ok("30"), ok("30")},
	})
	clientgo := fakeCtl(t, dir, "client-go", map[string][]string{
		"100":  {ok("30"), ok("30"), ok("30"), ok("30")},
		"200":  {ok("45"), ok("45"), ok("45"), ok("45")},
		"400":  {ok("48"), ok("48"), ok("48"), ok("48")},
		"1000": {ok("60"), ok("60"), ok("60"), ok("60")},
	})
	prog := func(fake string) string { // logs "objects warmup" of each run
		p := fake + "-w"
		require.NoError(t, os.WriteFile(p, []byte("#!/usr/bin/env bash\nargs=\" $* \"; o=${args#* -objects }; w=${args#* -warmup }\necho \"${o%% *} ${w%% *}\" >>"+filepath.Join(dir, "warmups")+"\nexec "+fake+" \"$@\"\n"), 0o755))
		return p
	}
	out, code := growthSh(t, []string{"STEADY_CTL=" + prog(steady), "CLIENTGO_CTL=" + prog(clientgo)},
		"-r", "4", "-n", "100", "-N", "1000", "-W", "300", "-m", "200,400")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `(?m)^steady +20\.00 +30\.00 +1\.50 +1\.50-1\.50 +3 of 4 \(0\)$`, out, "the verdict leaves out only round 4, whose small run merged")
	require.Regexp(t, `(?m)^steady +200 +25\.00 +1\.25 +1\.20-1\.30 +2 of 4 \(0\)$`, out, "rounds 1 and 2: 3 merged at 200, 4 at 100")
	require.Regexp(t, `(?m)^steady +400 +28\.00 +1\.40 +1\.35-1\.45 +3 of 4 \(1\)$`, out, "rounds 1-3, the measured 27 in round 2")
	require.Regexp(t, `(?m)^client-go +200 +45\.00 +1\.50 +1\.50-1\.50 +4 of 4 \(0\)$`, out)
	require.Regexp(t, `(?m)^client-go +400 +48\.00 +1\.60 +1\.60-1\.60 +4 of 4 \(0\)$`, out)
	require.Contains(t, out, "  steady 200 objects round 3: 4 updates missed\n")
	require.Contains(t, out, "  steady 400 objects round 2\n", "lagged")
	require.Contains(t, out, "at 200,400 objects (-m) two per object or 300;")
	order, err := os.ReadFile(filepath.Join(dir, "order"))
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{
		"steady 100", "steady 200", "steady 400", "steady 1000", "client-go 1000", "client-go 400", "client-go 200", "client-go 100",
		"client-go 100", "client-go 200", "client-go 400", "client-go 1000", "steady 1000", "steady 400", "steady 200", "steady 100",
	}, "\n"), strings.Join(strings.Split(string(order), "\n")[:16], "\n"), "ABBA over sides and sizes, the mid sizes between")
	w, err := os.ReadFile(filepath.Join(dir, "warmups"))
	require.NoError(t, err)
	warmups := strings.Split(strings.TrimSpace(string(w)), "\n")
	require.Equal(t, []string{"100 300", "200 400", "400 800", "1000 2000"}, warmups[:4], "two updates per object, or -W's when more")

	for _, bad := range []string{"50", "1000", "400,200", "200,x", "200,,400"} {
		out, code := growthSh(t, []string{"STEADY_CTL=/nonexistent"}, "-n", "100", "-N", "1000", "-s", "steady", "-m", bad)
		require.Equal(t, 2, code, "-m %q: %s", bad, out)
	}
}

// With -i and -m together, steady's heap run comes right after its small
// run and the mid sizes after it, in increasing order; the round after
// runs them all in reverse.
func TestGrowthShRunsTheHeapRunBeforeTheMidSizes(t *testing.T) {
	dir := bashTempDir(t)
	ok := "cpu_us_per_event=20 cpu_amortized_us_per_event=20 missed=0 kept_up=1"
	steady := fakeCtl(t, dir, "steady", map[string][]string{
		"100": {ok, ok}, "100+900": {ok, ok}, "200": {ok, ok}, "400": {ok, ok}, "1000": {ok, ok},
	})
	out, code := growthSh(t, []string{"STEADY_CTL=" + steady}, "-r", "2", "-n", "100", "-N", "1000", "-s", "steady", "-i", "-m", "200,400")
	require.Equal(t, 0, code, out)
	order, err := os.ReadFile(filepath.Join(dir, "order"))
	require.NoError(t, err)
	require.Equal(t, strings.Join([]string{
		"steady 100", "steady 100+900", "steady 200", "steady 400", "steady 1000",
		"steady 1000", "steady 400", "steady 200", "steady 100+900", "steady 100",
	}, "\n")+"\n", string(order))
	require.Regexp(t, `(?m)^steady +400 +20\.00 +1\.00 +1\.00-1\.00 +2 of 2 \(0\)$`, out)
}
