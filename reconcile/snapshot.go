package reconcile

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/steady-go/steady/internal/workqueue"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
)

// This file is the Loop's read-only view for status pages, metric scrapes
// and tests: LoopInfo (Loop.Info) and KeyInfo (Loop.Inspect for one key,
// Loop.InspectAll for every key that is not idle). Both are plain values
// without the key type, so one page or collector serves Loops of any key
// type through the Inspectable interface.

// Inspectable is what a status page or a metric collector needs of a Loop;
// every *Loop implements it, whatever its key type.
type Inspectable interface {
	Name() string
	Info() LoopInfo
	InspectAll() []KeyInfo
}

var _ Inspectable = (*Loop[string])(nil)

// LoopInfo is a Loop at one moment.
type LoopInfo struct {
	// Name is the Loop's name; FieldManager the manager it writes as.
	Name         string `json:"name"`
	FieldManager string `json:"fieldManager"`
	// Workers is the configured number of workers; Busy how many are
	// reconciling now (0 while not leading).
	Workers int `json:"workers"`
	Busy    int `json:"busy"`
	// Leading reports whether the Loop is working a term now. Fenced
	// reports whether the term carries a fence (a term from an elector
	// does), and Fence is that fence: its Revision identifies the term.
	Leading bool        `json:"leading"`
	Fenced  bool        `json:"fenced"`
	Fence   store.Fence `json:"fence"`
	// Queue is the current term's queue by state; zero while not leading.
	Queue QueueCounts `json:"queue"`
	// Failing is the number of keys whose last reconcile failed; Stalled
	// the number of objects the Loop reports Stalled (as seen on the
	// objects when a cache source reports conditions, else as the Loop
	// last decided); Oscillating the number of keys whose oscillation
	// report still holds.
	Failing     int `json:"failing"`
	Stalled     int `json:"stalled"`
	Oscillating int `json:"oscillating"`
	// Throttled is the number of keys held because their status writes
	// spent the status budget (oscillation.Throttled): paced, not Stalled.
	Throttled int `json:"throttled"`
	// RecentFailures are the last failures of the 20 keys that failed
	// last, newest first, whether or not the keys still fail.
	RecentFailures []RecentFailure `json:"recentFailures"`
	// Sharding is the replica's shards, for a sharded Loop (WithSharding);
	// nil otherwise.
	Sharding *ShardingInfo `json:"sharding,omitempty"`
}

// ShardingInfo is one replica of a sharded Loop: its membership and shards
// (shard.Status: Owned, Moving, Members...), and its queue per shard.
type ShardingInfo struct {
	shard.Status
	// Queue is the number of keys in the term's queue (waiting, delayed
	// or running) per shard; shards with none are left out.
	Queue map[int]int `json:"queue"`
}

// QueueCounts is a term's queue by state. Ready and Low mean what they mean
// in queue.Counts: Ready+Low keys wait for a worker. Every key waiting for
// a time is in exactly one of Delayed, BackingOff and Held.
type QueueCounts struct {
	// Ready is the number of keys waiting for a worker at normal priority
	// (hints, retries); Low at low priority (resync).
	Ready int `json:"ready"`
	Low   int `json:"low"`
	// Processing is the number of keys being reconciled.
	Processing int `json:"processing"`
	// Delayed is the number of keys waiting for a RequeueAfter (or another
	// delayed add); BackingOff for a retry after a failure; Held for the
	// end of an oscillation hold.
	Delayed    int `json:"delayed"`
	BackingOff int `json:"backingOff"`
	Held       int `json:"held"`
}

// Phase is where a key is in its Loop, in one word.
type Phase string

// The phases of a key, in the order of KeyInfo.Phase's documentation.
const (
	PhaseRunning    Phase = "running"
	PhaseReady      Phase = "ready"
	PhaseBackingOff Phase = "backing-off"
	PhaseHeld       Phase = "held"
	PhaseDelayed    Phase = "delayed"
	PhaseWaiting    Phase = "waiting"
)

