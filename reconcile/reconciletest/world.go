package reconciletest

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/store/memstore"
)

// world is one schedule: the store, the controller process of the moment,
// and the scheduler that decides, one step at a time, what happens next.
//
// The scheduler runs on the root goroutine of a synctest bubble. Each step it
// waits until every other goroutine is durably blocked (synctest.Wait), so
// the state it looks at is the same on every replay; then it picks one
// action with the seeded random source: let a waiting reconcile or write
// proceed (gates), deliver a watch event, or inject a fault. Nothing the
// controller does can overtake a decision, which is what makes a seed
// replay the interleaving and not only the fault schedule.
type world struct {
	seed  uint64
	rng   *rand.Rand // the scheduler's own; root goroutine only
	f     Faults
	start time.Time
	mem   *memstore.Store
	raw   *lockedBackend // the store without faults, for the harness's writers
	// main is mem as a space; other is the second store (Process.Other),
	// otherRaw that store without faults (OtherStore).
	main, other *space
	otherRaw    *lockedBackend

	leadership    bool
	reconcileTime time.Duration
	passes        int
	bound         time.Duration
	newProc       func(n int) (*Process, error)
	names         []string // the primary objects
	competeFn     func(ctx context.Context, name string, rng *rand.Rand) error

	kick  chan struct{}
	seeds atomic.Uint64 // sub-seeds handed out
	uids  atomic.Int64
	// puids numbers the UIDs of the primary objects the test creates,
	// apart from every other UID, so the same object gets the same UID in
	// the reference run, whatever the controller created meanwhile.
	puids atomic.Int64

	// txnMu serialises every write, so the harness can check each one
	// against the leader key atomically.
	txnMu sync.Mutex
	// seen is the info of the current value of each key the history
	// check has read, tagged with its space (guarded by txnMu).
	seen map[string]seenValue

	mu         sync.Mutex
	gates      []*gate
	streams    []*stream
	ryws       []ryw
	proc       *Process
	faultsOn   bool
	pastBound  bool             // the convergence deadline has passed
	crashed    bool             // a crash point was hit; the scheduler restarts
	armK       int              // a crash is armed: it strikes after the armK-th write of a reconcile; 0 for none
	maxNth     int              // the most writes one reconcile has made so far
	armedUntil time.Time        // an armed crash that finds no write strikes then
	prefix     string           // the primary kind's key prefix
	travelTo   []int64          // revisions worth travelling back to: just before a competing write
	deletedAt  map[int64]string // revisions just after a test deletion → the object deleted
	violations []string
	traceBuf   []byte // traceLocked's
	harms      []Harm // the harm of each violation
	rep        *Report
	objWrites  map[string]*objCounts
	gone       map[string]bool  // primary objects the test deleted (and has not recreated yet)
	work       workload         // scheduler goroutine only
	revs       map[string]int64 // cacheRevs's answer (scheduler goroutine)
	actor      string           // who writes through raw now: "test", "competitor" (scheduler goroutine)
	kind       string           // the primary kind
	manager    string           // the reconciler's manager
	children   map[string]*childHistory
	fields     map[string]map[string]fieldWrite // key (tagged) → field → its last change
	competed   map[string]bool                  // primary objects a competing write touched
	leftover   map[string]leftChild             // children left at the end
	// unrecreated are the primary objects the test could not recreate
	// (the deleted one was still there): the two runs' ends then differ.
	unrecreated map[string]bool
}

func newWorld(seed uint64, f Faults) *world {
	w := &world{
		seed:        seed,
		rng:         rand.New(rand.NewPCG(seed, 0x5eed)),
		f:           f,
		mem:         newMem(),
		kick:        make(chan struct{}, 1),
		rep:         &Report{Seed: seed, Faults: map[string]int{}, FailingStep: -1},
		objWrites:   map[string]*objCounts{},
		gone:        map[string]bool{},
		deletedAt:   map[int64]string{},
		children:    map[string]*childHistory{},
		fields:      map[string]map[string]fieldWrite{},
		seen:        map[string]seenValue{},
		competed:    map[string]bool{},
		unrecreated: map[string]bool{},
	}
	w.main = &space{mem: w.mem}
	w.other = &space{mem: newMem(), tag: otherTag}
	w.raw = &lockedBackend{w: w, sp: w.main}
	w.otherRaw = &lockedBackend{w: w, sp: w.other}
	return w
}

