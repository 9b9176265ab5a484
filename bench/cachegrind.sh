#!/usr/bin/env bash
# Instructions and simulated cache misses per event of each side's whole
# controller program (cmd/ctl-steady, cmd/ctl-clientgo), counted rather
# than timed: does a side spend more per event because it executes more
# instructions, or because it runs them slower (misses)?
#
# It runs each program under cachegrind (--cache-sim=yes) at U and 2U spec
# updates (-u U, default 5000) over the same objects and takes the
# difference over U, so set-up (creating the objects, filling the cache, the
# first pass) cancels out. Unlike BenchmarkEventToReconcile it counts all a
# program does per event: the writer's read and write, the watch and cache,
# the Loop and its status writes, conflicts and retries, GC (on, as in a
# real run), the meter. Per event it prints instructions (Ir), I1 misses
# (code), D1 misses (data, reads and writes) and LL misses, an estimate of
# cycles (Ir + 10 per L1 miss + 100 per LL miss, KCachegrind's rough model:
# a model, not a measurement), the passes per event of the difference and
# of each run, and GC cycles, as the runs under valgrind saw them; then each
# side's top functions by instructions, I1 misses and D1 misses (self
# cost, per event). A path whose code does not fit in the 32 KiB I1 misses
# it again each event: the count of I1 misses shows it.
#
# Read it with the limits of the simulation:
#   - GOMAXPROCS=1 (-p to change). Valgrind runs one thread at a time, so
#     with 2 Ps an idle M spins in the scheduler (findRunnable, lock2)
#     through its time slices, and the counts measure valgrind, not the
#     program (at GOMAXPROCS=2, ctl-steady's run of 20000 updates counted
#     14.9G instructions, 45% in the scheduler's locks and run queues, and
#     its run of 40000 counted 6.7G). So the figure
#     is that of a one-core run; it says nothing of what running on two
#     cores adds (wake-ups of idle threads, cache lines moving between
#     cores, which cachegrind does not simulate).
#   - valgrind slows the writer and the controller alike, so how many
#     updates of a key the queue merges into one pass (passes_per_event)
#     differs from a native run's: it is printed, and per-event figures
#     move with it (see package ctlbench).
#   - the caches simulated are D1 and LL (the last level; by default this
#     machine's L3, which is large enough to hold 10k objects: -l bytes sets
#     another LL size, e.g. an L2's). The geometries are printed.
#   - GC cycles come whole, and each marks the whole live heap (~30 MiB at
#     10k objects): with few in the difference (gc@U, gc@2U), the per-event
#     GC share is coarse on both sides; more updates smooth it.
#   - the meter samples the heap every 5ms of wall time, and valgrind's
#     wall time is ~100x a native run's: still only ~0.1k instructions per
#     event on each side (runtime.readMetricsLocked).
#   - under valgrind the cache lags the writer further than natively, and at
#     10k objects and 20000 updates fell out of memstore's watch window
#     (2,048 writes at rest below 20,480 keys) and relisted: so ctl-steady
#     runs with a window of 65536 writes (-history; -h sets it, 0 for
#     memstore's default). The window's size changes what memstore holds,
#     not what an event costs.
#   - valgrind runs ~100x slower than native: at 10k objects, ctl-steady
#     with 10000 updates took 11 minutes on a loaded machine (load ~20),
#     and past 10 minutes the Cache's periodic relist and the Loop's resync
#     of every key (default periods, which the programs do not set) fall
#     into the run: runs of 9 minutes or more are refused.
# A run whose output lacks cachegrind's counts or the program's report
# line, or whose steady runs relisted a different number of times, is
# refused rather than read.
#
# Usage: cachegrind.sh [-u updates] [-n objects] [-w workers] [-p gomaxprocs]
#                      [-l LL bytes] [-t top functions] [-o dir [-a]]
#                      [-h steady's watch window, default 65536]
# -o keeps the programs, their outputs and cachegrind's files (SIDE-U.cg, for
# cg_annotate) in dir; with -a, it reads those again (same -u) instead of
# running anything.
# (needs valgrind; at the defaults ~15 minutes on a loaded machine: both
# sides run at once)
set -euo pipefail
updates=5000 objects=10000 workers=4 procs=1 llsize= top=12 keep= again= history=65536
while getopts u:n:w:p:l:t:o:ah: opt; do
  case $opt in
    u) updates=$OPTARG ;; n) objects=$OPTARG ;; w) workers=$OPTARG ;; p) procs=$OPTARG ;;
    l) llsize=$OPTARG ;; t) top=$OPTARG ;; o) keep=$OPTARG ;; a) again=1 ;; h) history=$OPTARG ;;
    *) sed -n '2,/^set -e/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "cachegrind.sh: needs valgrind" >&2; exit 1; }