// KeyInfo is what a Loop knows of one key.
type KeyInfo struct {
	// Key is the key, formatted with fmt.Sprint.
	Key string `json:"key"`
	// Phase is, in this order of precedence: running (a worker has it),
	// ready (waiting for a worker), backing-off (waiting to retry after a
	// failure), held (waiting out an oscillation hold), delayed (waiting
	// for a RequeueAfter), or waiting (nothing queued: it runs on the next
	// hint or resync, as after a Terminal error).
	Phase Phase `json:"phase"`
	// Why says in words why the key is in its phase; Until is when it
	// becomes ready, for the waiting phases that have a time (and for a
	// running key that is also delayed).
	Why   string    `json:"why"`
	Until time.Time `json:"until,omitzero"`
	// Queue is what the term's queue holds for the key; zero while the
	// Loop does not lead.
	Queue queue.KeyState `json:"queue"`
	// Failures is the number of consecutive failed attempts; LastError the
	// text of the last reconcile's error, and Err the error itself (after
	// a panic, a *PanicError that holds the stack); LastResult its metric
	// label ("success", "error", "requeue", "requeue_after"); LastDuration
	// how long it took (zero unless the Loop times reconciles: with metrics
	// or Debug logging on). All are zero for a key the Loop holds no state
	// for: a healthy one.
	Failures     int           `json:"failures"`
	LastError    string        `json:"lastError,omitempty"`
	Err          error         `json:"-"`
	LastResult   string        `json:"lastResult,omitempty"`
	LastDuration time.Duration `json:"lastDuration,omitempty"`
	// LastFailure is when the key last failed, while the Loop keeps state
	// for it.
	LastFailure time.Time `json:"lastFailure,omitzero"`
	// Stalled reports whether the Loop last decided the key is stalled,
	// with the reason and message it used: the whole message, which the
	// condition stores cut to one line of at most 256 bytes.
	Stalled        bool   `json:"stalled"`
	StalledReason  string `json:"stalledReason,omitempty"`
	StalledMessage string `json:"stalledMessage,omitempty"`
	// Oscillation is the last oscillation detected, while it holds, or
	// the status budget's Throttled report while its hold lasts; its Paths
	// are the flipping fields. HeldUntil is when its hold ends (hints wait
	// until then).
	Oscillation *oscillation.Report `json:"oscillation,omitempty"`
	HeldUntil   time.Time           `json:"heldUntil,omitzero"`
	// Conditions and Generation are the object's, read through the
	// ConditionWriter; nil and 0 without one.
	Conditions []store.Condition `json:"conditions,omitempty"`
	Generation int64             `json:"generation,omitempty"`
}

// Info returns the Loop at this moment. It walks the term's queue and the
// keys the Loop holds state for, so it costs O(keys held): call it from a
// page or a scrape, not per reconcile. It is safe for concurrent use at any
// time, before and after Run.
func (l *Loop[K]) Info() LoopInfo {
	s := LoopInfo{Name: l.name, FieldManager: l.cfg.manager, Workers: l.cfg.workers}
	now := l.clk.Now()
	t := l.cur.Load()
	var held map[K]workqueue.KeyState
	if t != nil {
		s.Leading = true
		s.Fence, s.Fenced = store.FenceFrom(t.ctx)
		s.Busy = t.busy()
		c := t.q.Counts()
		s.Queue.Ready, s.Queue.Low, s.Queue.Processing = c.Ready, c.Low, c.Processing
		if c.Delayed > 0 {
			held = map[K]workqueue.KeyState{}
			for k, st := range t.q.All() {
				if st.Delayed {
					held[k] = st
				}
			}
		}
	}
	l.mu.Lock()
	for k, ks := range l.keys {
		if ks.failures > 0 {
			s.Failing++
		}
		if ks.oscillated != nil {
			s.Oscillating++
		}
		if ks.throttled != nil {
			s.Throttled++
		}
		if ks.stalled != nil && !l.stalledTracked.Load() {
			s.Stalled++
		}
		if st, ok := held[k]; ok {
			s.Queue.countWait(waitPhase(ks, st, now))
			delete(held, k)
		}
	}
	if l.stalledTracked.Load() {
		s.Stalled = len(l.stalledObjs)
	}
	l.mu.Unlock()
	s.Queue.Delayed += len(held) // delayed keys the Loop holds no state for
	s.RecentFailures = l.recent.list()
	if sh := l.cfg.sharder; sh != nil {
		s.Sharding = &ShardingInfo{Status: sh.Status(), Queue: map[int]int{}}
		if t != nil {
			for k := range t.q.All() {
				s.Sharding.Queue[sh.Of(keyText(k))]++
			}
		}
	}
	return s
}

// countWait counts a delayed key in the field of its phase.
func (q *QueueCounts) countWait(p Phase) {
	switch p {
	case PhaseHeld:
		q.Held++
	case PhaseBackingOff:
		q.BackingOff++
	default:
		q.Delayed++
	}
}

