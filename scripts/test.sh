#!/usr/bin/env bash
# Runs every test of every Go module in this repository, then prints one
# summary line: "tests: N passed, N failed, N skipped".
# Usage: bash scripts/test.sh [-race] [extra go test flags]
#   (no flag)  README's test command: every test of every module without
#              the race detector, the seed sweeps, bug zoo and property
#              tests at their full, CI size. From an empty build cache
#              (modules downloaded) 344-355 CPU-seconds, 315-373 s at load
#              5-12; warm, 102-108 CPU-seconds, 113-123 s at load 9-16.
#   -race      every test of every module again with the race detector
#              (.ci/run runs it after the command above): the sweeps and
#              property tests at a fraction of their inputs (they ran in
#              full without it; see internal/race.Sweep and sweepSeeds),
#              and neither reconcile/reconciletest's TestSchedules nor its
#              TestCorpus. After the command above, on its build cache,
#              428 CPU-seconds, 592 s at load 9-12: the race detector
#              slows the tests 2 to 30 times, and everything compiles again
#              with it.
# The bench/ module's benchmarks do not run here (controller.sh and
# growth.sh run them); its tests, of the instruments (ctlbench's meter and
# plan, growth.sh's verdict, the set-up), do, as a nested module's.
#
# Progress: "== module DIR" when a module starts, each package's ok/FAIL
# line as go test reports it, and "== module DIR: ok|FAIL in Ns" when the
# module is done, with its elapsed and CPU seconds. A test that skipped
# itself (the browser test without Chromium, say) prints "SKIP Name: why"
# and is counted in the summary line as skipped, never as passed: "ok"
# means what ran passed, not that everything ran. A cold first run spends
# most of its time compiling (the standard library, etcd's server and
# Kubernetes' apimachinery) before the first results.
#
# The modules run side by side, in three lanes, so that the tests that
# wait (on timers, on etcd, on a PostgreSQL server) overlap with the ones
# that compute: the root module; the nested modules one after another
# (examples first: it compiles the heavy dependencies, etcd's server among
# them, that the later modules share, once, into the build cache), with
# store/etcdstore's module (its tests mostly wait on etcd's timers) started
# beside them once examples is done; and, without -race, the seed sweeps
# of reconcile/reconciletest (sweepsWithoutRace below), -schedules=300. The
# long runs (1000 schedules, the corpus's 2,000 each) are in
# scripts/flaky.sh and behind -corpus.full. Lines of the lanes interleave;
# each package's line names its package, and each module's last line its
# module.
#
# Every test a -run pattern names must have run: a renamed test would
# otherwise drop out of its lane unseen. A run prints "MISSING Name" for
# each one that did not, and fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
# Each module is tested against its own go.mod, as its users build it, not
# in the workspace of go.work (which would resolve versions across modules).
export GOWORK=off
log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
status=0
suite_start=$SECONDS

# cpu PID prints the CPU seconds (user + system) that the finished children
# of shell PID have used so far: on a shared machine, the figure that load
# does not inflate. Fields 16 and 17 of /proc/PID/stat hold them in clock
# ticks. PID is the caller's $BASHPID (this script, or its background job),
# taken outside $(...), which is a subshell.
cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($16 + $17) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# run LABEL DIR GO-TEST-ARGS...: runs go test in DIR, streaming its package
# result lines, and appends its whole output to $log. A failure sets status.
# Without go test's own go vet (-vet=off; an argument of the caller's may
# turn it on): .ci/run vets every module before this script, with all of
# go vet's checks, of which go test's are a subset, and a cold run would
# otherwise type-check every test package a second time.
# Its CPU figure is that of its own subshell's children, so that the lanes
# running beside it do not count.
run() {
  local label=$1 dir=$2
  shift 2
  (
    start=$SECONDS self=$BASHPID
    start_cpu=$(cpu "$self")
    out=$(mktemp "$log.XXXX")
    echo "== $label"
    (cd "$root/$dir" && go test -vet=off "$@" 2>&1) | tee "$out" | grep --line-buffered -E '^(ok|FAIL|panic:)\s|^--- FAIL'
    rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then
      # What failed, with the output that led up to it.
      grep -B40 -E '^\s*--- FAIL|^FAIL|^panic:|build failed|cannot find|undefined' "$out" | grep -vE '^\s*--- PASS|^=== (RUN|PAUSE|CONT)' | tail -300
    fi
    missing=$(unrun "$out" "$@")
    if [ -n "$missing" ]; then
      echo "$missing"
      echo "FAIL $label: the tests above are named in its -run pattern (scripts/test.sh) but did not run"
      rc=1
    fi
    skips=$(skipped "$out")
    cat "$out" >>"$log"
    rm -f "$out"
    [ -n "$skips" ] && echo "$skips"
    echo "== $label: $([ "$rc" -eq 0 ] && echo ok || echo FAIL) in $((SECONDS - start))s ($(($(cpu "$self") - start_cpu))s of CPU)$([ -n "$skips" ] && echo ", $(grep -c . <<<"$skips") SKIPPED")"
    exit "$rc"
  ) || status=1
}