cd "$(dirname "$0")"
if [[ -n $keep ]]; then
  mkdir -p "$keep"
  work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
[[ -z $again || -n $keep ]] || { echo "cachegrind.sh: -a needs -o dir" >&2; exit 2; }
export GOWORK=off
ll=()
if [[ -n $llsize ]]; then ll=(--LL="$llsize,16,64"); fi

# run SIDE U: one program under cachegrind; its counts in $work/SIDE-U.cg,
# its output in $work/SIDE-U.out.
run() {
  local extra=() start=$SECONDS
  if [[ $1 == steady ]]; then extra=(-history "$history"); fi
  # cpu.rdtscp=off: valgrind does not emulate RDTSCP (see split.sh).
  GOMAXPROCS=$procs GODEBUG=cpu.rdtscp=off valgrind --tool=cachegrind --cache-sim=yes "${ll[@]}" \
    --cachegrind-out-file="$work/$1-$2.cg" "$work/ctl-$1" \
    -objects "$objects" -updates "$2" -workers "$workers" "${extra[@]}" >"$work/$1-$2.out" 2>&1 ||
    { cat "$work/$1-$2.out" >&2; echo "cachegrind.sh: ctl-$1 -updates $2 failed" >&2; return 1; }
  echo $((SECONDS - start)) >"$work/$1-$2.secs"
}
if [[ -z $again ]]; then
  CGO_ENABLED=0 go build -o "$work/ctl-steady" ./cmd/ctl-steady
  CGO_ENABLED=0 go build -o "$work/ctl-clientgo" ./cmd/ctl-clientgo
  pids=()
  for side in steady clientgo; do
    { run "$side" "$updates" && run "$side" $((2 * updates)); } &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
fi

# totals SIDE U: "Ir I1 D1 LL" of a run (instructions, I1 misses, D1 misses,
# LL misses), from cachegrind's summary line.
totals() {
  awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
    /^summary:/ { ok = 1; printf "%.0f %.0f %.0f %.0f\n", $(1 + col["Ir"]), $(1 + col["I1mr"]), $(1 + col["D1mr"]) + $(1 + col["D1mw"]), $(1 + col["ILmr"]) + $(1 + col["DLmr"]) + $(1 + col["DLmw"]) }
    END { if (!ok) exit 1 }' "$work/$1-$2.cg" ||
    { echo "cachegrind.sh: no cachegrind summary in ctl-$1 -updates $2's output" >&2; return 1; }
}
# figure SIDE U NAME: a figure of the program's report line.
figure() {
  local v
  v=$(sed -n "s/^side=.* $3=\([^ ]*\).*/\1/p" "$work/$1-$2.out")
  [[ -n $v ]] || { echo "cachegrind.sh: no $3 in ctl-$1 -updates $2's report" >&2; return 1; }
  echo "$v"
}
# fns SIDE U: "file:function Ir I1 D1 LL" self costs, one per line.
fns() {
  awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1; next }
    /^fl=/ { fl = substr($0, 4); next }
    /^fn=/ { fn = fl ":" substr($0, 4); gsub(/go\.shape\.struct \{[^}]*\}/, "S", fn); next }
    /^[0-9]/ { ir[fn] += $(1 + col["Ir"]); i1[fn] += $(1 + col["I1mr"]); d1[fn] += $(1 + col["D1mr"]) + $(1 + col["D1mw"])
      ll[fn] += $(1 + col["ILmr"]) + $(1 + col["DLmr"]) + $(1 + col["DLmw"]) }
    END { for (f in ir) printf "%s\t%.0f\t%.0f\t%.0f\t%.0f\n", f, ir[f], i1[f], d1[f], ll[f] }' "$work/$1-$2.cg"
}

u2=$((2 * updates))
for side in steady clientgo; do
  sed -n 's/^cmd: */ran: /p' "$work/$side-$updates.cg" "$work/$side-$u2.cg" | grep . ||
    { echo "cachegrind.sh: no cachegrind output for ctl-$side" >&2; exit 1; }