// Inspect returns what the Loop knows of key now: its phase, what the queue
// holds for it, its failures and last error, its Stalled decision and
// oscillation, and its object's conditions. A key the Loop holds no state
// for (never failed, or healthy) reports zero values apart from Key, Phase,
// Why, Queue, Conditions and Generation. It is safe for concurrent use at
// any time.
func (l *Loop[K]) Inspect(key K) KeyInfo {
	var qs workqueue.KeyState
	running := false
	if t := l.cur.Load(); t != nil {
		qs = t.q.State(key)
		running = t.running1(key)
	}
	now := l.clk.Now()
	l.mu.Lock()
	info := keyInfo(fmt.Sprint(key), l.keys[key], qs, running, now)
	l.mu.Unlock()
	l.readConditions(key, &info)
	return info
}

// InspectAll returns every key that is not idle: queued, running, delayed,
// or with something the Loop remembers about it (failures, the last error,
// a Stalled decision, an oscillation, a hold), as Inspect reports each.
// They come stalled and oscillating keys first, then failing ones, then
// the rest, each group by key. Conditions are read through the
// ConditionWriter (usually a cache, no store read). It costs O(keys held);
// it is safe for concurrent use at any time.
func (l *Loop[K]) InspectAll() []KeyInfo {
	now := l.clk.Now()
	queued := map[K]workqueue.KeyState{}
	var running map[K]bool
	if t := l.cur.Load(); t != nil {
		for k, st := range t.q.All() {
			queued[k] = st
		}
		running = t.runningKeys()
	}
	keys := make([]K, 0, len(queued))
	l.mu.Lock()
	for k, s := range l.keys {
		if _, ok := queued[k]; !ok && s.noteworthy(now) {
			queued[k] = workqueue.KeyState{}
		}
	}
	out := make([]KeyInfo, 0, len(queued))
	for k, st := range queued {
		out = append(out, keyInfo(fmt.Sprint(k), l.keys[k], st, running[k], now))
		keys = append(keys, k)
	}
	l.mu.Unlock()
	for i, k := range keys {
		l.readConditions(k, &out[i])
	}
	slices.SortFunc(out, func(a, b KeyInfo) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Key, b.Key))
	})
	return out
}

// keyInfo is the KeyInfo of a key with state s (nil for none) and queue
// state st. The caller holds l.mu.
func keyInfo(key string, s *keyState, st workqueue.KeyState, running bool, now time.Time) KeyInfo {
	ki := KeyInfo{Key: key, Queue: publicKeyState(st)}
	if s != nil {
		ki.Failures, ki.Err, ki.LastResult, ki.LastDuration, ki.HeldUntil = s.failures, s.lastErr, s.lastResult, s.lastDur, s.holdUntil
		ki.LastFailure = s.lastFailed
		if s.lastErr != nil {
			ki.LastError = errString(s.lastErr)
		}
		if s.stalled != nil {
			ki.Stalled, ki.StalledReason, ki.StalledMessage = true, s.stalled.reason, s.stalled.message
		}
		if r := cmp.Or(s.oscillated, s.throttled); r != nil {
			o := *r
			o.Paths = slices.Clone(o.Paths)
			ki.Oscillation = &o
		}
	}
	ki.Phase, ki.Why, ki.Until = describeKey(s, st, running || st.Processing, now)
	return ki
}

// readConditions fills in the conditions and generation of key's object,
// read through the ConditionWriter, if there is one.
func (l *Loop[K]) readConditions(key K, info *KeyInfo) {
	if l.sw == nil {
		return
	}
	if conds, gen, ok := l.sw.Conditions(key); ok {
		info.Conditions, info.Generation = conds, gen
	}
}

// running1 reports whether a worker of t is reconciling key now.
func (t *term[K]) running1(key K) bool {
	for i := range t.running {
		r := &t.running[i]
		r.mu.Lock()
		busy := r.busy && r.key == key
		r.mu.Unlock()
		if busy {
			return true
		}
	}
	return false
}

// runningKeys returns the keys t's workers are reconciling now.
func (t *term[K]) runningKeys() map[K]bool {
	running := map[K]bool{}
	for i := range t.running {
		r := &t.running[i]
		r.mu.Lock()
		if r.busy {
			running[r.key] = true
		}
		r.mu.Unlock()
	}
	return running
}

// busyWorkers is the number of workers holding a key now, for an
// activeWorkersReader.
func (l *Loop[K]) busyWorkers() int {
	if t := l.cur.Load(); t != nil {
		return t.busy()
	}
	return 0
}

