#!/usr/bin/env bash
# Where BenchmarkEventToReconcile/steady's instructions per event go, with
# the guarantees client-go lacks (ownership records, the apply's merge, the
# change judge and oscillation detection) apart from the rest, next to
# client-go's total: the profile issue 26 asks for, counted rather than
# sampled, so that two commits compare without noise.
#
# It counts instructions with callgrind (GOMAXPROCS=1, GOGC=off, no async
# preemption) at N and 2N ops and takes the difference over N, so set-up
# and one-off costs cancel out, then sums the inclusive cost of named
# functions. The guarantee rows name functions that do nothing else (each
# row's functions do not call one another), so they add up; the part rows
# (the other writer's read and write, the cache's decode and handlers, the
# reconcile) are inclusive of the guarantees inside them. Each row takes a
# function's entry in its own file: callgrind lists code inlined from other
# files apart, and those entries are parts of it. Functions that wait
# (channel receives, selects, the benchmark's own loop) have no row: across
# goroutine switches callgrind's inclusive costs are not to be trusted, so
# the rows do not add up to the total, and the rest is the queue, the
# scheduler and the runtime. GC is off, so its cost (about a tenth of a
# real run's CPU on both sides) is not in it. It prints the two totals
# first; a run whose rows callgrind confused (a goroutine preempted inside
# a rowed function misleads its shadow stack: a row below zero, or parts
# adding up to more than the total) ends there, with an error, rather than
# printing a split that is not one: run it again.
#
# Usage: split.sh [-n ops]   (default 2000; needs valgrind, ~5 minutes)
set -euo pipefail
ops=2000
while getopts n: opt; do
  case $opt in
    n) ops=${OPTARG%x} ;;
    *) sed -n '2,/^set -e/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
  { echo "split.sh: needs valgrind and callgrind_annotate" >&2; exit 1; }
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 GOWORK=off go test -c -o "$work/bench.test" .

# count SIDE N: the inclusive cost of every function, one "cost file:function" line each.
count() {
  GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
    --callgrind-out-file="$work/$1-$2.cg" "$work/bench.test" -test.run '^$' \
    -test.bench "EventToReconcile\$/^$1\$" -test.benchtime "$2x" >"$work/$1-$2.out" 2>&1
  callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$work/$1-$2.cg" |
    awk '/^ *[0-9,]+ \(/ && !/=>/ && !/^ *[0-9,]+ \([^)]*\) +\*/ {
      n = $1; gsub(",", "", n)
      line = $0; sub(/^ *[0-9,]+ \([^)]*\) +/, "", line); sub(/ \[[^]]*\]$/, "", line)
      gsub(/go\.shape\.struct \{[^}]*\}/, "S", line)
      print n, line
    }' >"$work/$1-$2.inc"
}
for side in steady client-go; do
  count "$side" "$ops"
  count "$side" $((2 * ops))
done

# per SIDE: "file:function cost-per-op" for every function.
perop() {
  awk -v n="$ops" 'FNR == NR { a[substr($0, index($0, " ") + 1)] += $1; next }
    { k = substr($0, index($0, " ") + 1); b[k] += $1 }
    END { for (k in b) printf "%s\t%.0f\n", k, (b[k] - a[k]) / n }' "$work/$1-$ops.inc" "$work/$1-$((2 * ops)).inc"
}
perop steady >"$work/steady.op"
perop client-go >"$work/client-go.op"

total() { awk -F '\t' '$1 == "PROGRAM TOTALS" { printf "%.0f", $2 }' "$work/$1.op"; }

# row LABEL REGEX...: the summed cost per op of the functions matching any REGEX (file:function, ERE).
row() {
  local label=$1; shift
  local sum=0 found=0 re v
  for re in "$@"; do
    v=$(awk -F '\t' -v re="$re" '$1 ~ re { s += $2; n++ } END { if (n) printf "%.0f", s }' "$work/steady.op")
    [[ -z $v ]] || { sum=$((sum + v)) found=1; }
  done
  # A renamed function must not read as a free guarantee.
  ((found)) || { echo "split.sh: no function matches row '$label': was one renamed?" >&2; exit 1; }
  # An inclusive cost below zero, or above the total, is callgrind's shadow
  # stack crossing a goroutine switch (a preempted goroutine): not a figure.
  ((sum >= 0 && sum <= $(total steady))) ||
    { echo "split.sh: row '$label' is $sum of $(total steady): a goroutine switch confused callgrind; run again" >&2; exit 1; }
  printf '%s\t%s\n' "$label" "$sum"
}
st=$(total steady) cg=$(total client-go)
# The totals hold whatever the split below makes of the run.
awk -v st="$st" -v cg="$cg" 'BEGIN { printf "instructions per event: steady %d, client-go %d: %.2fx\n", st, cg, st / cg }'
{
  row 'the other writer: Get' 'store/store\.go:.*store\.\(\*Store\[.*\)\.Get$'
  row 'the other writer: Update' 'store/writer\.go:.*store\.\(\*Writer\[.*\)\.Update$'
  row 'the cache: decode of the events' 'store/stream\.go:.*store\.\(\*Store\[.*\)\.putEvent$'
  row 'the cache: handlers (the Loop'"'"'s included)' 'cache/run\.go:.*cache\.\(\*Cache\[.*\)\.apply$'
  row 'the reconcile (cache read, ApplyStatus)' 'reconcile\.Func\[string\]\.Reconcile$'
} >"$work/parts"
{
  row 'ownership record of the Update' 'store/managed\.go:.*store\.schemas\.recordUpdate$'
  row 'reading ownership records' 'store/codec_meta_aswritten\.go:.*store\.\(\*metaDecoder\)\.managedAsWritten$'
  row 'the status apply'"'"'s merge' 'store/apply_status_first\.go:.*\)\.flatStatusApply$' 'store/apply_status\.go:.*\)\.mergeStatusTrees$'
  row 'change judge, own writes, oscillation' 'reconcile/storesource\.go:.*reconcile\.\(\*cacheSource\[.*\)\.(changed|observe)$' 'reconcile/storesource\.go:.*reconcile\.judgedAs$'
} >"$work/guarantees"
sum() { awk -F '\t' '{ s += $2 } END { printf "%.0f", s }' "$1"; }
ps=$(sum "$work/parts") gs=$(sum "$work/guarantees")
# The parts are disjoint: more than the total is the same confusion.
((ps <= st)) || { echo "split.sh: the parts add up to $ps of $st: a goroutine switch confused callgrind; run again" >&2; exit 1; }
{
  printf 'part\tinstructions per event\n'
  printf 'steady, all\t%s\n' "$st"
  sed 's/^/  /' "$work/parts"
  sed 's/^/  guarantee: /' "$work/guarantees"
  printf 'steady, guarantees\t%s\n' "$gs"
  printf 'steady, the rest\t%s\n' $((st - gs))
  printf 'client-go, all\t%s\n' "$cg"
} | column -t -s $'\t'
awk -v st="$st" -v cg="$cg" -v gs="$gs" 'BEGIN { printf "without the guarantees: %.2fx\n", (st - gs) / cg }'
