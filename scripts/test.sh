#!/usr/bin/env bash
# Runs every test of every Go module in this repository with the race
# detector, then prints one summary line: "tests: N passed, N failed".
# Usage: bash scripts/test.sh [extra go test flags]
# The bench/ module holds side-by-side benchmarks only and is not run here.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
# Each module is tested against its own go.mod, as its users build it, not
# in the workspace of go.work (which would resolve versions across modules).
export GOWORK=off
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

mods=$(cd "$root" && find . -name go.mod -not -path './bench/*' -not -path '*/testdata/*' | sort)
for mod in $mods; do
  dir=$(dirname "$mod")
  echo "== module $dir (go test -race)"
  if ! (cd "$root/$dir" && go test -race -count=1 -v "$@" ./... >"$log.mod" 2>&1); then
    status=1
    # What failed, with the output that led up to it.
    grep -B40 -E '^\s*--- FAIL|^FAIL|^panic:|build failed|cannot find|undefined' "$log.mod" | grep -vE '^\s*--- PASS|^=== (RUN|PAUSE|CONT)' | tail -300
  fi
  cat "$log.mod" >>"$log"
  grep -E '^(ok|FAIL)\s' "$log.mod" || true
  rm -f "$log.mod"
done

# Long schedules without -race (the -race run above uses fewer).
if [ -d "$root/reconcile/reconciletest" ]; then
  echo "== reconcile/reconciletest without -race"
  if ! (cd "$root" && go test -count=1 -v -run 'Schedules' ./reconcile/reconciletest -schedules=1000 >"$log.mod" 2>&1); then
    status=1
  fi
  cat "$log.mod" >>"$log"
  grep -E '^(ok|FAIL|panic:)|^\s*--- FAIL' "$log.mod" || true
  rm -f "$log.mod"
fi

passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # a build failure or a panic fails without a --- FAIL line
fi
echo "tests: $passed passed, $failed failed"
exit "$status"