# skipped FILE prints "SKIP Name: reason" for each test go test -v reported
# as skipped in FILE; the reason is the last line the test logged before
# (go test -v prints a test's t.Skip message above its "--- SKIP" line).
skipped() {
  awk '
    /^=== (RUN|CONT|PAUSE|NAME) / { why = ""; next }
    /^[ \t]+[^ ]+\.go:[0-9]+: / { why = $0; sub(/^[ \t]+[^ ]+\.go:[0-9]+: /, "", why); next }
    /^[ \t]*--- SKIP: / { print "SKIP " $3 (why == "" ? "" : ": " why); why = "" }
' "$1"
}

# unrun FILE GO-TEST-ARGS...: prints "MISSING Name" for each name in a
# -run '^(A|B)$' argument that has no "--- PASS|FAIL|SKIP: Name" line (go
# test -v) in FILE. The patterns of this script are lists of whole names.
unrun() {
  local file=$1 pattern="" name
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      -run) pattern=${2:-}; shift ;;
      -run=*) pattern=${1#-run=} ;;
    esac
    shift
  done
  [ -n "$pattern" ] || return 0
  pattern=${pattern#^(}
  pattern=${pattern%)\$}
  for name in ${pattern//|/ }; do
    grep -qE "^--- (PASS|FAIL|SKIP): $name \(" "$file" || echo "MISSING $name"
  done
}

# background LABEL DIR GO-TEST-ARGS...: run, as a background job with a log
# of its own; the end of the script waits for it.
bg_pids=()
background() {
  local n=${#bg_pids[@]}
  (
    log=$log.bg$n status=0
    run "$@"
    exit "$status"
  ) &
  bg_pids+=($!)
}

# -race, wherever it is among the arguments, picks the run with the race
# detector; the other arguments go to every go test.
race=()
args=()
for arg in "$@"; do
  case $arg in
    -race | -race=true) race=(-race) ;;
    *) args+=("$arg") ;;
  esac
done
set -- ${args[@]+"${args[@]}"}
with=${race[@]+"${race[@]}"}
label="go test${with:+ $with}"

# lane DIR...: runs the modules in DIRS one after another, as one
# background job with a log of its own; store/etcdstore's module starts
# beside the rest once the first (examples) is done.
lane() {
  local n=${#bg_pids[@]}
  (
    log=$log.bg$n status=0
    etcd_pid=""
    for dir in "$@"; do
      run "module $dir ($label)" "$dir" ${race[@]+"${race[@]}"} -count=1 -v "${extra[@]}" ./...
      if [ -z "$etcd_pid" ] && [ "$dir" = ./examples ] && [ -f "$root/store/etcdstore/go.mod" ]; then
        (
          log=$log.etcd status=0
          run "module ./store/etcdstore ($label, beside the other modules)" ./store/etcdstore ${race[@]+"${race[@]}"} -count=1 -v "${extra[@]}" ./...
          exit "$status"
        ) &
        etcd_pid=$!
      fi
    done
    if [ -n "$etcd_pid" ]; then
      wait "$etcd_pid" || status=1
      cat "$log.etcd" >>"$log" 2>/dev/null
    fi
    exit "$status"
  ) &
  bg_pids+=($!)
}

# The seed sweeps of reconcile/reconciletest: TestSchedules (300 seeded
# schedules here), TestCorpus (each correct controller at its CI count of
# schedules), and the sweeps that also run, on a quarter of the seeds,
# bugs or cases, under -race, with the checks of exact replay that the
# race detector skips. Without -race they run in a lane of their own,
# beside the root module's other tests; the -race run skips TestSchedules
# and TestCorpus, and the race detector still runs the harness through
# every other reconciletest test, TestEchoExample's 50 schedules among them.
sweepsWithoutRace='^(TestSchedules|TestCorpus|TestStaleTermWritesAreFencedOff|TestEachFaultIsInjectedAndSurvived|TestZoo|TestEveryViolationNamesAHarm|TestReplicas|TestSeedReplaysTheSchedule|TestFailureNamesHarmShortestScheduleAndReplay)$'

extra=("$@")
nested=()
for mod in $(cd "$root" && find . -name go.mod -not -path '*/testdata/*' -not -path './store/etcdstore/*' | sort); do
  dir=$(dirname "$mod")
  case $dir in
    .) ;;
    ./examples) nested=("$dir" ${nested[@]+"${nested[@]}"}) ;; # first: see above
    *) nested+=("$dir") ;;
  esac