// busy is the number of the term's workers reconciling now.
func (t *term[K]) busy() int {
	n := 0
	for i := range t.running {
		r := &t.running[i]
		r.mu.Lock()
		if r.busy {
			n++
		}
		r.mu.Unlock()
	}
	return n
}

// noteDuration keeps how long key's last reconcile took, for KeyInfo,
// when the Loop keeps state for the key. It is called only when the Loop
// times reconciles, and costs nothing while no key has state.
func (l *Loop[K]) noteDuration(key K, d time.Duration) {
	if l.nkeys.Load() == 0 {
		return
	}
	l.mu.Lock()
	if s := l.keys[key]; s != nil {
		s.lastDur = d
	}
	l.mu.Unlock()
}

// noteworthy reports whether a key with nothing queued is worth listing:
// it failed, is stalled or oscillating, or is held. A key whose state is
// only an oscillation detector counting writes is idle to an operator.
func (s *keyState) noteworthy(now time.Time) bool {
	return s.failures > 0 || s.lastErr != nil || s.stalled != nil || s.oscillated != nil || s.throttled != nil || now.Before(s.holdUntil)
}

// rank orders InspectAll's keys: stalled or oscillating, then failing,
// then the rest.
func rank(k KeyInfo) int {
	switch {
	case k.Stalled || k.Oscillation != nil:
		return 0
	case k.Failures > 0:
		return 1
	}
	return 2
}

// waitPhase is the phase of a key whose queue state is delayed.
func waitPhase(s *keyState, st workqueue.KeyState, now time.Time) Phase {
	switch {
	case s != nil && !s.holdUntil.IsZero() && now.Before(s.holdUntil):
		return PhaseHeld
	case s != nil && s.failures > 0:
		return PhaseBackingOff
	}
	return PhaseDelayed
}

// describeKey gives a key's phase, why it is there and until when.
func describeKey(s *keyState, st workqueue.KeyState, running bool, now time.Time) (Phase, string, time.Time) {
	switch {
	case running:
		if st.Dirty || st.Delayed {
			return PhaseRunning, "reconciling; runs again after this reconcile", st.ReadyAt
		}
		return PhaseRunning, "reconciling", time.Time{}
	case st.Queued && st.Priority == workqueue.Low:
		return PhaseReady, "queued at low priority (resync)", time.Time{}
	case st.Queued:
		return PhaseReady, "queued, waiting for a worker", time.Time{}
	case s != nil && s.awaited != nil:
		return PhaseWaiting, fmt.Sprintf("its write conflicted with a newer stored object: runs once the cache holds revision %d", s.awaited.Revision), time.Time{}
	case st.Delayed:
		return describeDelayed(s, st, now)
	}
	return PhaseWaiting, describeWaiting(s), time.Time{}
}

// describeDelayed is describeKey for a key that waits for a time.
func describeDelayed(s *keyState, st workqueue.KeyState, now time.Time) (Phase, string, time.Time) {
	switch p := waitPhase(s, st, now); p {
	case PhaseHeld:
		if s.throttled != nil && s.oscillated == nil {
			return p, "throttled: status writes over the status budget; hints wait until the hold ends", st.ReadyAt
		}
		return p, "held after an oscillation: hints wait until the hold ends", st.ReadyAt
	case PhaseBackingOff:
		return p, fmt.Sprintf("backing off after %d consecutive failures", s.failures), st.ReadyAt
	default:
		return p, "RequeueAfter", st.ReadyAt
	}
}

// describeWaiting says why a key that is neither running, queued nor
// delayed waits.
func describeWaiting(s *keyState) string {
	switch {
	case s != nil && s.failures == 0 && s.lastErr != nil && isConflict(s.lastErr):
		return "its write conflicted; not queued (not leading, or the term ended)"
	case s != nil && s.lastResult == "error" && s.failures == 0:
		return "terminal error: runs on the next change or resync"
	case s != nil && s.failures > 0:
		return "failed; not queued (not leading, or the term ended)"
	}
	return "runs on the next change or resync"
}

// publicKeyState is what the term's queue holds for a key, as package queue
// reports it.
func publicKeyState(s workqueue.KeyState) queue.KeyState {
	return queue.KeyState{Queued: s.Queued, Priority: queue.Priority(s.Priority), Processing: s.Processing,
		Dirty: s.Dirty, Delayed: s.Delayed, ReadyAt: s.ReadyAt}
}
