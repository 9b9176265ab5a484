#!/usr/bin/env bash
# Measures a new user's first run from a fresh clone, with an empty build
# cache, in CPU-seconds:
#   - by default `go run ./examples/fleet`, with an empty module cache too
#     (fresh temporary GOCACHE and GOMODCACHE, so the shared caches are
#     neither used nor disturbed), until the program prints its first line.
#     Prints that line, then "coldrun: N.N CPU-seconds (user+sys), N.N s
#     wall to the first line".
#   - with -tests, README's test command, `bash scripts/test.sh`, whole, on
#     an empty build cache and the shared module cache (the modules
#     downloaded: `go mod download` in each module first, or a first run).
#     Prints test.sh's output, then "coldrun: N.N CPU-seconds (user+sys),
#     N.N s wall, README's test command".
# Both print the load average before and after, and exit 1 if the
# CPU-seconds exceed the budget (or the build, or a test, fails).
#
# CPU-seconds are the figure to read on a shared machine: load stretches
# the wall time, not the work. On an idle machine with two cores the wall
# time is at most the CPU time (less, as the compiler runs in parallel).
#
# Usage: bash scripts/coldrun.sh [-budget SECONDS] [-warm-modcache] [-gocache DIR] [PACKAGE [ARGS...]]
#        bash scripts/coldrun.sh -tests [-budget SECONDS] [-gocache DIR] [TEST.SH ARGS...]
#   -budget N        CPU-seconds allowed (default 60; 480 with -tests)
#   -warm-modcache   use the shared module cache (measure the build alone,
#                    without the downloads); -tests always does
#   -gocache DIR     build into DIR, which must be empty or absent, and keep
#                    it (to measure a warm run on it next) instead of a
#                    temporary build cache
#   -tests           measure README's test command, not a program
#   PACKAGE ARGS     what to run (default ./examples/fleet)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
budget=""
fresh_mod=1
tests=""
gocache=""
while [ $# -gt 0 ]; do
  case "$1" in
    -budget) budget=$2; shift 2 ;;
    -warm-modcache) fresh_mod=""; shift ;;
    -gocache) gocache=$2; shift 2 ;;
    -tests) tests=1 fresh_mod=""; shift ;;
    -h | -help | --help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export GOCACHE=$tmp/gocache
mkdir -p "$GOCACHE"
if [ -n "$gocache" ]; then
  if [ -n "$(ls -A "$gocache" 2>/dev/null)" ]; then
    echo "coldrun: -gocache $gocache is not empty"
    exit 2
  fi
  mkdir -p "$gocache" && GOCACHE=$(cd "$gocache" && pwd)
fi
[ -n "$fresh_mod" ] && export GOMODCACHE=$tmp/gomodcache GOFLAGS="${GOFLAGS:-} -modcacherw"
cd "$root"
load() { cut -d' ' -f1-3 /proc/loadavg; }

if [ -n "$tests" ]; then
  budget=${budget:-480}
  before=$(load)
  /usr/bin/time -f '%U %S %e' -o "$tmp/time" bash scripts/test.sh "$@"
  rc=$?
  # time writes "Command exited with non-zero status N" above its figures.
  read -r user sys wall < <(tail -n 1 "$tmp/time")
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
  echo "coldrun: $cpu CPU-seconds (user $user + sys $sys), $wall s wall, README's test command (bash scripts/test.sh${*:+ $*}) on an empty build cache, module cache warm; load average $before before, $(load) after"
  [ "$rc" -eq 0 ] || { echo "coldrun: the tests failed"; exit 1; }
  awk -v c="$cpu" -v b="$budget" 'BEGIN { exit !(c <= b) }' || { echo "coldrun: over the budget of $budget CPU-seconds"; exit 1; }
  exit 0
fi

budget=${budget:-60}
[ $# -eq 0 ] && set -- ./examples/fleet
before=$(load)
# The program stops at its second write, once head has gone (SIGPIPE);
# everything up to the first line is counted, go's downloads, its
# compilers and linker, and the program's start.
# Standard error (go's downloads, the program's log) goes to a file.
/usr/bin/time -f '%U %S %e' -o "$tmp/time" bash -c 'go run "$@" 2>"$0" | head -n 1' "$tmp/stderr" "$@"
read -r user sys wall <"$tmp/time"
cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
downloads=$(grep -c '^go: downloading' "$tmp/stderr")
if grep -qE '^(# |.*\.go:[0-9]+:[0-9]+: |go: .*(error|cannot|not found))' "$tmp/stderr"; then
  cat "$tmp/stderr"
  echo "coldrun: the build failed"
  exit 1
fi
echo "coldrun: $cpu CPU-seconds (user $user + sys $sys), $wall s wall to the first line, $downloads modules downloaded$([ -z "$fresh_mod" ] && echo ' (module cache warm)'); load average $before before, $(load) after"
awk -v c="$cpu" -v b="$budget" 'BEGIN { exit !(c <= b) }' || { echo "coldrun: over the budget of $budget CPU-seconds"; exit 1; }
