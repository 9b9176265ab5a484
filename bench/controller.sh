#!/usr/bin/env bash
# Side-by-side figures of steady against client-go, each side in its own
# process, interleaved ABBA over R rounds (odd rounds steady first, even
# rounds client-go first), reported as medians of the per-round ratios
# steady/client-go. Below 1 means steady spends less.
#
# Parts (all by default):
#   controller  cmd/ctl-steady against cmd/ctl-clientgo: -n objects, -u spec
#               updates by another writer, -w workers (see package ctlbench);
#               CPU per event, wall time to drain, peak heap, allocations
#               per event, conflicts. The writer runs flat out and the run
#               drains its backlog: throughput, and the figures earlier
#               tables quote. Its CPU per event moves with passes_per_event,
#               how many updates of one key the queue merged into one pass:
#               the two sides do different amounts of work.
#   paced       the same programs with the writer paced at -a updates per
#               second (default 2000, below both sides' capacity), each
#               update of an object seconds apart, so that every update is
#               reconciled on its own on both sides: its CPU per event
#               compares the cost of the same work, idle wake-ups included
#               (a real controller's events trickle in). Each run reports
#               its lag from update to status write (lag_*_ms) and whether
#               it kept up (no update merged, p99 lag and the writer's
#               slip within 100ms); runs that did not are listed after the
#               table, and their figures are of a saturated run.
#               passes_per_event is ~1 on steady's side and ~2 on
#               client-go's (it reconciles its own status write once more).
#   Both report cpu_us_per_pass, the same CPU per reconcile pass; read it
#   with passes_per_event.
#   event       BenchmarkEventToReconcile/{steady,client-go}, -e ops each
#   backoff     BenchmarkBackoffWhenForget/{itemexp,default}/{steady,client-go},
#               -k ops each
#   queue       BenchmarkParallelAdd4W/{steady,client-go}, -q benchtime each;
#               its ns/op is mostly the CPU the process got on a shared
#               machine: read cpu-ns/op and gets/add next to it
#
# Usage: controller.sh [-r rounds] [-n objects] [-u updates] [-w workers]
#                      [-a paced rate] [-e event ops] [-k backoff ops]
#                      [-q queue benchtime] [-p part,part] [-g gomaxprocs]
#                      [-c cpulist] [-s] [-W warm-up updates]
# Example: controller.sh -r 3            (10k objects, 50k updates)
#          controller.sh -r 5 -p paced   (50k updates at 2000/s: 25s a run)
#          controller.sh -r 6 -p paced -a 15000 -u 60000
#                         (both cores busy, yet no update merged on either
#                         side: the same work under two-core load; judge a
#                         change by it, since flat out a change that slows a
#                         stage merges more updates and looks cheaper)
#          controller.sh -r 1 -n 100000 -p controller
#          controller.sh -r 10 -p queue
#          controller.sh -r 5 -p controller -g 1   (each program on one P)
# -s runs ctl-steady with -reconciled: its set-up has the controller apply
# each object's status once, so that no update of the timed phase is an
# object's first status write by its controller (which adds the controller's
# ownership record to the object). Without it, update u touches object
# u mod objects, and at 1M objects with 300k updates every update is an
# object's first: compare sizes with -s to see what the size costs apart
# from that. client-go records no writer of a status: its side is the same.
# -W runs that many updates before the timed phase, at the same pace, on
# both sides (-warmup): the timed phase then measures a controller whose
# heap has grown to its working size. Without one, at 1M objects the timed
# phase pays for the heap's first growth past the set-up's, a page fault
# per fresh page (faults_per_event, in sys_us_per_event): compare sizes
# with one, e.g. -W 300000 with -u 300000.
# -g sets GOMAXPROCS for every run (default: the runtime's, one P per CPU).
# Flat out on a quiet machine, CPU per event is not the same on one P as on
# two: on two, the writer, the watch and the workers run at once (cache
# lines move between cores, idle Ps spin and are woken), which cachegrind.sh
# (one P) does not count: -g 1 against the default shows what that adds.
# -c runs every program under taskset -c CPULIST (e.g. -c 0): with -g 2 -c 0
# both Ps share one core, which tells the cost of two cores (data moving
# between their caches) from the cost of two Ps (the scheduler's wake-ups,
# spinning and idle GC workers): -g 2 -c 0 near -g 1 puts the difference in
# the cores, near the default in the Ps.
# It builds each program once (GOWORK=off, against this module's go.mod),
# prints every run's raw line, then the table. The machine's load average
# is printed with it: figures from a loaded machine are noisy. The table
# gives, per figure, the median of the per-round ratios and their range.
set -euo pipefail
rounds=5 objects=10000 updates=50000 workers=4 rate=2000 eventops=5000x backoffops=1000000x queuetime=1s parts=controller,paced,event,backoff,queue procs= cpus= reconciled= warmup=0
while getopts r:n:u:w:a:e:k:q:p:g:c:sW: opt; do
  case $opt in
    r) rounds=$OPTARG ;; n) objects=$OPTARG ;; u) updates=$OPTARG ;; w) workers=$OPTARG ;; a) rate=$OPTARG ;;
    e) eventops=${OPTARG%x}x ;; k) backoffops=${OPTARG%x}x ;; q) queuetime=$OPTARG ;; p) parts=$OPTARG ;;
    g) procs=$OPTARG ;; c) cpus=$OPTARG ;; s) reconciled=-reconciled ;; W) warmup=$OPTARG ;;
    *) sed -n '2,/^set -e/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GOWORK=off
