#!/usr/bin/env bash
# Fuzzes every fuzz target of every module for a budget each, for use
# before a release or after a change to a fuzzed package. CI does not run
# it (20 targets at the default 40s take about 14 minutes on 2 cores); the
# test command runs each target's seed corpus as a plain test already.
#
# Usage: bash scripts/fuzz.sh [-t budget] [-m budget] [-run regexp]
#   -t budget    each target's -fuzztime (default $FUZZ_TIME or 40s); a
#                count such as 200000x has no wall-clock deadline to race
#   -m budget    -fuzzminimizetime (default $FUZZ_MINIMIZE or 2s): go test
#                minimizes each new interesting input for up to 60s by
#                default, counting no executions meanwhile, so that a
#                40s budget of FuzzOwnership ran 44 executions and found
#                nothing new, where with 2s it ran 10,744 and found 29;
#                a failing input is minimized as long before it is written
#   -run regexp  fuzz only the targets whose name matches (bash =~)
# It finds the targets itself, each func FuzzX(f *testing.F) in a _test.go
# file of a module's own packages, so that a target added later is not
# left out. A target fails when go test fails, and the failure names a
# failing input go test wrote (testdata/fuzz/FuzzX/...: rerun it with
# go test -run FuzzX/NAME). One exception: go test can fail at the end of
# a wall-clock budget with a bare "context deadline exceeded" and no
# input, a race in Go's fuzzing coordinator under CPU contention
# (go.dev/issue/75804, fixed in Go 1.27). Such a target is fuzzed again
# once, and fails if it does so again.
# Prints a line per target, then one summary line: "fuzz: N passed,
# N failed (N fuzzed again)", and exits non-zero on any failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export GOWORK=off # each module against its own go.mod, as scripts/test.sh does
go=${GO:-go}      # tests stand a fake in for it

budget=${FUZZ_TIME:-40s}
minimize=${FUZZ_MINIMIZE:-2s}
only=
usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    -t | -m | -run)
      if [ $# -lt 2 ]; then
        echo "fuzz.sh: $1 wants a value" >&2
        exit 2
      fi
      case "$1" in -t) budget=$2 ;; -m) minimize=$2 ;; -run) only=$2 ;; esac
      shift 2
      ;;
    -h | -help | --help) usage; exit 0 ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
for b in "-t $budget" "-m $minimize"; do
  if ! [[ ${b#* } =~ ^[1-9][0-9]*(x|ms|s|m|h)$ ]]; then
    echo "fuzz.sh: ${b%% *} wants a duration (40s, 2m) or a count (200000x), got '${b#* }'" >&2
    exit 2
  fi
done

# funcs prints "func FuzzX" for each func FuzzX(f *testing.F) that starts
# a line of file, and "raw FuzzX" for one inside a raw string (a test's
# Go source text, as scripts' own tests hold): a line starts inside one
# after an odd number of backquotes. A backquote in a rune or an
# interpreted string miscounts; a target after it is then named on a NOTE
# line, not left out unsaid.
funcs() { # file
  awk '{
    if (match($0, /^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)/)) {
      name = substr($0, 6, RLENGTH - 5); sub(/\(.*/, "", name)
      print (raw ? "raw " : "func ") name
    }
    if (gsub(/`/, "`") % 2) raw = !raw
  }' "$1"
}

# targets prints "module package target" for each fuzz target, the
# package relative to its module.
targets() {
  local mod dir nested file name pkg n
  for mod in $(cd "$root" && find . -name go.mod -not -path '*/testdata/*' | sort); do
    dir=${mod%/go.mod}
    # The module's own files: not those of modules nested in it.
    nested=()
    while read -r n; do
      nested+=(-not -path "${n%/go.mod}/*")
    done < <(cd "$root" && find "$dir" -mindepth 2 -name go.mod -not -path '*/testdata/*')
    while read -r file; do
      pkg=./${file#"$dir"/}
      while read -r kind name; do
        if [ "$kind" = raw ]; then
          echo "NOTE $file: $name is in a raw string, not a target" >&2
          continue
        fi
        echo "$dir ${pkg%/*} $name" # ./x_test.go gives .
      done < <(funcs "$root/$file")
    done < <(cd "$root" && find "$dir" -name '*_test.go' -not -path '*/testdata/*' "${nested[@]}" | sort)
  done
}

# inputs lists the failing inputs go test has written for target under
# dir (one path a line, relative to root).
inputs() { # dir target
  (cd "$root" && find "$1/testdata/fuzz/$2" -type f 2>/dev/null | sort)
}

# fuzz MODULE PACKAGE TARGET: runs go test -fuzz on one target; prints its
# output to $out, and returns 0 (passed), 1 (failed) or 3 (the
# coordinator's race: failed with a bare deadline and no input written).
fuzz() {
  local before after
  before=$(inputs "$1/${2#./}" "$3")
  (cd "$root/$1" && "$go" test -run '^$' -fuzz "^$3\$" -fuzztime "$budget" -fuzzminimizetime "$minimize" "$2") >"$out" 2>&1
  local code=$?
  after=$(inputs "$1/${2#./}" "$3")
  if [ $code = 0 ]; then
    grep -q '^fuzz: elapsed' "$out" && return 0
    echo "go test fuzzed nothing: no target $3 in $2?" >>"$out"
    return 1
  fi
  if [ "$before" != "$after" ]; then
    comm -13 <(echo "$before") <(echo "$after") | sed 's/^/  failing input: /' >>"$out"
    return 1
  fi
  # The race's whole report: the target's FAIL line, the bare deadline,
  # and go test's own trailer. Anything else is a failure.
  if grep -q '^    context deadline exceeded$' "$out" &&
    ! grep -vE '^(fuzz: |--- FAIL: Fuzz|    context deadline exceeded$|FAIL$|FAIL\s|exit status [0-9]+$|warning: )' "$out" | grep -q .; then
    return 3
  fi
  return 1
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
passed=0 failed=0 again=0 n=0
while read -r mod pkg name; do
  [ -z "$only" ] || [[ $name =~ $only ]] || continue
  n=$((n + 1))
  start=$SECONDS
  fuzz "$mod" "$pkg" "$name"
  code=$?
  if [ $code = 3 ]; then
    echo "AGAIN $mod $pkg $name: context deadline exceeded, no input written (go.dev/issue/75804)"
    again=$((again + 1))
    fuzz "$mod" "$pkg" "$name"
    code=$?
  fi
  if [ $code = 0 ]; then
    passed=$((passed + 1))
    execs=$(grep -oE 'execs: [0-9]+' "$out" | tail -1)
    found=$(grep -oE 'new interesting: [0-9]+' "$out" | tail -1)
    echo "ok   $mod $pkg $name in $((SECONDS - start))s${execs:+, ${execs#execs: } executions}${found:+, ${found#new interesting: } new interesting}"
  else
    failed=$((failed + 1))
    echo "FAIL $mod $pkg $name in $((SECONDS - start))s:"
    grep -v '^fuzz: elapsed' "$out" | tail -30 | sed 's/^/  /'
  fi
done < <(targets)
if [ $n = 0 ]; then
  echo "fuzz.sh: no fuzz target${only:+ matches '$only'}" >&2
  exit 1
fi
echo "fuzz: $passed passed, $failed failed ($again fuzzed again)"
[ $failed = 0 ]
