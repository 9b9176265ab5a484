#!/usr/bin/env bash
# How much CPU per event grows from a small store to a large one, on each
# side (steady's ctl-steady, client-go's ctl-clientgo), each run in its own
# process, paced, in the steady state (a warm-up before the timed phase):
# the growth is the large run's figure over the small run's of the same
# side and round, and the table gives the median of those ratios and their
# range (the medians of each size's figures are over the same rounds). It
# then judges steady's median growth against a bound (-b): the script
# exits 3 when it is over, 0 when within (4 when no round counts, 1 when
# a program failed, 2 on bad flags), so that the figure a target names is
# one command, not two tables put side by side.
#
# A round runs four programs, in an order that alternates (ABBA over sides
# and sizes): odd rounds steady small, steady large, client-go large,
# client-go small; even rounds the reverse. A sitting's drift then falls on
# both sizes of a side, and on both sides, alike.
#
# The figure is cpu_amortized_us_per_event (the GC's cycles of the timed
# phase replaced by the phase's price per MiB times its allocations: at 1M
# objects a phase holds one cycle or none), or cpu_us_per_event for a run
# in which no cycle ended (the amortized figure reads -1 then); the table
# says how many runs fell back. A run in which an update was merged into a
# later one (missed > 0) did less work than one update's: its round's
# growth is left out of the medians, and it is listed. A run that missed
# none but lagged (kept_up=0: a p99 lag or writer slip over the programs'
# -max-lag, at 1M objects in a GC cycle's mark) did the same work and
# counts; it is listed too.
#
# With -i, each round also runs steady's small key space in a heap nearly
# the large run's size (ctl-steady -idle large-small: objects no update
# touches and no Loop watches, in a memstore and cache of their own), with
# the large run's warm-up, between its small and large runs; the table then
# gives that run's figure and the heap's share of the growth, the median of
# (heap - small) / (large - small) over the rounds in which the large run
# cost more than the small one (none: no share). The rest of the growth
# is the key space's: the controller's own look-ups, at 1M objects out of
# the CPU's caches. The verdict is the same.
#
# With -m sizes (a comma-separated list of object counts between small and
# large), each round also runs each side at those sizes, between its small
# and large runs in order of size (reversed with the rest in ABBA), each
# with a warm-up of two updates per object or the small one's, whichever
# is more; the table then gives, per side and size, the median figure and
# the median ratio to the small run of the same round, so that where the
# growth happens (at what size, heap) is one command too. A mid-size run
# that merged updates leaves its round out of its own row only. The
# verdict is the same.
#
# Usage: growth.sh [-r rounds] [-n small] [-N large] [-u updates]
#                  [-W small warm-up] [-V large warm-up] [-a rate]
#                  [-w workers] [-b bound] [-s sides] [-i] [-m sizes]
# Defaults: 3 rounds; 10k and 1M objects; 600k timed updates at 15,000/s;
# warm-ups of 300k (small) and of two updates per object (large: every
# object touched, so that no timed update is an object's first touch by
# the Loop, and the heap grown to its high-water mark, so that the phase
# takes no more page faults per event than the small run's: after one
# update per object steady's 1M phase still took 0.06-0.15 an event, the
# 10k one 0.007, and after two 0.007-0.008); 4 workers; bound 1.5; sides
# steady,client-go (-s steady alone halves the time; the verdict is
# steady's either way).
# A round at the defaults takes about 10 minutes (-i: 14; -m 100000,316000:
# 16), and client-go's 1M run up to 5 GB of memory.
# GOGC, when set, reaches every program (the summary names it): GOGC=200
# halves the GC's cycles at both sizes, and a 1M run may then hold none
# (README: the growth without the GC's mark).
# STEADY_CTL and CLIENTGO_CTL, when set, name the programs to run instead
# of building cmd/ctl-steady and cmd/ctl-clientgo.
set -euo pipefail
rounds=3 small=10000 large=1000000 updates=600000 wsmall=300000 wlarge= rate=15000 workers=4 bound=1.5 sides=steady,client-go heap= mids=
while getopts r:n:N:u:W:V:a:w:b:s:im: opt; do
  case $opt in
    r) rounds=$OPTARG ;; n) small=$OPTARG ;; N) large=$OPTARG ;; u) updates=$OPTARG ;;
    W) wsmall=$OPTARG ;; V) wlarge=$OPTARG ;; a) rate=$OPTARG ;; w) workers=$OPTARG ;;
    b) bound=$OPTARG ;; s) sides=$OPTARG ;; i) heap=1 ;; m) mids=$OPTARG ;;
    *) sed -n '2,/^set -e/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
