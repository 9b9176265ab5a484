package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Config describes the simulation of one reconciler. Run and Simulate take
// it by value; zero fields take the defaults named in their comments.
//
// The primary kind's objects (Spec S, Status T) are the Loop's keys: the
// harness creates Objects of them, builds a Loop over their cache (with
// reconcile.FromStore), runs it under Faults, then checks that every object
// converges. Setup builds the reconciler for each incarnation of the
// controller process (a crash starts a new one with empty memory).
type Config[S, T any] struct {
	// Name is the Loop's name and, unless Manager is set, the manager the
	// reconciler writes as. Default "controller".
	Name string
	// Manager is the manager the reconciler writes as (reconcile.WithFieldManager).
	Manager string
	// Kind is the primary kind. Required.
	Kind string
	// StoreOptions are extra options of the primary kind's stores (the
	// harness's, and Env.Store of every incarnation), such as
	// store.WithVersion for a versioned kind served at a version other
	// than its storage one.
	StoreOptions []store.Option

	// Seed is the first seed of Run's schedules (schedule i uses Seed+i).
	// The -seed flag replaces it and runs that one schedule.
	Seed uint64
	// Schedules is how many seeded schedules Run runs. 0 means the
	// -schedules flag (default DefaultSchedules, 460).
	Schedules int

	// Objects is how many primary objects exist before the controller
	// starts. Default 4.
	Objects int
	// Object returns the i-th object to create (Meta.Name and Spec at
	// least). rng is the schedule's random source, so each seed gets its own
	// fleet. Required.
	Object func(i int, rng *rand.Rand) *store.Object[S, T]

	// Fixtures, if set, creates what the reconciler needs besides the
	// primary objects (the secrets they reference, say), writing directly
	// on b, without faults, before the controller starts; the reference
	// run gets the same. An error fails the schedule.
	Fixtures func(ctx context.Context, b kv.Backend) error

	// Setup builds the reconciler of one incarnation of the controller
	// process. It runs once at the start and again after every crash, with
	// a fresh Env: a new Store and Cache over the same backend, nothing
	// remembered. It may build more stores and caches (NewStore, NewCache)
	// and add Loop options (Env.Use), such as sources over child kinds.
	// Required.
	Setup func(env *Env[S, T]) (reconcile.Reconciler[string], error)

	// Converged reports whether one primary object has converged, given
	// the store as it is after the run (no faults, no cache): nil if it has,
	// else an error saying what differs. DiffConverged builds one from the
	// diff package. Nil means: the object's Ready condition is True at its
	// current generation.
	Converged func(ctx context.Context, b kv.Backend, obj *store.Object[S, T]) error
	// Unreconcilable reports the objects that can never converge (for
	// example one that references a missing secret). They are exempt from
	// Converged, and must instead end with a Stalled condition that has a
	// reason, a message and a transition time. Nil means none.
	Unreconcilable func(obj *store.Object[S, T]) bool
	// Compete is the competing writer: another manager that, at random
	// moments of the fault phase, writes the object called name (spec or
	// status fields, or anything the reconciler watches). A primary object
	// it touched is left out of the history check (its children may
	// rightly change), and a status or spec field it changed is one the
	// lost-update check watches: a reconciler write that puts it back is a
	// lost update. It writes through
	// w, a Writer for the primary kind as manager "competitor", directly on
	// the store (no faults), and may use b for other kinds. Nil means no
	// competing writes even when Faults.CompetingWrites is set.
	Compete func(ctx context.Context, b kv.Backend, w *store.Writer[S, T], name string, rng *rand.Rand) error

	// Workers is the Loop's worker count. Default 1.
	Workers int
	// ReconcileTime is the virtual time each reconcile takes. Default 10ms.
	ReconcileTime time.Duration
	// Passes is how many reconciles an object needs, from any state, to
	// converge once faults stop (a write, then the re-observe that confirms
	// it). It enters the convergence bound. Default 3.
	Passes int
	// Resync is the Loop's resync period (no jitter, so a seed replays).
	// Default 30s.
	Resync time.Duration
	// BackoffCap caps the Loop's per-key backoff (base 10ms, factor 2,
	// jitter ±20% drawn from the seed). Default 5s.
	BackoffCap time.Duration
	// WritesPerPass bounds the writes one reconcile makes. The bound on an
	// object's writes over a whole schedule is WritesPerPass × (Passes +
	// the disturbances that touched it); see Report.WriteBound. Default 4.
	WritesPerPass int
	// Options are extra Loop options, added to every incarnation's Loop
	// after the harness's own, such as WithStallAfter or WithOscillation.
	// Overriding the harness's sources, status writer, elector, resync or
	// backoff works but gives up replay (see Determinism in the package
	// documentation).
	Options []reconcile.Option

	// Faults says what goes wrong, and for how long.
	Faults Faults

	// SkipHistory turns off the history check: the comparison of what the
	// controller did to each child (by key: creates, deletes, what is left
	// at the end) with the fault-free reference run of the same seed, and
	// the check for children left at the end whose owner is gone. Set
	// it for a reconciler that names children randomly (the keys of two
	// runs then differ); children with names derived from their owner are
	// the better cure.
	SkipHistory bool
}

