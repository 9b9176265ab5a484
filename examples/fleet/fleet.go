package main

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// The observed side of the demo: a simulated fleet of instances. It is the
// source of truth about what runs; the store only says what should.

// State is an instance's lifecycle state.
type State string

const (
	Starting State = "starting"
	Running  State = "running"
	Failed   State = "failed"
)

// Instance is one member of the fleet, as an observation returns it.
type Instance struct {
	Name  string `json:"name"`
	Group string `json:"group"`
	Image string `json:"image"`
	State State  `json:"state"`
}

// Errors of fleet operations. errExists and errGone are what idempotent
// callers treat as success.
var (
	errExists      = errors.New("fleet: instance already exists")
	errGone        = errors.New("fleet: no such instance")
	errUnavailable = errors.New("fleet: host unavailable, try again")
)

// fleetStats counts what the fleet did and which faults it injected.
type fleetStats struct {
	Creates, Deletes    int // successful operations
	FailedCreates       int // injected: a create refused by an unavailable host
	Lost                int // injected: an instance vanished
	Crashed             int // injected: an instance went to Failed
	Strays              int // injected: an instance started by someone else
	DroppedEvents       int // injected: a change whose event was not delivered
	Undelivered         int // events with no controller listening, or a full buffer
	InterferenceRemoved int // injected: an instance stopped by someone else
}

// Fleet is a set of simulated instances. Created instances start after a
// short lag; while faults are on, creates fail, instances fail or vanish,
// and change events are dropped, each at the fault rate. Every change sends
// the instance's group name to the current subscriber, if the event is not
// dropped: events are hints, and the fleet does not promise them.
type Fleet struct {
	mu        sync.Mutex
	instances map[string]*instance
	rng       *rand.Rand
	rate      float64 // fault rate while faulty
	faulty    bool
	sub       chan string
	stats     fleetStats
}

type instance struct {
	Instance
	readyAt time.Time
}

// tick is how often instances progress and faults strike.
const tick = 10 * time.Millisecond

func newFleet(seed uint64, rate float64) *Fleet {
	return &Fleet{instances: map[string]*instance{}, rng: rand.New(rand.NewPCG(seed, 0xf1ee7)), rate: rate, faulty: rate > 0}
}

// Subscribe returns a channel of group names whose instances changed, for
// one controller lifetime; it replaces the previous subscriber.
func (f *Fleet) Subscribe() <-chan string {
	ch := make(chan string, 1024)
	f.mu.Lock()
	f.sub = ch
	f.mu.Unlock()
	return ch
}

// Unsubscribe stops delivering events to ch.
func (f *Fleet) Unsubscribe(ch <-chan string) {
	f.mu.Lock()
	if f.sub == ch {
		f.sub = nil
	}
	f.mu.Unlock()
}

// StopFaults ends fault injection; the fleet behaves from now on.
func (f *Fleet) StopFaults() {
	f.mu.Lock()
	f.faulty = false
	f.mu.Unlock()
}

// Stats returns a copy of the counters.
func (f *Fleet) Stats() fleetStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// Create starts an instance. A name that exists gives errExists, whatever
// its image; an injected host failure gives errUnavailable.
func (f *Fleet) Create(ctx context.Context, in Instance) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.instances[in.Name]; ok {
		return errExists
	}
	if f.fault(1) {
		f.stats.FailedCreates++
		return errUnavailable
	}
	in.State = Starting
	f.instances[in.Name] = &instance{Instance: in, readyAt: time.Now().Add(tick + time.Duration(f.rng.IntN(6))*tick)}
	f.stats.Creates++
	f.emitLocked(in.Group)
	return nil
}

// Delete stops an instance; a missing one gives errGone.
func (f *Fleet) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.instances[name]
	if !ok {
		return errGone
	}
	delete(f.instances, name)
	f.stats.Deletes++
	f.emitLocked(in.Group)
	return nil
}

// List observes the instances of group, in name order.
func (f *Fleet) List(group string) []Instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Instance
	for _, in := range f.instances {
		if in.Group == group {
			out = append(out, in.Instance)
		}
	}
	slices.SortFunc(out, func(a, b Instance) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Groups returns the names of the groups that have instances.
func (f *Fleet) Groups() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, in := range f.instances {
		if !seen[in.Group] {
			seen[in.Group] = true
			out = append(out, in.Group)
		}
	}
	slices.Sort(out)
	return out
}

// Run moves instances along and injects faults until ctx ends.
func (f *Fleet) Run(ctx context.Context) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			f.step(now)
		}
	}
}

func (f *Fleet) step(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.instances))
	for name := range f.instances {
		names = append(names, name)
	}
	slices.Sort(names) // map order is random; the seed decides, not the map
	for _, name := range names {
		in := f.instances[name]
		if in.State != Starting || now.Before(in.readyAt) {
			continue
		}
		in.State = Running
		if f.fault(0.25) {
			in.State = Failed
			f.stats.Crashed++
		}
		f.emitLocked(in.Group)
	}
	// Now and then an instance vanishes (its host died).
	if len(names) > 0 && f.fault(0.3) {
		name := names[f.rng.IntN(len(names))]
		in := f.instances[name]
		delete(f.instances, name)
		f.stats.Lost++
		f.emitLocked(in.Group)
	}
}

// Interfere is another actor working on the fleet directly: it stops a
// random instance of group, or starts a stray one with a name the group's
// controller never uses.
func (f *Fleet) Interfere(group, image string, stray bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if stray {
		name := group + "-stray"
		if _, ok := f.instances[name]; ok {
			return
		}
		f.instances[name] = &instance{Instance: Instance{Name: name, Group: group, Image: image, State: Running}}
		f.stats.Strays++
		f.emitLocked(group)
		return
	}
	var names []string
	for name, in := range f.instances {
		if in.Group == group {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	delete(f.instances, names[f.rng.IntN(len(names))])
	f.stats.InterferenceRemoved++
	f.emitLocked(group)
}

// fault reports whether an injected fault strikes now, at scale times the
// fault rate. It is false once faults are off.
func (f *Fleet) fault(scale float64) bool {
	return f.faulty && f.rng.Float64() < f.rate*scale
}

// emitLocked tells the subscriber that group's instances changed, unless
// the event is dropped.
func (f *Fleet) emitLocked(group string) {
	if f.fault(1) {
		f.stats.DroppedEvents++
		return
	}
	select {
	case f.sub <- group: // a nil sub blocks, so it counts as undelivered
	default:
		f.stats.Undelivered++
	}
}