done
# warmup [-race] -- PKGS... compiles what go test of PKGS compiles before
# its tests: their dependencies, test-only ones too (testify, goleak, the
# testing package's own), but not the packages built with their _test.go
# files.
warmup() {
  local flags=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  go list ${flags[@]+"${flags[@]}"} -deps -test -f '{{if and (not .ForTest) (ne .Name "main") (or .GoFiles .CgoFiles)}}{{.ImportPath}}{{end}}' "$@" |
    grep . | xargs -r go build ${flags[@]+"${flags[@]}"}
}
# The lanes share the standard library and the root module's packages. Two
# go commands that start side by side on an empty build cache each compile
# them, since neither finds the other's work in the cache yet; so they are
# compiled once here, before the lanes start (a warm cache makes this a
# second's check). A build error here shows again, with its test, in the
# lane that meets it.
(cd "$root" && warmup ${race[@]+"${race[@]}"} -- ./... >/dev/null 2>&1)
if [ ${#race[@]} -eq 0 ] && [ -d "$root/reconcile/reconciletest" ]; then
  # 38 CPU-seconds warm, 106 s at load 9-15; a loaded machine once timed
  # it out at go test's 10-minute default (a hang still fails, at 30).
  background "reconcile/reconciletest seed sweeps (beside the modules)" . -count=1 -timeout 30m -v -run "$sweepsWithoutRace" ./reconcile/reconciletest -schedules=300
fi
if [ ${#nested[@]} -gt 0 ]; then
  lane "${nested[@]}"
fi
# The root module's test binaries wait up to 30 minutes (go test's default
# is 10), as the sweeps lane's do: under -race, store/memstore's tests take
# 61 CPU-seconds, mostly on one goroutine at a time (its history and window
# tests), which took 408-478 s of wall time on two cores at load 17-21:
# within reach of the default on a loaded CI machine. A hang still fails,
# at 30.
if [ ${#race[@]} -eq 0 ]; then
  run "module . ($label)" . -count=1 -timeout 30m -v -skip "$sweepsWithoutRace" "$@" ./...
else
  run "module . ($label)" . -race -count=1 -timeout 30m -v -skip '^(TestSchedules|TestCorpus)$' "$@" ./...
fi
for i in "${!bg_pids[@]}"; do
  wait "${bg_pids[$i]}" || status=1
  cat "$log.bg$i" >>"$log" 2>/dev/null
done
passed=$(grep -cE '^\s*--- PASS' "$log" || true)
skips=$(skipped "$log")
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # a build failure or a panic fails without a --- FAIL line
fi
self=$BASHPID
if [ -n "$skips" ]; then
  echo "$skips"
  echo "tests: $passed passed, $failed failed, $(grep -c . <<<"$skips") SKIPPED (above: not run) ($((SECONDS - suite_start))s, $(cpu "$self")s of CPU)"
else
  echo "tests: $passed passed, $failed failed, 0 skipped ($((SECONDS - suite_start))s, $(cpu "$self")s of CPU)"
fi
exit "$status"