// newMem returns a store of a schedule. Its watches need little buffer: a
// stream's goroutine moves each event to its pending list at once, and the
// scheduler looks only once every goroutine is blocked, so the buffer
// changes nothing a schedule does; the default's 128 events cost a
// schedule about 170 KB for every watch its caches open and reopen.
func newMem() *memstore.Store { return memstore.New(memstore.WithWatchBuffer(8)) }

// space is one store of a schedule: the main one, which holds the primary
// kind and the lease, or the other (Process.Other), a memstore of its own
// whose revisions are unrelated to the main one's.
type space struct {
	mem *memstore.Store
	// tag prefixes the keys of the space wherever the harness names them
	// together with the other space's (traces, child histories, caches by
	// prefix): "" for the main space.
	tag string
}

// otherTag is the other space's tag: no key of the main space starts with
// it (keys start with a kind).
const otherTag = "other:"

// spaceOf returns the space of a tagged key or prefix.
func (w *world) spaceOf(tagged string) *space {
	if strings.HasPrefix(tagged, otherTag) {
		return w.other
	}
	return w.main
}

// newRand returns a source of its own for one consumer, so that consumers
// on different goroutines never share draws.
func (w *world) newRand() *rand.Rand {
	return rand.New(rand.NewPCG(w.seed, w.seeds.Add(1)))
}

func (w *world) nextUID() string { return fmt.Sprintf("uid-%d", w.uids.Add(1)) }

func (w *world) nextPrimaryUID() string { return fmt.Sprintf("uid-p%d", w.puids.Add(1)) }

// poke wakes the scheduler if it is idle.
func (w *world) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// phases of a schedule, as virtual instants.
type phases struct {
	faultsEnd time.Time // faults stop
	deadline  time.Time // every object must have converged
	settled   time.Time // end: a resync period after the deadline, with no writes
	losses    []time.Time
	crashes   []time.Time // when each crash is armed
}

