#!/usr/bin/env bash
# Measures a new user's first run: `go run ./examples/fleet` from a fresh
# clone, with empty build and module caches (fresh temporary GOCACHE and
# GOMODCACHE, so the shared caches are neither used nor disturbed), until
# the program prints its first line. Prints that line, then
# "coldrun: N.N CPU-seconds (user+sys), N.N s wall to the first line",
# and exits 1 if the CPU-seconds exceed the budget.
#
# CPU-seconds are the figure to read on a shared machine: load stretches
# the wall time, not the work. On an idle machine with two cores the wall
# time is at most the CPU time (less, as the compiler runs in parallel).
#
# Usage: bash scripts/coldrun.sh [-budget SECONDS] [-warm-modcache] [PACKAGE [ARGS...]]
#   -budget N        CPU-seconds allowed (default 60)
#   -warm-modcache   use the shared module cache (measure the build alone,
#                    without the downloads)
#   PACKAGE ARGS     what to run (default ./examples/fleet)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$PATH:/usr/local/go/bin"
budget=60
fresh_mod=1
while [ $# -gt 0 ]; do
  case "$1" in
    -budget) budget=$2; shift 2 ;;
    -warm-modcache) fresh_mod=""; shift ;;
    -h | -help | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[ $# -eq 0 ] && set -- ./examples/fleet
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export GOCACHE=$tmp/gocache
[ -n "$fresh_mod" ] && export GOMODCACHE=$tmp/gomodcache GOFLAGS="${GOFLAGS:-} -modcacherw"
cd "$root"
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
echo "coldrun: $cpu CPU-seconds (user $user + sys $sys), $wall s wall to the first line, $downloads modules downloaded$([ -z "$fresh_mod" ] && echo ' (module cache warm)')"
awk -v c="$cpu" -v b="$budget" 'BEGIN { exit !(c <= b) }' || { echo "coldrun: over the budget of $budget CPU-seconds"; exit 1; }
