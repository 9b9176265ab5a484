// Package reconcile drives level-triggered reconciliation: a Reconciler is
// given the key of an object, compares desired with observed state, acts, and
// returns a Result and an error; the Loop decides from those what happens
// next, reports objects that cannot make progress with a Stalled condition,
// and keeps its own bookkeeping out of the way of the user's.
//
// # The Loop
//
// New(name, r, src, opts...) builds a Loop; Run(ctx) runs it until ctx
// ends. Most programs need a store source and an option or two:
//
//	loop, err := reconcile.New("app", r,
//		reconcile.FromStore(cache, st), // hints, resync, Stalled writes
//		reconcile.WithWorkers(4))
//
// The source is New's typed argument, not an option: a Reconciler[K] takes
// a Source[K], so a source (or the ConditionWriter it carries) of another key
// type does not compile. The options are the same for every key type.
//
// The defaults, each documented on its option: 1 worker; resync every 10
// minutes ±10%; no per-reconcile timeout; backoff.DefaultPolicy (10ms
// doubling to 2m, ±20%) combined by max with an overall retry bucket (10/s,
// burst 100, ceiling 30s); Stalled after 5 consecutive failures; no elector
// (always working); metrics.NopLoop; slog.Default() as the logger (errors and
// warnings seen, per-key lines at Debug); a 30s drain timeout; a
// 2s read-your-writes timeout; the Loop's name as the reconciler's field
// manager (Loop.FieldManager) and name+"-loop" as the manager of the
// Stalled condition. A bad option makes New return an error wrapping
// ErrInvalidOption.
//
// Keys come from sources: a store (FromStore for the Loop's own kind,
// FromOwned for children that wake their controller owner, FromCacheMapped
// for any mapping such as a dependency index), channels (FromChannel,
// Mapped), functions (SourceFunc) and fixed key lists (Keys); Sources joins
// several. A source may also list keys (Keys), need warming (WaitForSync),
// follow the store's revisions (Revision, WaitFor) and carry the ConditionWriter
// the Loop writes Stalled through (FromStore's does; WithConditionWriter
// attaches another). Resync adds every listed key at low priority: no store
// reads, and a key in backoff keeps waiting.
//
// A cache source can filter its watch events with predicates
// (WithPredicate, package reconcile/predicate) before it judges them;
// resync, new terms and the cache's relist repairs are never filtered.
// Loop.AddSource adds a source (and the caches it watches) to a running
// Loop and removes it again. WithWriteLimit paces the Loop's writes with a
// token bucket whose delay has a ceiling.
//
// A Loop waits for its caches to be warm before it works; while it waits it
// logs at Warn every 30s which source, for how long, and
// the cache's last list or watch error, and a Run cancelled meanwhile
// returns an error wrapping ErrNotSynced that says the same.
//
// With an elector (WithElector) the Loop waits for its caches to be warm,
// then campaigns; while it leads, a fresh queue holds every key and the
// reconciles' contexts carry the term's fence, so a write from a stale term
// is rejected by the store. When the term ends, in-flight reconciles are
// cancelled with the term's cause, and its queued keys and pending retries
// are dropped: a new term re-derives its keys from the sources, every
// listed key, and FromOwned's owners of the children it sees, so the
// cleanup of an owner deleted meanwhile is not lost. Keys added (Add,
// AddLow, and so the hints of sources that list nothing, such as Mapped's)
// while no term runs, before the first or between terms, are kept in a
// deduplicated pending set of up to 100,000 keys and added to the next
// term's queue as it begins, with the listed keys (a key in both runs
// once); past the cap further keys are dropped with a Warn log, once per
// gap. AddAfter does nothing while no term runs. Pending keys are discarded
// when Run returns.
//
// With sharding (WithSharding and package shard) every replica works, each
// on the keys of the shards assigned to it: its term is its membership, it
// lists a shard's keys when it takes the shard, drops the keys of shards it
// does not own wherever they are added, and runs each reconcile with its
// shard's fence, so a write made after the shard moved is rejected by the
// store. A shard moves only once its old owner's reconciles of it returned,
// or its lease expired.
//
// When Run's ctx ends the Loop stops taking keys, cancels in-flight
// reconciles with cause ErrShutdown, waits up to the drain timeout and
// returns, naming any keys still running (ErrDrainTimeout).
//
// Result.RequeueAfterWrite means "run again once the cache shows what I
// wrote": every typed-store write made with the reconcile's ctx is recorded (RecordWrite
// adds others), and the Loop waits for its caches to reach the highest
// revision written (after 2s it runs anyway, and FreshReadNeeded(ctx) tells
// the reconciler to read from the store). Revisions are compared per
// backend: a write to a second store (children kept in another system) is
// waited for by the caches over that store only, since two backends'
// revisions are unrelated counters. A RequeueAfterWrite from a pass
// that wrote nothing has nothing to wait for: it runs again after per-key backoff
// (controller-runtime's "not ready yet, requeue"), neither a failure nor a
// step toward Stalled. A RequeueAfterWrite from a pass that wrote is
// progress: it resets the failure count. Result.Requeue, controller-runtime's
// name, is a deprecated alias of RequeueAfterWrite: a Loop acts on it the
// same way, and warns once that it is deprecated.
//
// A revision conflict returned as it is (an error wrapping
// store.ErrConflict: someone else wrote first) is a retry, not a failure:
// it is logged at Debug, never counts toward Stalled, so a spec that
// another writer keeps moving does not make an object Stalled, and is paced
// like a RequeueAfterWrite that wrote nothing. A field ownership conflict
// (*ownership.ConflictError), which retrying never fixes, is a failure.
//
// A conflict of a status write computed from a cache that runs behind
// another writer (WithObserved of a stale read) is superseded rather than
// retried: a typed store's conflict says where and at what revision the
// object is stored, and when a cache of the Loop over that store has yet to
// show that revision, the pass read a state the store has replaced. The
// cache will deliver the stored state; until it does, a retry would read
// the same stale state and conflict again, and a backoff delay would only
// keep the key waiting after the cache caught up. So the key runs again
// exactly once, on the cache's event for the stored state, with no
// backoff; hints for it meanwhile (the cache's events for states older
// than the stored one) do not run it; Inspect says which revision it waits
// for; and the count of paced retries is kept. If that event is no hint (a
// predicate filters it, or it is judged the Loop's own write), the key runs
// at the end of a read-your-writes window (2s) once the caches hold the
// stored revision. The wait lasts while the caches advance: when they do
// not advance at all for a window (a cache that is not running, stuck, or
// relisting), the key falls back to the paced retry, told to read fresh
// (FreshReadNeeded), with a warning. A conflict against a stored revision
// the caches already show, or in a store no cache of the Loop follows, is
// paced by backoff: a reconciler that conflicts whatever it reads never
// spins, and from its 8th paced conflict in a row (and at each doubling)
// the Loop warns, within the failure log's budget. (On bench/controller.sh's
// workload, where the writer runs more than a round of objects ahead of
// the cache, nearly every conflict is the first of a pass that read a
// replaced state, not a retry: 110 of 17,513 conflicted again at the same
// stored generation when conflicts were all paced by backoff. Waiting
// spares those and the passes of held hints; it cannot spare the first.)
//
// Each reconcile is logged at Debug (controller, key, attempt, duration,
// result, reconcileID). A key's first failure is logged at Warn with the
// backoff delay and its move to Stalled at Error, at most 10 of each per
// minute; retries are logged at Debug; and while keys fail, one Warn line a
// minute sums them up ("N keys failing, M Stalled", the failures of the
// minute, the three most common reasons, and how many lines were left
// out), so 100,000 failing keys log a few dozen lines, not one per
// failure. Reconcilers log through Logger(ctx), whose lines carry the
// same controller, key and reconcileID. Loop.Inspect
// reports a key's queue state, failures, last error, next retry, Stalled
// decision and conditions.
//
// # The result table
//
// After every reconcile the Loop applies exactly one row:
//
//	return                failures   next run                                Stalled
//	nil                   reset      next hint or resync                     cleared
//	RequeueAfterWrite     reset      once the cache holds the last write     unchanged
//	  (nothing written)   unchanged  per-key backoff, the n-th in a row      unchanged
//	Result{RequeueAfter}  reset      after RequeueAfter                      cleared
//	revision conflict     unchanged  per-key backoff, the n-th in a row      unchanged
//	  (cache behind)      unchanged  once the caches hold the stored object  unchanged
//	err                   +1         after max(backoff, RequeueAfter)        set after N failures (default 5)
//	Blocked(reason, err)  +1         after max(backoff, RequeueAfter)        set now, with reason
//	RetryAfter(err, d)    +1         after max(d, backoff, RequeueAfter)     as for err
//	Terminal(err)         reset      after RequeueAfter, else next hint      set (TerminalError)
//
// Interactions, stated once:
//   - RequeueAfter wins over RequeueAfterWrite when both are set.
//   - A Result returned together with an error follows the error's row and
//     logs one warning per key (Terminal with RequeueAfter excepted: that
//     combination is part of the table).
//   - Wrappers nest: Terminal wins over anything inside it; Blocked and
//     RetryAfter combine (Stalled now, and the later of the two delays).
//   - Stalled follows the failure count: a row that resets the count without
//     an error clears it (RequeueAfterWrite excepted: the pass is not done, and the
//     row that ends it decides); "cleared" writes Stalled=False only on an
//     object that has a Stalled=True condition, so a healthy object gets
//     no write.
//   - "The n-th in a row" counts the RequeueAfterWrites that wrote nothing and the
//     revision conflicts since the last other row; the n-th waits
//     backoff(n), and no earlier than a RequeueAfter returned with it.
//   - A reconcile that ends because the Loop is stopping (ctx cause
//     ErrShutdown) is not counted at all.
//   - A key on an oscillation hold (see below) runs no earlier than the
//     hold's end, whatever the row says and however the key is added
//     (hints, resync, RequeueAfter, Loop.Add, AddLow, AddAfter).
//   - A panic is the err row with a *PanicError: the stored message is the
//     panic value's type and, for a string or an error, its text (one
//     line, at most 240 bytes); the stack is logged at Error and kept for
//     Inspect, never stored. A reconcile that calls runtime.Goexit takes
//     the same row, and its worker is replaced (see Reconciler).
//
// # Conditions
//
// Package conditions names the condition types and reasons and has the
// helpers (Set, Get, IsTrue, Remove) that work on the framework-level
// []store.Condition of any object. conditions.Set moves
// LastTransitionTime only when the status flips, records ObservedGeneration,
// and reports changed=false for an equal condition so no write happens. The
// Loop owns the Stalled condition and, on objects that have no
// Reconciling of their own, Reconciling (see conditions.Reconciling: True
// after a new object's first reconcile that did not succeed, False once
// one succeeded or with Stalled=True; none when the first succeeds); Ready belongs to the user, and carries the generation it
// was computed from, so that kstatus reads a generation not yet
// reconciled as InProgress. Each condition write of the Loop keeps its
// other conditions.
//
// The Loop writes Stalled as its own manager, the field manager (WithFieldManager, LoopInfo.FieldManager)+"-loop", and
// a Loop clears only a Stalled condition that manager owns in the object's
// field ownership (ConditionWriter.OwnsCondition), so it never clears a report
// it did not write (see StoreConditions for two Loops over one kind). The
// message starts with the Loop's name for people to read ("app: " and the
// error's text; for Blocked("SecretMissing", err) err's text, since the
// reason is already in Reason); the text decides nothing. It holds no
// failure count (Inspect, the metrics and the logs do).
//
// Every message the Loop stores is one line of valid UTF-8 of at most 256
// bytes, whatever the error: runs of white space and control characters
// (newlines included) become one space, invalid bytes become U+FFFD, and a
// longer text is cut on a rune boundary and ends with "...". So a 10 KB
// error of 400 lines is stored as its first 256 bytes, and an error of
// over 1 MiB still lets the object be marked Stalled. The whole error is
// logged with the failure and kept for Inspect (KeyInfo.LastError, and
// KeyInfo.StalledMessage for the whole message).
//
// A condition changes only when its meaning does: a Stalled=True is
// written when its status or reason changes, never for a new message
// alone, and for a new generation with the same reason at most once per
// backoff cap (a spec that another writer, or a fight, moves at every
// write costs one write per cap, not one per generation). An object
// failing for an hour at the backoff cap is written once. The Loop's
// condition writes count in the key's write budget (TooManyWrites, below),
// so a Stalled that flips at every reconcile is held and reported like any
// other write storm. A change to Stalled alone is never a hint for any
// Loop: it is a report, not an input.
//
// # Manager
//
// A Manager runs several Loops: it runs the shared caches and waits until
// they are synced, campaigns once (give each Loop Manager.Elector), starts
// the Loops, and stops them in the reverse order. Ready and Live are health
// checks.
//
// # Own writes and oscillation
//
// Both are judged by field ownership, through the cache source's
// change function (WithChanges), on diff.Path values. FromStore's is the store's FieldChanges:
// it diffs an object field by field (.metadata.labels.app, .spec.replicas,
// .conditions[type="Ready"].status...) and splits the changes by who owns
// them in Meta.Managed. FromOwned and FromCacheMapped, which have a cache
// alone, use SectionChanges, which diffs by section (.metadata.labels,
// .spec, .status...) and attributes every change to its writer (LastWrite);
// WithChanges overrides either. A watch event that is the Loop's own write
// and whose every changed path the writing manager owns is not a hint for
// the key whose reconcile wrote it (below), so a status write cannot
// defeat backoff; changes by other actors merged into
// the same event (a relist merges the writes the cache missed) still
// trigger. A write is the Loop's own when its LastWrite.Manager is the
// Loop's field manager, or when a reconcile of the Loop wrote it with its
// ctx, whatever manager name it used: the store's write observer reports
// every revision a reconcile writes (observers chain, so a reconciler may
// add its own), and the Loop learns the names its reconciles write as. A
// Loop named "apps" whose reconciler writes status as "app-controller"
// behaves as if the names matched.
//
// An own write is judged per key. A typed Store reports each write of a
// reconcile with the object written, and the Loop remembers, per revision,
// its author: the key whose reconcile wrote it. The write is no hint for
// its author, and a hint, as another actor's change is, for every other
// key its event hints: for FromStore the object's name, for FromOwned and
// FromCacheMapped the keys it maps to. So a reconcile of a that updates
// b's spec (a parent rolling a new image out to objects of its own kind)
// runs b at once; a parent's write of its own child does not wake it, and
// its write of another parent's child wakes that parent. FromStore's
// oscillation detector takes such a write as another writer's change to b,
// not as a write by b's manager: a reconcile of a that writes b's spec
// again and again is no NoProgress or TooManyWrites of b, while b's
// reconcile re-setting what a set is a Fight, as with any other writer.
//
// A write whose author is unknown is the Loop's own for every key, as
// before authors were known: a revision of RecordWrite, which names no
// object; a write by the Loop's manager name that no reconcile reported
// (another process using the name); and every write of a Loop whose keys
// are not strings (the cache sources, which judge, hint string keys only,
// so only a Loop[string] judges its own writes at all).
//
// The store reports a write after its commit, so its event can reach a
// cache first. The event is then judged by its writer's name alone and
// hints nobody; the Loop keeps the keys it did not hint with the last 16
// such events, and when the report comes and names another author, adds
// those not its author's then. The detector's part of such an event waits
// for the report too, so that it hears a's write of b as another writer's
// change whichever came first. The window is a commit to its report, a
// few events at most; an event pushed out of the 16 before its report
// leaves its keys to their next hint or resync. A write never reported (one
// made with a ctx that is not the reconcile's) is heard as the manager's
// own once no reconcile of the Loop runs (a report comes before its
// reconcile returns), or before a later write of the object is judged,
// whichever is first, so the detector hears every write. A later write of
// the same object whose event comes between a write's commit and its
// report takes the held write as the manager's own first (the order is
// kept, the author guessed, as before reports were waited for).
//
// FromStore's source feeds an oscillation.Detector per object: a Fight is a
// path this manager re-sets 3 times within a minute after another manager
// changed it; NoProgress is 10 writes within a minute with no change to any
// field this manager does not own (WithOscillation sets the thresholds).
// The detector learns who changed each path from the object's field
// ownership after the event, not from the event's
// last writer: a relist that merges another manager's spec write and this
// manager's status write into one event is two writes to it, one each, so
// managers that write disjoint fields never look like a fight.
// A third report is the write budget, TooManyWrites: more than 30 writes
// by this manager within a minute, of any kind (status-only included, and
// the Loop's own Stalled writes apart from an oscillation's report), with
// no change to the spec. Each is reported at once as Stalled with reason
// conditions.ReasonOscillating (a worker writes the report without running the key),
// naming the flipping fields in diff.Path notation, and Loop.Inspect
// returns the oscillation.Report. The key is held: a sixth of the window,
// doubling with each detection that comes within a window of the last
// hold's end (up to the backoff cap); the report stands for the hold and
// one window after it. When it ends the Loop runs the key once more,
// unasked (a RequeueAfter due later is brought forward to then), and a
// reconcile that would clear Stalled clears it: an object that is healthy
// again after the hold carries Stalled=Oscillating for at most the hold
// plus one window (1m10s after a first detection, with the defaults) plus
// that reconcile, whatever the resync period, and costs one write for the
// clear. A fight whose reconcilers return RequeueAfter 250ms makes at most
// 15 writes a minute once detected; a status write before every RequeueAfterWrite,
// at most twice the status budget (below) in any minute: 240 with the
// defaults, 127 measured (TestStatusWriteAndRequeueStormIsReportedAndSlowed).
//
// Status-only writes do not count toward NoProgress. A write by this manager
// whose every changed path is on the status side (.status…, .conditions[…])
// and that changes no field another manager owns is neither counted nor
// taken as progress: the count goes on as if it had not happened. The reason
// is that such a write cannot drive the Loop round by itself. It is an own
// write, so it is never a hint; the pass that made it was started by
// something else (a hint from another actor or source, resync, a
// RequeueAfter), and a status tracking an outside system ("2/3 running")
// legitimately changes on every such pass. NoProgress is about writes that
// cause the next write, which only a change to something the Loop reacts to
// (the spec or metadata, or a foreign field) can do. A status-only write still
// counts toward a Fight, when it re-sets a status field another manager
// changed. A status that never settles (a timestamp, say) written before
// every Result.RequeueAfterWrite is caught by the status budget instead.
//
// Status writes have a budget of their own. A write that changes more than
// the status side (the spec, metadata, a field another manager owns) spends
// the write budget, oscillation.Config.MaxWrites (30 a minute without a
// spec change); beyond it the key is held and reported Stalled=Oscillating
// (TooManyWrites), as the Loop's own Stalled writes are. A status-only
// write spends the status budget, MaxStatusWrites (120 a minute); beyond it
// the key is held all the same, so the store sees at most about that many
// writes a minute, but it is reported as Throttled (a Warn line, the
// oscillation metric with kind Throttled, LoopInfo.Throttled, and the
// key's status on the debug page), never as Stalled. The reason: a status
// that reports observed changes in the world (a fleet that flaps) changes
// as often as the world does; that is not an oscillation of desired state,
// and Stalled=True, which kstatus reads as Failed, would tell every tool
// that a healthy controller has failed. The budget is higher because such a
// status legitimately follows a poll of every 0.5s.
//
// # Metrics
//
// metrics.Loop is an interface with the semantics of controller-runtime's
// controller_runtime_* metrics, plus time to converge and the number of
// unconverged objects. Every hook fires, the queue's Retry included (once
// per retry through backoff). metrics.NopLoop is the default; embed it in a type that
// implements only the hooks it needs.
//
// With metrics.NopLoop the Loop reads no clock for metrics. With any other
// metrics.Loop it reads the clock twice per reconcile while keys wait for
// workers, once where the key is added and once where the reconcile ends:
// the Loop and its queue share their stamps (the queue's core in
// internal/workqueue takes the Loop's), so the reconcile's start is the stamp at which the queue
// handed the key out, and the end stamp ends the queue's work duration and
// starts the worker's next one. A worker that had to wait for a key, or
// that logged or wrote Stalled after the reconcile, reads once more. A
// metrics.Loop with an ActiveWorkersFunc method reads the number of busy workers
// when scraped; the Loop then keeps no shared count of them.
package reconcile
