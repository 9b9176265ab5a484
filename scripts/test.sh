#!/usr/bin/env bash
# Runs every test of every Go module in this repository with the race
# detector, then prints one summary line: "tests: N passed, N failed".
# Usage: bash scripts/test.sh [extra go test flags]
# The bench/ module holds side-by-side benchmarks only and is not run here.
#
# Progress: "== module DIR" when a module starts, each package's ok/FAIL
# line as go test reports it, and "== module DIR: ok|FAIL in Ns" when the
# module is done, with its elapsed and CPU seconds. A cold first run spends most of its time compiling (the
# standard library and etcd's server, with -race) before the first result.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
# Each module is tested against its own go.mod, as its users build it, not
# in the workspace of go.work (which would resolve versions across modules).
export GOWORK=off
log=$(mktemp)
trap 'rm -f "$log" "$log.mod"' EXIT
status=0
suite_start=$SECONDS

# cpu prints the CPU seconds (user + system) this script's finished
# children have used so far: on a shared machine, the figure that load does
# not inflate.
cpu() {
  # Fields 16 and 17 of /proc/PID/stat: the waited-for children's user and
  # system time, in clock ticks ($$ is this script even in a subshell).
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($16 + $17) / hz }' "/proc/$$/stat" 2>/dev/null || echo 0
}

# run LABEL DIR GO-TEST-ARGS...: runs go test in DIR, streaming its package
# result lines, and appends its whole output to the log.
run() {
  local label=$1 dir=$2
  shift 2
  local start=$SECONDS start_cpu rc
  start_cpu=$(cpu)
  echo "== $label"
  (cd "$root/$dir" && go test "$@" 2>&1) | tee "$log.mod" | grep --line-buffered -E '^(ok|FAIL|panic:)\s|^--- FAIL'
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ]; then
    status=1
    # What failed, with the output that led up to it.
    grep -B40 -E '^\s*--- FAIL|^FAIL|^panic:|build failed|cannot find|undefined' "$log.mod" | grep -vE '^\s*--- PASS|^=== (RUN|PAUSE|CONT)' | tail -300
  fi
  cat "$log.mod" >>"$log"
  echo "== $label: $([ "$rc" -eq 0 ] && echo ok || echo FAIL) in $((SECONDS - start))s ($(($(cpu) - start_cpu))s of CPU)"
}

mods=$(cd "$root" && find . -name go.mod -not -path './bench/*' -not -path '*/testdata/*' | sort)
for mod in $mods; do
  dir=$(dirname "$mod")
  run "module $dir (go test -race)" "$dir" -race -count=1 -v "$@" ./...
done

# Long schedules without -race (the -race run above uses fewer).
if [ -d "$root/reconcile/reconciletest" ]; then
  run "reconcile/reconciletest without -race" . -count=1 -v -run 'Schedules' ./reconcile/reconciletest -schedules=1000
fi

passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # a build failure or a panic fails without a --- FAIL line
fi
echo "tests: $passed passed, $failed failed ($((SECONDS - suite_start))s, $(cpu)s of CPU)"
exit "$status"