echo "building in $work" >&2
go build -o "$work/ctl-steady" ./cmd/ctl-steady
go build -o "$work/ctl-clientgo" ./cmd/ctl-clientgo
go test -c -o "$work/bench.test" .
if [[ -n $procs ]]; then export GOMAXPROCS=$procs; fi
pin=()
if [[ -n $cpus ]]; then
  command -v taskset >/dev/null || { echo "controller.sh: -c needs taskset (util-linux)" >&2; exit 1; }
  pin=(taskset -c "$cpus")
fi
data=$work/data

# record LABEL ROUND SIDE: reads one run's output and appends
# "label metric round side value" lines to $data.
record() {
  awk -v label="$1" -v round="$2" -v side="$3" '
    /^side=/ { for (i = 1; i <= NF; i++) { split($i, kv, "=")
        if (kv[1] ~ /^(side|objects|updates|warmup|gomaxprocs|gogc|rate|kept_up)$/ || kv[2] < 0) continue
        print label, kv[1], round, side, kv[2] } }
    /^Benchmark/ { for (i = 3; i < NF; i += 2) print label, $(i+1), round, side, $i }
  ' >>"$data"
}

# run LABEL ROUND SIDE CMD...: runs one side in its own process.
run() {
  local label=$1 round=$2 side=$3 out
  shift 3
  out=$("${pin[@]}" "$@" 2>&1) || { echo "$out" >&2; echo "FAILED: $label $side round $round" >&2; exit 1; }
  echo "$out" | grep -E '^(side=|Benchmark)' | sed "s/^/[$round $label] /" >&2
  echo "$out" | record "$label" "$round" "$side"
  if echo "$out" | grep -q '^side=.* kept_up=0'; then echo "$label $side round $round" >>"$work/notkept"; fi
}

side_cmd() { # LABEL SIDE: the command of one side of one part
  case $1 in
    controller) [ "$2" = steady ] && echo "$work/ctl-steady $reconciled" || echo "$work/ctl-clientgo"
      echo "-objects $objects -updates $updates -warmup $warmup -workers $workers" ;;
    paced) side_cmd controller "$2"; echo "-rate $rate" ;;
    event) echo "$work/bench.test -test.run ^\$ -test.benchmem -test.benchtime $eventops -test.bench ^BenchmarkEventToReconcile\$/^$2\$" ;;
    backoff-itemexp) echo "$work/bench.test -test.run ^\$ -test.benchmem -test.benchtime $backoffops -test.bench ^BenchmarkBackoffWhenForget\$/^itemexp\$/^$2\$" ;;
    backoff-default) echo "$work/bench.test -test.run ^\$ -test.benchmem -test.benchtime $backoffops -test.bench ^BenchmarkBackoffWhenForget\$/^default\$/^$2\$" ;;
    queue) echo "$work/bench.test -test.run ^\$ -test.benchmem -test.benchtime $queuetime -test.bench ^BenchmarkParallelAdd4W\$/^$2\$" ;;
  esac
}

labels=()
for p in ${parts//,/ }; do
  case $p in
    controller|paced|event|queue) labels+=("$p") ;;
    backoff) labels+=(backoff-itemexp backoff-default) ;;
    *) echo "unknown part $p" >&2; exit 2 ;;
  esac
done

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq 1 "$rounds"); do
  order="steady client-go"
  [ $((r % 2)) -eq 0 ] && order="client-go steady"
  for label in "${labels[@]}"; do
    for side in $order; do
      # shellcheck disable=SC2046 # the command is split on purpose
      run "$label" "$r" "$side" $(side_cmd "$label" "$side")
    done
  done
done
load="$(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "steady against client-go: $rounds rounds ABBA, separate processes; objects=$objects updates=$updates workers=$workers paced rate=$rate/s${reconciled:+, steady reconciled in set-up}, warm-up $warmup updates; $(nproc) CPUs${cpus:+, pinned to CPUs $cpus}${procs:+, GOMAXPROCS=$procs}, load average after: $load"
printf '%-16s %-18s %12s %12s %10s  %s\n' part figure steady client-go ratio 'ratio range'
sort -k1,1 -k2,2 -k3,3n "$data" | awk '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  { key = $1 SUBSEP $2; v[key, $3, $4] = $5; if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
    if ($3 > maxr) maxr = $3 }
  END {
    for (k = 1; k <= nk; k++) {
      key = keys[k]; split(key, f, SUBSEP); ns = nc = nr = 0
      for (r = 1; r <= maxr; r++) {
        s = v[key, r, "steady"]; c = v[key, r, "client-go"]
        if (s != "") S[++ns] = s
        if (c != "") C[++nc] = c
        if (s != "" && c != "" && c + 0 != 0) { R[++nr] = s / c; if (nr == 1 || s / c < lo) lo = s / c; if (nr == 1 || s / c > hi) hi = s / c }
      }
      printf "%-16s %-18s %12s %12s %10s  %s\n", f[1], f[2], ns ? sprintf("%.4g", median(S, ns)) : "-", nc ? sprintf("%.4g", median(C, nc)) : "-", nr ? sprintf("%.2f", median(R, nr)) : "-", nr ? sprintf("%.2f-%.2f", lo, hi) : "-"
      delete S; delete C; delete R
    }
  }'
if [ -s "$work/notkept" ]; then
  echo "did not keep up (kept_up=0: an update merged, or p99 lag or writer slip over 100ms; a saturated run, not paced work):"
  sed 's/^/  /' "$work/notkept"
fi