// Faults selects the faults of a schedule. Probabilities are per
// opportunity (per event delivered, per reconciler write, per scheduling
// step) and must be in [0, 1]. The zero Faults injects nothing.
//
// Faults are injected for Duration of virtual time; then every fault stops,
// held events are delivered, streams that lost events are expired (so the
// caches relist), a rival leader steps down, and the convergence clock
// starts.
type Faults struct {
	// Duration is how long faults are injected (virtual time). Default 1m.
	Duration time.Duration

	// DropEvents is the probability that a watch event is lost. The stream
	// that lost it ends with ErrExpired a little later (at the latest when
	// faults stop), as a real broken watch does, and the cache relists.
	DropEvents float64
	// DuplicateEvents is the probability that a watch event is delivered
	// twice.
	DuplicateEvents float64
	// DelayEvents is the probability that a stream is held back, up to
	// MaxDelay, instead of delivering its next event.
	DelayEvents float64
	// MaxDelay bounds a delay. Default 2s.
	MaxDelay time.Duration
	// ExpireWatches is the probability, per delivered event, that the
	// stream then ends with ErrExpired, forcing a relist.
	ExpireWatches float64
	// StaleReads is how many events a cache may lag behind the store
	// (besides delays): events of different streams are delivered in a
	// seeded order, so related objects' events arrive reordered, and a
	// reconciler reads state up to StaleReads changes old. 0 keeps caches
	// as fresh as delivery allows.
	StaleReads int

	// ConflictWrites is the probability that a reconciler write conflicts:
	// the object is rewritten unchanged just before it, so the write's
	// revision precondition really fails.
	ConflictWrites float64
	// UnavailableWrites is the probability that a reconciler write fails
	// with store.ErrUnavailable without being written.
	UnavailableWrites float64
	// TimeoutWrites is the probability that a reconciler write is
	// committed but its caller gets store.ErrUnavailable (the reply was lost).
	TimeoutWrites float64

	// Crashes is how many times the controller process crashes. Each crash
	// is armed at a seeded moment spread over the whole fault phase (one
	// in two at a moment the test deletes an object), and strikes right
	// after the k-th write of a reconcile, k seeded in [1, CrashAfter] but
	// no more than the most writes a reconcile has made so far: that
	// reconcile's later writes fail, the Loop is torn down without a
	// drain, and a new incarnation starts with empty memory over the same
	// store.
	Crashes int
	// CrashAfter bounds k. Default 8.
	CrashAfter int
	// TimeTravel is the probability that a restarted process (after a
	// crash) starts against a primary cache older than what the dead
	// process last saw: its first listing is served at an older revision,
	// as a lagging replica serves it, and the watch replays every change
	// since. Three in four trips go to a revision just after a deletion by
	// the test or just before a competing write. Sieve's stale-state bugs
	// need this trigger.
	TimeTravel float64

	// LeadershipLosses is how many times the lease is taken from the
	// controller: from a seeded moment of the fault phase on, as soon as a
	// write of the controller waits at its gate (or half-way to the end of
	// the phase if none does), the leader key is deleted and a rival takes
	// it and holds it up to MaxDelay. The Loop runs with a
	// lease.StoreElector, so every reconciler write carries the term's
	// fence: the store rejects the lost term's writes (Report.FencedWrites
	// counts them), and a write without a fence that the store accepts
	// from a process whose term had ended fails the schedule.
	LeadershipLosses int

	// CompetingWrites is the probability, per scheduling step, that
	// Config.Compete writes a random object.
	CompetingWrites float64

	// Deletes is how many times, at seeded moments of the fault phase, the
	// test deletes a primary object (as manager "creator"). Three in four
	// are recreated with the same name, a new UID and a new Config.Object
	// up to MaxDelay later; the others stay deleted, and must be gone (any
	// finalizers removed) at the bound, and no longer reconciled after it.
	// This is the test's own workload, not a fault: the fault-free
	// reference run of a seed makes the same deletions.
	Deletes int
}

