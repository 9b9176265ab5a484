package demo

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"maps"
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
//
// Every operation costs time in the size of one group, not of the fleet:
// instances are indexed by group, the starting ones wait in a heap ordered
// by when they start, and a slice of all names lets a fault pick a random
// victim. A fleet of 100,000 groups would otherwise spend its time scanning.
// A group's instances are a short slice, not a map: a group has a handful,
// and at 100,000 groups a map each cost about 20 MB more.
type Fleet struct {
	mu       sync.Mutex
	byName   map[string]*instance
	byGroup  map[string][]*instance
	names    []string     // every instance's name, in no order; byName's index
	starting startingHeap // instances to move to Running, by readyAt then name
	rng      *rand.Rand
	rate     float64 // fault rate while faulty
	faulty   bool
	sub      chan string
	stats    fleetStats
}

type instance struct {
	Instance
	readyAt time.Time
	index   int // in Fleet.names
}

// startingHeap orders instances by readyAt, then name, so that the seed
// alone decides which start fails.
type startingHeap []*instance

func (h startingHeap) Len() int { return len(h) }
func (h startingHeap) Less(i, j int) bool {
	if c := h[i].readyAt.Compare(h[j].readyAt); c != 0 {
		return c < 0
	}
	return h[i].Name < h[j].Name
}
func (h startingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *startingHeap) Push(x any)   { *h = append(*h, x.(*instance)) }
func (h *startingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// addLocked and removeLocked keep the indexes in step.
func (f *Fleet) addLocked(in *instance) {
	in.index = len(f.names)
	f.names = append(f.names, in.Name)
	f.byName[in.Name] = in
	f.byGroup[in.Group] = append(f.byGroup[in.Group], in)
	if in.State == Starting {
		heap.Push(&f.starting, in)
	}
}

func (f *Fleet) removeLocked(in *instance) {
	last := len(f.names) - 1
	moved := f.byName[f.names[last]]
	f.names[in.index], moved.index = moved.Name, in.index
	f.names = f.names[:last]
	delete(f.byName, in.Name)
	g := f.byGroup[in.Group]
	if i := slices.Index(g, in); i >= 0 {
		g = slices.Delete(g, i, i+1)
	}
	if len(g) == 0 {
		delete(f.byGroup, in.Group)
	} else {
		f.byGroup[in.Group] = g
	}
	// A removed instance still in the starting heap is skipped when it
	// comes up: step checks that byName still holds it.
}

// tick is how often instances progress and faults strike.
const tick = 10 * time.Millisecond

func newFleet(seed uint64, rate float64) *Fleet {
	return &Fleet{byName: map[string]*instance{}, byGroup: map[string][]*instance{},
		rng: rand.New(rand.NewPCG(seed, 0xf1ee7)), rate: rate, faulty: rate > 0}
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
	if _, ok := f.byName[in.Name]; ok {
		return errExists
	}
	if f.fault(1) {
		f.stats.FailedCreates++
		return errUnavailable
	}
	in.State = Starting
	f.addLocked(&instance{Instance: in, readyAt: time.Now().Add(tick + time.Duration(f.rng.IntN(6))*tick)})
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
	in, ok := f.byName[name]
	if !ok {
		return errGone
	}
	f.removeLocked(in)
	f.stats.Deletes++
	f.emitLocked(in.Group)
	return nil
}

// List observes the instances of group, in name order.
func (f *Fleet) List(group string) []Instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.byGroup[group]
	out := make([]Instance, 0, len(g))
	for _, in := range g {
		out = append(out, in.Instance)
	}
	slices.SortFunc(out, func(a, b Instance) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Matches reports whether the fleet runs exactly the instances g should
// have: instancesMatch(g, f.List(g.Meta.Name)), without copying them out.
// The judge asks it of every group at every check.
func (f *Fleet) Matches(g *Group) bool {
	if g.Spec.Replicas > 64 {
		return instancesMatch(g, f.List(g.Meta.Name))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	have := f.byGroup[g.Meta.Name]
	if len(have) != g.Spec.Replicas {
		return false
	}
	var seen uint64
	for _, in := range have {
		if !oneOfWanted(g, &in.Instance, &seen) {
			return false
		}
	}
	return true
}

// Groups returns the groups that have instances, in no particular order:
// the controller lists them at every resync to find the orphaned ones, and
// sorting 100,000 names each time cost more than the rest of that listing.
func (f *Fleet) Groups() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.AppendSeq(make([]string, 0, len(f.byGroup)), maps.Keys(f.byGroup))
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
	for len(f.starting) > 0 && !now.Before(f.starting[0].readyAt) {
		in := heap.Pop(&f.starting).(*instance)
		if f.byName[in.Name] != in || in.State != Starting {
			continue // deleted (or replaced) while starting
		}
		in.State = Running
		if f.fault(0.25) {
			in.State = Failed
			f.stats.Crashed++
		}
		f.emitLocked(in.Group)
	}
	// Now and then an instance vanishes (its host died).
	if len(f.names) > 0 && f.fault(0.3) {
		in := f.byName[f.names[f.rng.IntN(len(f.names))]]
		f.removeLocked(in)
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
		if _, ok := f.byName[name]; ok {
			return
		}
		f.addLocked(&instance{Instance: Instance{Name: name, Group: group, Image: image, State: Running}})
		f.stats.Strays++
		f.emitLocked(group)
		return
	}
	var names []string
	for _, in := range f.byGroup[group] {
		names = append(names, in.Name)
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	f.removeLocked(f.byName[names[f.rng.IntN(len(names))]])
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