// run plays the schedule and returns when it is over and every goroutine the
// harness started has ended. check is called at the deadline, with the
// world quiescent.
func (w *world) run(settle time.Duration, checkAt func(deadline bool)) error {
	s := &scheduler{w: w, ph: w.plan(settle), checkAt: checkAt}
	w.mu.Lock()
	w.faultsOn = true
	w.mu.Unlock()
	if err := w.startProc(0, 0); err != nil {
		return err
	}
	s.timer = time.NewTimer(time.Hour)
	defer s.timer.Stop()
	for {
		synctest.Wait()
		done, err := s.step(time.Now())
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	w.teardown(s.rival)
	return nil
}

// plan draws the schedule's phases, workload and crashes.
func (w *world) plan(settle time.Duration) phases {
	w.start = time.Now()
	ph := phases{faultsEnd: w.start.Add(w.f.Duration)}
	ph.deadline = ph.faultsEnd.Add(w.bound)
	ph.settled = ph.deadline.Add(settle)
	for range w.f.LeadershipLosses {
		ph.losses = append(ph.losses, w.start.Add(time.Duration(w.rng.Int64N(int64(w.f.Duration)))))
	}
	slices.SortFunc(ph.losses, func(a, b time.Time) int { return a.Compare(b) })
	w.planWorkload(w.f.Deletes, len(w.names))
	ph.crashes = w.planCrashes()
	return ph
}

// scheduler is run's state: the phases still ahead and the rival leader,
// if one holds the lease.
type scheduler struct {
	w       *world
	ph      phases
	checkAt func(deadline bool)
	rival   *rival
	checked bool
	timer   *time.Timer
}

// step takes one scheduling decision at now, with the world quiescent, in
// order of precedence: the phase changes, the faults due, the Loops'
// work, housekeeping, a competing write, then one of the actions that may
// happen, or a wait for the next thing due. It reports whether the
// schedule is over.
func (s *scheduler) step(now time.Time) (done bool, err error) {
	w := s.w
	if w.faultsOn && !now.Before(s.ph.faultsEnd) {
		w.stopFaults(s.rival)
		s.rival = nil
		return false, nil
	}
	if !s.checked && !now.Before(s.ph.deadline) {
		s.checked = true
		s.checkAt(true)
		w.mu.Lock()
		w.pastBound = true
		w.rep.DeadlineWrites = w.rep.Writes
		w.mu.Unlock()
	}
	if !now.Before(s.ph.settled) {
		return true, nil
	}
	if acted, err := s.fault(now); acted || err != nil {
		return false, err
	}
	if w.nextWork(now) || w.housekeep(now) {
		return false, nil
	}
	if w.faultsOn && w.competeFn != nil && w.chance(w.f.CompetingWrites) {
		w.compete()
		return false, nil
	}
	acts := w.actions(now)
	if len(acts) == 0 {
		s.idle(now)
		return false, nil
	}
	w.rep.Steps++
	w.do(acts[w.pick(acts)], now)
	return false, nil
}

// fault strikes the crash or leadership loss due at now, restarts a
// crashed process, or ends a rival's term, and reports whether it did.
func (s *scheduler) fault(now time.Time) (bool, error) {
	if acted, err := s.crash(now); acted || err != nil {
		return acted, err
	}
	return s.leadership(now), nil
}

// crash arms the crash due at now or one for an idle process, or restarts
// a process that crashed, and reports whether it did.
func (s *scheduler) crash(now time.Time) (bool, error) {
	w, ph := s.w, &s.ph
	if w.faultsOn && len(ph.crashes) > 0 && !now.Before(ph.crashes[0]) && w.armCrash() {
		ph.crashes = ph.crashes[1:]
		return true, nil
	}
	if w.faultsOn && w.idleCrash(now) {
		return true, nil
	}
	if w.takeCrash() {
		return true, w.restart()
	}
	return false, nil
}

// leadership strikes the leadership loss due at now or ends a rival's
// term, and reports whether it did. A loss is aimed at work in flight:
// once due, it strikes when a write of the controller waits at its gate
// (which then goes through, or not, under the lost term), or half-way to
// the end of the fault phase if none comes.
func (s *scheduler) leadership(now time.Time) bool {
	w, ph := s.w, &s.ph
	if len(ph.losses) > 0 && !now.Before(ph.losses[0]) && (w.writePending() || !now.Before(ph.lossDeadline())) {
		ph.losses = ph.losses[1:]
		if w.faultsOn && s.rival == nil {
			s.rival = w.loseLeadership(now)
		}
		return true
	}
	if s.rival != nil && !now.Before(s.rival.until) {
		s.rival.stop()
		s.rival = nil
		return true
	}
	return false
}

// lossDeadline is when the next leadership loss strikes even with no write
// waiting: half-way from when it is due to the end of the fault phase.
func (ph *phases) lossDeadline() time.Time {
	return ph.losses[0].Add(ph.faultsEnd.Sub(ph.losses[0]) / 2)
}

// idle runs the convergence check once nothing happens after the faults,
// then waits until the next thing due or a kick.
func (s *scheduler) idle(now time.Time) {
	w, ph := s.w, &s.ph
	if w.rep.ConvergedAfter == 0 && !w.faultsOn && s.checkAt != nil {
		s.checkAt(false)
	}
	wake := []time.Time{ph.faultsEnd, ph.deadline, ph.settled}
	if len(ph.losses) > 0 {
		wake = append(wake, ph.losses[0], ph.lossDeadline())
	}
	if len(ph.crashes) > 0 {
		wake = append(wake, ph.crashes[0])
	}
	if w.armK > 0 {
		wake = append(wake, w.armedUntil)
	}
	if s.rival != nil {
		wake = append(wake, s.rival.until)
	}
	wake = append(wake, w.streamWakes()...)
	wake = append(wake, w.workWake()...)
	next := ph.settled
	for _, t := range wake {
		if t.After(now) && t.Before(next) {
			next = t
		}
	}
	s.timer.Reset(next.Sub(now))
	select {
	case <-w.kick:
	case <-s.timer.C:
	}
}

// chance draws whether something of probability p happens; it draws
// nothing for p ≤ 0.
func (w *world) chance(p float64) bool {
	return p > 0 && w.rng.Float64() < p
}

// pick chooses the action to take: the first forced one (a stream lagging
// more than StaleReads events), else a uniformly random one.
func (w *world) pick(acts []action) int {
	for i, a := range acts {
		if a.forced {
			return i
		}
	}
	return w.rng.IntN(len(acts))
}

// action is one thing the scheduler may let happen.
type action struct {
	gate   *gate
	stream *stream
	forced bool
}

// actions lists what may happen now, in a canonical order that does not
// depend on which goroutine got somewhere first.
func (w *world) actions(now time.Time) []action {
	revs := w.cacheRevs()
	w.mu.Lock()
	defer w.mu.Unlock()
	var acts []action
	slices.SortFunc(w.gates, compareGates)
	for _, g := range w.gates {
		acts = append(acts, action{gate: g})
	}
	lag := w.f.StaleReads
	if !w.faultsOn {
		lag = 0
	}
	for _, s := range w.streams {
		if s.closed || len(s.pending) == 0 || now.Before(s.pausedUntil) {
			continue
		}
		if h := w.holdLocked(s, revs); h > 0 && s.pending[0].Err == nil && s.pending[0].Revision > h {
			continue
		}
		acts = append(acts, action{stream: s, forced: len(s.pending) > lag})
	}
	return acts
}

func (w *world) do(a action, now time.Time) {
	if a.gate != nil {
		w.release(a.gate)
		return
	}
	w.deliver(a.stream, now)
}

// writePending reports whether a write of the controller waits at its gate.
func (w *world) writePending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.ContainsFunc(w.gates, func(g *gate) bool { return g.write })
}