// AllFaults returns a moderate mix of every fault, and the test's own
// deletions: what Run's own suite and its bug zoo use, and the
// configuration whose catch rates the package documentation states. Start
// a reconciler's tests with it.
func AllFaults() Faults {
	return Faults{
		DropEvents:        0.05,
		DuplicateEvents:   0.05,
		DelayEvents:       0.05,
		ExpireWatches:     0.02,
		StaleReads:        3,
		ConflictWrites:    0.05,
		UnavailableWrites: 0.05,
		TimeoutWrites:     0.05,
		Crashes:           2,
		TimeTravel:        0.5,
		LeadershipLosses:  1,
		CompetingWrites:   0.01,
		Deletes:           2,
	}
}

// reference returns the faults of the fault-free reference run: none, but
// the same timing and the same workload (the test's deletions).
func (f Faults) reference() Faults {
	return Faults{Duration: f.Duration, MaxDelay: f.MaxDelay, CrashAfter: f.CrashAfter, Deletes: f.Deletes}
}

// Defaults of Config and Faults.
const (
	DefaultObjects       = 4
	DefaultWorkers       = 1
	DefaultReconcileTime = 10 * time.Millisecond
	DefaultPasses        = 3
	DefaultResync        = 30 * time.Second
	DefaultBackoffCap    = 5 * time.Second
	DefaultWritesPerPass = 4
	DefaultFaultDuration = time.Minute
	DefaultMaxDelay      = 2 * time.Second
	DefaultCrashAfter    = 8
)

// Timing of the simulated infrastructure; they enter the convergence bound.
const (
	relistCap         = time.Second
	leaseTTL          = 3 * time.Second
	leaseRenew        = time.Second
	leaseRetry        = 500 * time.Millisecond
	readYourWritesCap = 2 * time.Second
	leaseKey          = "~reconciletest/leader" // no object key starts with ~
	competitorManager = "competitor"
	creatorManager    = "creator"
)

// ErrConfig is wrapped by the error of a Config that cannot run.
var ErrConfig = errors.New("reconciletest: invalid config")

// Validate reports whether cfg can run: an error wrapping ErrConfig names
// the first problem (a missing Kind, Object or Setup, a negative count or
// duration, durations whose schedule overflows a time.Duration, a
// probability outside [0, 1]). Run and Simulate call it.
func Validate[S, T any](cfg Config[S, T]) error {
	_, err := cfg.withDefaults()
	return err
}

// withDefaults fills zero fields and validates cfg.
func (cfg Config[S, T]) withDefaults() (Config[S, T], error) {
	orDefault(&cfg.Name, "controller")
	orDefault(&cfg.Manager, cfg.Name)
	orDefault(&cfg.Objects, DefaultObjects)
	orDefault(&cfg.Workers, DefaultWorkers)
	orDefault(&cfg.ReconcileTime, DefaultReconcileTime)
	orDefault(&cfg.Passes, DefaultPasses)
	orDefault(&cfg.Resync, DefaultResync)
	orDefault(&cfg.BackoffCap, DefaultBackoffCap)
	orDefault(&cfg.WritesPerPass, DefaultWritesPerPass)
	f := &cfg.Faults
	orDefault(&f.Duration, DefaultFaultDuration)
	orDefault(&f.MaxDelay, DefaultMaxDelay)
	orDefault(&f.CrashAfter, DefaultCrashAfter)
	return cfg, cfg.validate()
}

