// Package reconciletest runs a reconciler through seeded, deterministic
// fault-injection simulations and checks that it converges anyway. It is to
// reconcile what net/http/httptest is to net/http: a test helper, public, for
// users' own reconcilers as much as for steady's.
//
// Sieve (OSDI '22) found 46 bugs in 10 production controllers, in three
// classes: stale views, unobserved intermediate states, and crashes in the
// middle of an operation. Each schedule of this package injects all three,
// on virtual time, and then checks what a level-triggered controller must
// guarantee.
//
// # Use
//
// Describe the primary kind, how to create its objects, how to build the
// reconciler, and what converged means; then call Run from a test:
//
//	func TestMyReconciler(t *testing.T) {
//		reconciletest.Run(t, reconciletest.Config[MySpec, MyStatus]{
//			Kind:      "Widget",
//			Object:    func(i int, rng *rand.Rand) *store.Object[MySpec, MyStatus] { ... },
//			Setup:     func(env *reconciletest.Env[MySpec, MyStatus]) (reconcile.Reconciler[string], error) { ... },
//			Converged: func(ctx context.Context, b store.Backend, obj *store.Object[MySpec, MyStatus]) error { ... },
//			Faults:    reconciletest.AllFaults(),
//		})
//	}
//
// Run runs -schedules seeded schedules (default 200) as parallel subtests.
// A failing schedule prints its seed, the violations, the last steps of its
// trace and the command that replays it: go test -run '^TestMyReconciler$'
// -seed=N. The two flags exist once a test file registers them:
//
//	func init() { reconciletest.RegisterFlags(flag.CommandLine) }
//
// Simulate runs one schedule and returns its Report instead.
//
// Setup runs once per incarnation of the controller process (a crash starts
// a new one): build the reconciler over Env.Store and Env.Cache, and build
// any other store with NewStore and cache with NewCache (the harness runs
// them and injects faults into them), adding Loop options such as child
// sources with Env.Use. The reconciler must write with the reconcile's ctx
// (it carries the leadership fence) and take randomness only from
// Process.Rand.
//
// # What a schedule does
//
// The store is a memstore. Every process of the controller sees it through a
// fault-injecting view (the faultBackend), and runs a real reconcile.Loop
// over a real cache.Cache. The harness creates Config.Objects objects, starts
// the controller, injects Config.Faults for Faults.Duration of virtual time,
// stops every fault, and checks.
//
// The faults, and how each is injected:
//
//   - Dropped events: an event of a watch is removed from its stream; the
//     stream then ends with ErrExpired a little later (at the latest when
//     faults stop), as a broken watch does, and the cache relists.
//   - Duplicated events: an event is delivered twice.
//   - Delayed events: a stream is held back for up to Faults.MaxDelay.
//   - Reordered events: the streams of different kinds are delivered in a
//     seeded order, so a child's event may arrive before its parent's, and a
//     cache may lag up to Faults.StaleReads events (stale reads).
//   - Expired watches: a stream ends with ErrExpired after an event.
//   - Failed writes: a write of the reconciler conflicts (the object is
//     rewritten unchanged just before it, so its precondition really
//     fails), fails with store.ErrUnavailable unwritten, or is committed
//     while its caller gets store.ErrUnavailable (committed but timed out).
//   - Crashes: right after the k-th write of a process (k seeded in
//     [1, Faults.CrashAfter]) lands, the process dies: its view fails every
//     call, its Loop is torn down, and a new process starts with nothing but
//     the store.
//   - Leadership loss: the leader key is deleted and a rival elector takes
//     the lease for a while; the Loop runs with a lease.StoreElector, so the
//     old term's writes carry a fence the store now rejects.
//   - Competing writers: Config.Compete writes objects as another manager.
//
// # Checks
//
// With Bound = resync + backoff cap + relist cap + read-your-writes timeout
// + a delay (+ a lease takeover with leadership loss) + ⌈objects/workers⌉ ×
// Passes × 1.1 × ReconcileTime (Report.Bound), a schedule fails when:
//
//   - an object has not converged (Config.Converged, ReadyConverged by
//     default, DiffConverged to derive one from diff) Bound after faults
//     stopped, or is not converged 1.5 resync periods later;
//   - an object that cannot be reconciled (Config.Unreconcilable) is not
//     Stalled, with a reason, a message and a time; or a converged one is;
//   - an object that had converged is written again (a steady state writes
//     nothing), or an object got more than WritesPerPass × (Passes + the
//     faults that touched it) writes (Report.WriteBound);
//   - a write was accepted without a leadership fence, or under the fence
//     of a term that was over;
//   - a cached object was modified (the cache's mutation detector), or a
//     Loop did not stop within its drain timeout.
//
// A goroutine left blocked when the schedule ends fails the test through
// testing/synctest, which runs every schedule in a bubble of its own.
//
// # Determinism
//
// Every random choice comes from the seed (math/rand/v2's PCG): the
// objects, the faults, the order of deliveries, the Loop's backoff jitter,
// the caches' relist jitter, the periods of resync and lease renewal
// (spread so that unrelated timers never fire at one virtual instant), and
// the time each reconcile takes. The scheduler runs on the bubble's root
// goroutine and takes one step at a time: it waits until every other
// goroutine is durably blocked (synctest.Wait), then lets exactly one thing
// happen: a reconcile starts, a write goes through, a listing is served, a
// term begins, an event is delivered, or a fault strikes. Reconciles,
// writes, listings and campaigns wait at gates for their turn. Because
// nothing can overtake a decision, a seed replays the fault schedule and,
// with one worker, the interleaving too: the same seed gives the same
// Report.Trace, step for step.
//
// Two things the Loop does on goroutines of its own are ordered by
// construction instead of by gates: the keys of a resync or a new term are
// listed in name order, and a read-your-writes requeue wakes alone (the
// last cache to reach the awaited write always gets there by a progress
// notification, never by an event whose hint would race the requeue).
//
// The Loop of each process is built by the harness with: its primary cache
// as a source (reconcile.FromStore with reconcile.WithSortedKeys, so its keys
// are listed in name order), the sources Setup adds with Process.Watch, the
// Config's workers, resync and backoff, an unlimited
// retry bucket (so the backoff cap bounds every retry), and an elector of
// the harness whose campaigns are gated; without simulated leadership a
// term lasts as long as the process and writes carry no fence.
//
// Limits, measured: without the race detector and with one worker, no
// replay has diverged in thousands of schedules. With several workers, or
// under the race detector (which slows goroutines enough to expose
// orderings inside a step), about one schedule in 300 diverges from its
// replay somewhere inside a step. The fault schedule up to that point is the
// same, and every check stays sound: only the trace is not reproducible step
// for step. What the Loop would need to remove these limits is a hook to run
// its internal wake-ups (read-your-writes requeues, resync, term starts) as
// steps of the caller's.
package reconciletest