// takeCrash reports, once, that the process hit its crash point.
func (w *world) takeCrash() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.crashed
	w.crashed = false
	return c
}

// startProc starts incarnation n and makes it the current process. travel,
// when not 0, is the revision its primary cache's first listing is served
// at (time travel).
func (w *world) startProc(n int, travel int64) error {
	p, err := w.newProc(n)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.proc = p
	if travel > 0 {
		p.travel = map[string]int64{w.prefix: travel}
		// Behind for a while after the new process can act: after the dead
		// one's lease ran out, when leadership is simulated.
		p.lagFor = time.Duration(1 + w.rng.Int64N(int64(w.f.MaxDelay)))
		if w.leadership {
			p.lagFor += leaseTTL + leaseRetry
		}
	}
	w.traceLocked("start process %d", n)
	w.mu.Unlock()
	return nil
}

// restart tears the dead process down (no drain: it is dead) and starts the
// next incarnation with empty memory over the same store; with probability
// Faults.TimeTravel, against a primary cache that starts older than the
// dead process's last view.
func (w *world) restart() error {
	w.mu.Lock()
	p := w.proc
	w.rep.Faults["crash"]++
	w.disturbLocked("")
	w.traceLocked("crash of process %d", p.Incarnation)
	w.mu.Unlock()
	var seen int64
	if at, ok := p.byPfx[w.prefix]; ok {
		seen = at()
	}
	w.stopProc(p)
	return w.startProc(p.Incarnation+1, w.travelBack(seen))
}

// stopProc ends p and waits, durably, for every goroutine it ran.
func (w *world) stopProc(p *Process) {
	p.kill()
	p.cancel()
	<-p.done
	w.mu.Lock()
	w.streams = slices.DeleteFunc(w.streams, func(s *stream) bool { return s.p == p })
	w.gates = slices.DeleteFunc(w.gates, func(g *gate) bool { return g.p == p })
	w.mu.Unlock()
}

// stopFaults ends the fault phase: every held event becomes deliverable,
// streams that lost events are expired so their caches relist, and a rival
// leader steps down.
func (w *world) stopFaults(r *rival) {
	w.mu.Lock()
	w.faultsOn = false
	w.rep.FaultsStopped = time.Since(w.start)
	w.traceLocked("faults stop")
	var lost []*stream
	for _, s := range w.streams {
		s.pausedUntil = time.Time{}
		if s.lost && !s.closed {
			lost = append(lost, s)
		}
	}
	w.mu.Unlock()
	for _, s := range lost {
		w.expire(s)
	}
	if r != nil {
		r.stop()
	}
}

func (w *world) teardown(r *rival) {
	if r != nil {
		r.stop()
	}
	w.mu.Lock()
	p := w.proc
	w.mu.Unlock()
	w.stopProc(p)
	synctest.Wait()
	h := fnv.New64a()
	for _, e := range w.rep.Trace {
		h.Write([]byte(e))
		h.Write([]byte{'\n'})
	}
	w.rep.TraceHash = h.Sum64()
}

// primaryName returns the object name of a backend key of the primary kind,
// or "".
func primaryName(prefix, key string) string {
	if name, ok := strings.CutPrefix(key, prefix); ok {
		return name
	}
	return ""
}