// orDefault sets *v to d when it is zero.
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// validate names the first problem of a cfg with its defaults filled.
func (cfg Config[S, T]) validate() error {
	f := &cfg.Faults
	switch {
	case cfg.Kind == "":
		return fmt.Errorf("%w: Kind is required", ErrConfig)
	case cfg.Object == nil:
		return fmt.Errorf("%w: Object is required", ErrConfig)
	case cfg.Setup == nil:
		return fmt.Errorf("%w: Setup is required", ErrConfig)
	case anyNegative(cfg.Objects, cfg.Workers, cfg.Passes, cfg.WritesPerPass, cfg.Schedules):
		return fmt.Errorf("%w: negative count", ErrConfig)
	case anyNegative(cfg.ReconcileTime, cfg.Resync, cfg.BackoffCap, f.Duration, f.MaxDelay):
		return fmt.Errorf("%w: negative duration", ErrConfig)
	case anyNegative(f.Crashes, f.CrashAfter, f.LeadershipLosses, f.StaleReads, f.Deletes):
		return fmt.Errorf("%w: negative fault count", ErrConfig)
	case cfg.tooLong():
		return fmt.Errorf("%w: durations too long: a schedule (Faults.Duration, then the convergence bound, then 1.5 Resync) must fit in a time.Duration", ErrConfig)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"DropEvents", f.DropEvents}, {"DuplicateEvents", f.DuplicateEvents}, {"DelayEvents", f.DelayEvents},
		{"ExpireWatches", f.ExpireWatches}, {"ConflictWrites", f.ConflictWrites},
		{"UnavailableWrites", f.UnavailableWrites}, {"TimeoutWrites", f.TimeoutWrites},
		{"CompetingWrites", f.CompetingWrites}, {"TimeTravel", f.TimeTravel},
	} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%w: Faults.%s = %v is not a probability", ErrConfig, p.name, p.v)
		}
	}
	return nil
}

// tooLong reports whether a schedule's length, or a bound computed from
// it, overflows a time.Duration: the bound then wraps to a negative, and
// every object of a correct controller "has not converged within the
// bound (0s after faults stopped)". Computed in float64, which does not
// overflow.
func (cfg Config[S, T]) tooLong() bool {
	f := cfg.Faults
	rounds := float64((cfg.Objects + cfg.Workers - 1) / cfg.Workers)
	bound := float64(cfg.Resync) + float64(cfg.BackoffCap) + float64(relistCap+readYourWritesCap+leaseTTL+leaseRetry) +
		float64(f.MaxDelay) + rounds*float64(cfg.Passes)*1.1*float64(cfg.ReconcileTime)
	return float64(f.Duration)+bound+2.5*float64(cfg.Resync) >= math.MaxInt64 ||
		8*float64(cfg.BackoffCap) >= math.MaxInt64 // reconcileBounds takes 8/10 of it
}

// anyNegative reports whether one of vs is below zero.
func anyNegative[T int | time.Duration](vs ...T) bool {
	return slices.ContainsFunc(vs, func(v T) bool { return v < 0 })
}

// bound is the convergence bound once faults stop: a resync period (a lost
// hint waits for it), the backoff cap (a failed key waits for it), the
// cache relist cap, the read-your-writes timeout, a lease takeover when
// leadership is simulated (TTL plus a retry period), a delay, and
// ⌈objects/workers⌉ × Passes reconciles of at most 1.1 × ReconcileTime.
func (cfg Config[S, T]) bound() time.Duration {
	b := cfg.Resync + cfg.BackoffCap + relistCap + readYourWritesCap + cfg.Faults.MaxDelay
	if cfg.Faults.LeadershipLosses > 0 {
		b += leaseTTL + leaseRetry
	}
	rounds := (cfg.Objects + cfg.Workers - 1) / cfg.Workers
	return b + time.Duration(rounds*cfg.Passes)*(cfg.ReconcileTime+cfg.ReconcileTime/10)
}

// settle is how long a schedule runs on after the convergence bound, with
// nothing to do: 1.5 resync periods.
func (cfg Config[S, T]) settle() time.Duration { return cfg.Resync + cfg.Resync/2 }

// reconcileBounds are the most reconciles one object may get in the settle
// time after the bound: steady, for a converged object (one per resync,
// plus one); retrying, for one that cannot be reconciled (also one per
// backoff cap, less 20% jitter).
func (cfg Config[S, T]) reconcileBounds() (steady, retrying int) {
	s := cfg.settle()
	steady = int((s+cfg.Resync-1)/cfg.Resync) + 1
	retrying = steady
	if cap := cfg.BackoffCap * 8 / 10; cap > 0 {
		retrying += int((s + cap - 1) / cap)
	}
	return steady, retrying
}
