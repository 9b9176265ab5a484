#!/usr/bin/env bash
# Reruns the tests that have flaked before, many times each, and the long
# seeded runs that scripts/test.sh keeps short, for use before a release.
# CI does not run it (it takes minutes to tens of minutes).
#
# Usage: bash scripts/flaky.sh [-lease N] [-etcd N] [-other N] [-schedules N] [-etcd-race] [-no-etcd]
#   -lease N     runs of store/lease TestOnlyOneLeaderAtATime, with -race
#                (default $FLAKY_LEASE_COUNT or 200; about 2 min on 2 cores)
#   -etcd N      runs of store/etcdstore TestControllerConvergesThroughEtcdLeaderLoss
#                (default $FLAKY_ETCD_COUNT or 20; about 15 s a run on 2 cores)
#   -etcd-race   run the etcd test with -race too (several times slower)
#   -no-etcd     skip the etcd test (it needs free loopback ports)
#   -other N     runs of each other test that once flaked under load, with -race
#                (default $FLAKY_OTHER_COUNT or 50)
#   -schedules N seeded schedules for reconcile/reconciletest TestSchedules,
#                without -race (default $FLAKY_SCHEDULES or 1000; test.sh runs
#                300, without -race, in the background)
# Prints a line per test as it finishes, then one summary line:
# "flaky: N passed, N failed" (test runs), and exits non-zero on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GOWORK=off # each module against its own go.mod, as scripts/test.sh does

lease=${FLAKY_LEASE_COUNT:-200}
etcd=${FLAKY_ETCD_COUNT:-20}
other=${FLAKY_OTHER_COUNT:-50}
schedules=${FLAKY_SCHEDULES:-1000}
etcd_race=""
no_etcd=""

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
count_arg() { # flag value
  if ! [[ "$2" =~ ^[1-9][0-9]*$ ]]; then
    echo "flaky.sh: $1 wants a positive count, got '$2'" >&2
    exit 2
  fi
}
while [ $# -gt 0 ]; do
  case "$1" in
    -lease) count_arg "$1" "${2:-}"; lease=$2; shift 2 ;;
    -etcd) count_arg "$1" "${2:-}"; etcd=$2; shift 2 ;;
    -other) count_arg "$1" "${2:-}"; other=$2; shift 2 ;;
    -schedules) count_arg "$1" "${2:-}"; schedules=$2; shift 2 ;;
    -etcd-race) etcd_race=1; shift ;;
    -no-etcd) no_etcd=1; shift ;;
    -h | -help | --help) usage; exit 0 ;;
    *) echo "flaky.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
for v in "$lease" "$etcd" "$other" "$schedules"; do count_arg "count" "$v"; done

log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0
failed=0
status=0

# run MODULE_DIR PACKAGE TEST COUNT RACE(0|1) [TEST-FLAGS...]: runs one
# test COUNT times, with the test binary's flags after the package.
run() {
  local dir=$1 pkg=$2 test=$3 count=$4 race=$5
  shift 5
  local flags=(-count="$count" -v -run "^${test}\$")
  [ "$race" = 1 ] && flags+=(-race)
  local start=$SECONDS
  (cd "$root/$dir" && go test "${flags[@]}" "$pkg" "$@") >"$log" 2>&1
  local rc=$?
  local p f
  p=$(grep -cE "^--- PASS: ${test} " "$log")
  f=$(grep -cE "^--- FAIL: ${test} " "$log")
  if [ "$rc" -ne 0 ]; then
    status=1
    # A panic (say a synctest deadlock) ends the binary without a FAIL line
    # for the runs it cut short: count those as failed.
    if [ $((p + f)) -lt "$count" ]; then f=$((count - p)); fi
    grep -B30 -E '^\s*--- FAIL|^FAIL|^panic:|build failed' "$log" | grep -vE '^\s*--- PASS|^=== RUN' | tail -80
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  local label="$dir/${pkg#./}"
  label=${label#./}
  label=${label%/.}
  printf '%-5s %s %s x%d%s: %d passed, %d failed (%ds)\n' \
    "$([ "$rc" -eq 0 ] && echo ok || echo FAIL)" "$label" "$test" "$count" \
    "$([ "$race" = 1 ] && echo ' -race')" "$p" "$f" $((SECONDS - start))
}

# Historically flaky, with the cause each fix addressed:
# - ties between terms at one synctest instant, and releases outliving the bubble;
run . ./store/lease TestOnlyOneLeaderAtATime "$lease" 1
# - etcd's peer HTTP connections outliving the cluster by ~4s (leak check);
if [ -z "$no_etcd" ]; then
  run store/etcdstore . TestControllerConvergesThroughEtcdLeaderLoss "$etcd" "$([ -n "$etcd_race" ] && echo 1 || echo 0)"
fi
# - timing bounds and retry budgets that were too tight under load.
run . ./store/lease TestReleaseLetsTheNextCandidateInAtOnce "$other" 1
run . ./store TestConcurrentDisjointAppliesAllLand "$other" 1
run . ./queue TestDelaysUseOneTimerAndNoGoroutinePerKey "$other" 1
# The long seeded run: every fault through $schedules schedules, without
# -race (which slows a schedule about sixfold).
run . ./reconcile/reconciletest TestSchedules 1 0 -schedules="$schedules"
# Fresh seeds of the server-side-apply differential test (CI runs the fixed
# ones only, so that it is deterministic).
run ownership/ssacheck . TestDifferential 1 0 -fresh=50

echo "flaky: $passed passed, $failed failed"
exit "$status"