done
echo "GOMAXPROCS=$(figure steady "$updates" gomaxprocs); simulated caches:"
sed -n 's/^desc: \(D1\|LL\) cache: */  \1 /p' "$work/steady-$updates.cg"
printf '%-9s %10s %10s %10s %10s %10s %10s %9s %9s %6s %6s\n' side Ir I1miss D1miss LLmiss est.cycles passes passes@U passes@2U gc@U gc@2U
declare -A ir
for side in steady clientgo; do
  t1=$(totals "$side" "$updates")
  t2=$(totals "$side" "$u2")
  read -r i1 m1 d1 l1 <<<"$t1"
  read -r i2 m2 d2 l2 <<<"$t2"
  p1=$(figure "$side" "$updates" passes_per_event)
  p2=$(figure "$side" "$u2" passes_per_event)
  g1=$(figure "$side" "$updates" gc_cycles)
  g2=$(figure "$side" "$u2" gc_cycles)
  ir[$side]=$(((i2 - i1) / updates))
  awk -v s="$side" -v i="${ir[$side]}" -v m=$((m2 - m1)) -v d=$((d2 - d1)) -v l=$((l2 - l1)) -v n="$updates" -v p1="$p1" -v p2="$p2" -v g1="$g1" -v g2="$g2" \
    'BEGIN { printf "%-9s %10d %10.1f %10.1f %10.2f %10d %10.2f %9s %9s %6s %6s\n", s, i, m / n, d / n, l / n, i + 10 * (m + d) / n + 100 * l / n, (2 * p2 - p1), p1, p2, g1, g2 }'
done
awk -v s="${ir[steady]}" -v c="${ir[clientgo]}" 'BEGIN { printf "instructions per event, steady/client-go: %.2fx\n", s / c }'
# What else each run did: conflicts or retries in one run and not the other
# are in the difference, and so in the per-event figures.
for side in steady clientgo; do
  for u in "$updates" "$u2"; do
    line="ctl-$side -updates $u under valgrind:"
    for f in conflicts writer_retries relists; do line+=" $f=$(figure "$side" "$u" "$f")"; done
    echo "$line"
  done
done
# A relist (the cache fell out of memstore's watch window: valgrind slows
# it more than the writer) in one run and not the other puts a listing and
# decode of every object into the per-event figures: not an event's cost.
r1=$(figure steady "$updates" relists)
r2=$(figure steady "$u2" relists)
((r1 == r2)) || { echo "cachegrind.sh: ctl-steady relisted $r1 times at -updates $updates but $r2 at $u2: run again (fewer updates, or a larger watch window: -h)" >&2; exit 1; }
# The Cache relists and the Loop resyncs every object every 10 minutes
# (±10%) of wall time, and under valgrind a run can last that long: one
# that did has a relist and a pass over every key in it.
for side in steady clientgo; do
  for u in "$updates" "$u2"; do
    if [[ ! -f $work/$side-$u.secs ]]; then
      echo "ctl-$side -updates $u: its run time was not recorded: not checked against the 10-minute relist and resync"
    elif (($(<"$work/$side-$u.secs") >= 540)); then
      echo "cachegrind.sh: ctl-$side -updates $u ran $(<"$work/$side-$u.secs")s under valgrind: past 9 minutes, the periodic relist and resync may be in it; use fewer updates or a quieter machine" >&2
      exit 1
    fi
  done
done

for side in steady clientgo; do
  fns "$side" "$updates" >"$work/$side.a"
  fns "$side" "$u2" >"$work/$side.b"
  awk -F '\t' -v n="$updates" 'FNR == NR { i[$1] = $2; m[$1] = $3; d[$1] = $4; l[$1] = $5; next }
    { printf "%s\t%.0f\t%.1f\t%.1f\t%.2f\n", $1, ($2 - i[$1]) / n, ($3 - m[$1]) / n, ($4 - d[$1]) / n, ($5 - l[$1]) / n }' \
    "$work/$side.a" "$work/$side.b" >"$work/$side.op"
  echo
  echo "$side: top $top functions per event by instructions, I1 misses and D1 misses (self: Ir I1miss D1miss LLmiss)"
  for k in 2 3 4; do
    sort -t $'\t' -k$k,$k -rn "$work/$side.op" | awk -v n="$top" 'NR <= n' |
      awk -F '\t' '{ printf "  %8d %8.1f %8.1f %7.2f  %s\n", $2, $3, $4, $5, $1 }'
    echo "  --"
  done
done
