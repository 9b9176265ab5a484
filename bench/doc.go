// Package bench holds side-by-side benchmarks of steady against the
// libraries its users would otherwise pick, chiefly client-go. It is
// measurement only: it has no API, nothing imports it, and it is a separate
// module so that client-go never enters steady's own dependency graph.
//
// The figures to quote come from controller.sh, which builds each side once
// and runs it in its own process, interleaved ABBA over rounds, and prints
// the medians of the per-round ratios steady/client-go:
//
//	cd bench && ./controller.sh -r 5                      # 10k objects, 50k updates
//	cd bench && ./controller.sh -r 5 -p paced             # the same at 2000 updates/s
//	cd bench && ./controller.sh -r 1 -n 100000 -p controller
//	cd bench && ./controller.sh -r 10 -p queue
//
// Its parts:
//
//   - controller: cmd/ctl-steady against cmd/ctl-clientgo, a controller-shaped
//     workload (package ctlbench): N objects (-n, 10k by default) with
//     ~200-byte specs, a cache, 4 workers whose reconcile reads the cache and
//     writes one status field guarded by the read, driven by 50k spec updates
//     from another writer. Each reports CPU per event (process user+sys over
//     the updates), wall time to drain, peak heap, allocations per event and
//     the conflicts its status writes met. client-go's side is the
//     sample-controller pattern over a custom resource with the same spec
//     (kubefake.App) in the ObjectTracker, with the API server's write
//     semantics supplied by package kubefake. The writer runs flat out: its
//     CPU per event moves with how many updates the queue merges
//     (passes_per_event), so the two sides do different amounts of work.
//   - paced: the same with the writer paced (-a, 2000 updates/s by
//     default), so that both sides reconcile every update on its own and
//     CPU per event compares the same work; each run checks that it kept
//     up (package ctlbench's doc says how and why both modes are kept).
//   - event: BenchmarkEventToReconcile, one change at a time, its latency.
//   - backoff: BenchmarkBackoffWhenForget, like with like.
//   - queue: BenchmarkParallelAdd4W, adds from GOMAXPROCS goroutines while
//     four workers drain, with CPU time per add (cpu-ns/op) and keys taken
//     per add (gets/add) next to ns/op: on a shared machine its wall time is
//     mostly the CPU the process got, and its cost per add follows how many
//     adds found their key still queued, a mix the scheduler sets. Quote
//     cpu-ns/op; the table's ratio range shows the spread of ns/op.
//
// Where an event's instructions go comes from split.sh: it counts
// BenchmarkEventToReconcile's instructions per event on both sides with
// callgrind (no timing noise, so two commits compare), and splits steady's
// into the parts of an event and the guarantees client-go lacks (ownership
// records, the status apply's merge, the change judge and oscillation
// detection), which it sums apart from the rest:
//
//	cd bench && ./split.sh                                # needs valgrind
//
// Whether a side's CPU per event is the instructions it executes or how
// fast they run comes from cachegrind.sh: it counts the instructions and
// the simulated cache misses per event of both controller programs, whole
// (the writer, GC, the meter), on one P, with each side's top functions:
//
//	cd bench && ./cachegrind.sh                           # needs valgrind
//
// How a side's CPU per event grows from a small store to a large one, in
// the steady state (a warm-up before the timed phase), comes from
// growth.sh: per round both sides at both sizes, each in its own process,
// ABBA, paced, and the median of the per-round growth; it exits 3 when
// steady's is over the bound (-b, 1.5 by default):
//
//	cd bench && ./growth.sh -r 3                          # 10k to 1M, ~25 minutes
//
// With -i it also runs steady's 10k controller in a heap nearly the 1M
// run's (ctl-steady -idle: objects no Loop watches), and reports the
// heap's share of the growth, apart from the key space's:
//
//	cd bench && ./growth.sh -r 3 -i                       # ~35 minutes
//
// The benchmarks run on their own too,
//
//	cd bench && go test -run '^$' -bench . -benchmem .
//
// but then both sides share a process and the later inherits the earlier's
// heap: read those figures as a smoke test, not as a comparison.
package bench