wlarge=${wlarge:-$((2 * large))}
for s in ${sides//,/ }; do
  case $s in steady|client-go) ;; *) echo "growth.sh: unknown side $s" >&2; exit 2 ;; esac
done
[[ ,$sides, == *,steady,* ]] || { echo "growth.sh: the verdict is steady's: -s must name steady" >&2; exit 2; }
prev=$small
[[ -z $mids || $mids =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "growth.sh: -m $mids: not a comma-separated list of numbers" >&2; exit 2; }
for m in ${mids//,/ }; do
  ((m > prev && m < large)) ||
    { echo "growth.sh: -m $mids: each size must be a number of objects between $small and $large, in increasing order" >&2; exit 2; }
  prev=$m
done
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
steady=${STEADY_CTL:-} clientgo=${CLIENTGO_CTL:-}
if [[ -z $steady ]]; then
  echo "building in $work" >&2
  GOWORK=off go build -o "$work/ctl-steady" ./cmd/ctl-steady
  steady=$work/ctl-steady
fi
if [[ -z $clientgo && ,$sides, == *,client-go,* ]]; then
  GOWORK=off go build -o "$work/ctl-clientgo" ./cmd/ctl-clientgo
  clientgo=$work/ctl-clientgo
fi
data=$work/data
: >"$data"

# run ROUND SIDE SIZE: one program, one size (small, large, mN: N
# objects, -m, or heap: the small key space in the large heap, steady's
# alone); appends "side size round figure fellback missed kept_up" to
# $data.
run() {
  local round=$1 side=$2 size=$3 prog=$steady objects=$small warmup=$wsmall out line extra=()
  [[ $side == client-go ]] && prog=$clientgo
  [[ $size == large ]] && objects=$large warmup=$wlarge
  [[ $size == m* ]] && objects=${size#m} warmup=$((2 * ${size#m} > wsmall ? 2 * ${size#m} : wsmall))
  [[ $size == heap ]] && warmup=$wlarge extra=(-idle $((large - small)))
  out=$("$prog" -objects "$objects" -warmup "$warmup" -updates "$updates" -rate "$rate" -workers "$workers" "${extra[@]}" 2>&1) ||
    { echo "$out" >&2; echo "FAILED: $side $size round $round" >&2; exit 1; }
  line=$(echo "$out" | grep '^side=' | tail -1)
  [[ -n $line ]] || { echo "$out" >&2; echo "FAILED: $side $size round $round printed no side= line" >&2; exit 1; }
  echo "[$round $size] $line" >&2
  echo "$line" | awk -v side="$side" -v size="$size" -v round="$round" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
    END {
      if (!("cpu_us_per_event" in f) || !("missed" in f) || !("kept_up" in f)) { print "no cpu_us_per_event, missed or kept_up" > "/dev/stderr"; exit 1 }
      am = ("cpu_amortized_us_per_event" in f) ? f["cpu_amortized_us_per_event"] + 0 : -1
      fell = am < 0
      print side, size, round, fell ? f["cpu_us_per_event"] : am, fell, f["missed"], f["kept_up"]
    }' >>"$data"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq 1 "$rounds"); do
  order=() i=0
  for s in ${sides//,/ }; do
    up=("$s small")
    [[ -n $heap && $s == steady ]] && up+=("$s heap")
    for m in ${mids//,/ }; do up+=("$s m$m"); done
    up+=("$s large")
    if ((i++ % 2 == 0)); then order+=("${up[@]}"); else for ((j = ${#up[@]} - 1; j >= 0; j--)); do order+=("${up[j]}"); done; fi
  done
  if ((r % 2 == 0)); then
    rev=()
    for ((i = ${#order[@]} - 1; i >= 0; i--)); do rev+=("${order[i]}"); done
    order=("${rev[@]}")
  fi
  for o in "${order[@]}"; do
    # shellcheck disable=SC2086 # "side size"
    run "$r" $o
  done
done

echo
echo "growth of CPU per event from $small to $large objects: $rounds rounds, separate processes, paced at $rate/s, $updates timed updates after a warm-up of $wsmall (small) and $wlarge (large)${mids:+, at $mids objects (-m) two per object or $wsmall}; GOGC=${GOGC:-100}; $(nproc) CPUs, load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v bound="$bound" -v sides="$sides" -v mids="$mids" '
  function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j+1] = a[j]; a[j+1] = t }
    return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
  }
  # A heap run (-i) that missed updates leaves out its round'"'"'s share
  # only; the growth does not depend on it.
  # A mid-size run (-m) that missed updates leaves its round out of its
  # own row only.
  { k = $2 == "heap" ? "heap" : $2 ~ /^m/ ? $1 ":" $2 : $1; v[$1, $2, $3] = $4; fell[k] += $5
    run = $1 " " ($2 ~ /^m/ ? substr($2, 2) " objects" : $2) " round " $3
    if ($6 > 0) { kept[k, $3] = 0; bad[$1, $2, $3] = 1; merged[++nmerged] = run ": " $6 " updates missed" }
    else if (!$7) lagged[++nlagged] = run
    if (!((k, $3) in kept)) kept[k, $3] = 1; if ($3 > maxr) maxr = $3 }
  END {
    printf "%-10s %14s %14s %8s  %-11s %s\n", "side", "small us/event", "large us/event", "growth", "range", "rounds (fell back)"
    ns = split(sides, side, ",")
    for (k = 1; k <= ns; k++) {
      s = side[k]; nS = nL = nG = 0
      for (r = 1; r <= maxr; r++) {
        if (kept[s, r]) { S[++nS] = v[s, "small", r]; L[++nL] = v[s, "large", r]; g = v[s, "large", r] / v[s, "small", r]; G[++nG] = g; if (nG == 1 || g < lo) lo = g; if (nG == 1 || g > hi) hi = g }
      }
      gm = nG ? median(G, nG) : -1
      if (s == "steady") verdict = gm
      printf "%-10s %14s %14s %8s  %-11s %d of %d (%d)\n", s, nS ? sprintf("%.2f", median(S, nS)) : "-", nL ? sprintf("%.2f", median(L, nL)) : "-", nG ? sprintf("%.2f", gm) : "-", nG ? sprintf("%.2f-%.2f", lo, hi) : "-", nG, maxr, fell[s] + 0
      delete S; delete L; delete G
    }
    # A round in which the large run cost no more than the small one has
    # no growth to share: it counts for the heap run'"'"'s ratio, not the share.
    nH = nP = 0
    for (r = 1; r <= maxr; r++) {
      if (!kept["steady", r] || !kept["heap", r]) continue
      s = v["steady", "small", r]; l = v["steady", "large", r]; h = v["steady", "heap", r]
      H[++nH] = h; R[nH] = h / s
      if (nH == 1 || R[nH] < rlo) rlo = R[nH]; if (nH == 1 || R[nH] > rhi) rhi = R[nH]
      if (l <= s) continue
      P[++nP] = 100 * (h - s) / (l - s)
      if (nP == 1 || P[nP] < plo) plo = P[nP]; if (nP == 1 || P[nP] > phi) phi = P[nP]
    }
    share = nP ? sprintf("%.0f%% (%.0f-%.0f%%) over %d rounds", median(P, nP), plo, phi, nP) : "- (no round grew)"
    if (nH) printf "steady, the small key space in the large heap (-i): %.2f us/event, %.2fx the small (%.2f-%.2f) over %d rounds (%d fell back); the heap'"'"'s share of the growth %s\n", median(H, nH), median(R, nH), rlo, rhi, nH, fell["heap"], share
    nm = split(mids, mid, ",")
    if (nm) {
      printf "%-10s %14s %14s %8s  %-11s %s\n", "side", "objects (-m)", "us/event", "x small", "range", "rounds (fell back)"
      for (k = 1; k <= ns; k++) {
        s = side[k]
        for (j = 1; j <= nm; j++) {
          m = "m" mid[j]; nM = 0
          for (r = 1; r <= maxr; r++) {
            if (!((s, m, r) in v) || !((s, "small", r) in v) || bad[s, m, r] || bad[s, "small", r]) continue
            M[++nM] = v[s, m, r]; Q[nM] = v[s, m, r] / v[s, "small", r]
            if (nM == 1 || Q[nM] < qlo) qlo = Q[nM]; if (nM == 1 || Q[nM] > qhi) qhi = Q[nM]
          }
          printf "%-10s %14s %14s %8s  %-11s %d of %d (%d)\n", s, mid[j], nM ? sprintf("%.2f", median(M, nM)) : "-", nM ? sprintf("%.2f", median(Q, nM)) : "-", nM ? sprintf("%.2f-%.2f", qlo, qhi) : "-", nM, maxr, fell[s ":" m] + 0
          delete M; delete Q
        }
      }
    }
    if (nmerged) { print "merged updates (left out of the growth):"; for (i = 1; i <= nmerged; i++) print "  " merged[i] }
    if (nlagged) { print "lagged past -max-lag, every update reconciled (counted):"; for (i = 1; i <= nlagged; i++) print "  " lagged[i] }
    if (verdict < 0) { print "steady: every round merged updates: no verdict"; exit 4 }
    if (verdict > bound + 0) { printf "steady: growth %.2f is over the bound %s\n", verdict, bound; exit 3 }
    printf "steady: growth %.2f is within the bound %s\n", verdict, bound
  }' "$data"
