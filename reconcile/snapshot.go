package reconcile

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// This file is the Loop's read-only view for status pages and metric
// scrapes: LoopStatus (Loop.Status) and KeyStatus (Loop.KeyStatuses). Both
// are plain values without the key type, so one page or collector serves
// Loops of any key type through the Inspectable interface.

// Inspectable is what a status page or a metric collector needs of a Loop;
// every *Loop implements it, whatever its key type.
type Inspectable interface {
	Name() string
	Status() LoopStatus
	KeyStatuses() []KeyStatus
}

var _ Inspectable = (*Loop[string])(nil)

// LoopStatus is a Loop at one moment.
type LoopStatus struct {
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
	Queue QueueStatus `json:"queue"`
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
}

// QueueStatus is a term's queue by state. Every key waiting for a time is in
// exactly one of Delayed, BackingOff and Held.
type QueueStatus struct {
	// Ready is the number of keys waiting for a worker, both priorities;
	// ReadyLow how many of them wait at low priority (resync).
	Ready    int `json:"ready"`
	ReadyLow int `json:"readyLow"`
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

// The phases of a key, in the order of KeyStatus.Phase's documentation.
const (
	PhaseRunning    Phase = "running"
	PhaseReady      Phase = "ready"
	PhaseBackingOff Phase = "backing-off"
	PhaseHeld       Phase = "held"
	PhaseDelayed    Phase = "delayed"
	PhaseWaiting    Phase = "waiting"
)

// KeyStatus is what a Loop knows of one key that is not idle.
type KeyStatus struct {
	// Key is the key, formatted with fmt.Sprint.
	Key string `json:"key"`
	// Phase is, in this order of precedence: running (a worker has it),
	// ready (waiting for a worker), backing-off (waiting to retry after a
	// failure), held (waiting out an oscillation hold), delayed (waiting
	// for a RequeueAfter), or waiting (nothing queued: it runs on the next
	// hint or resync, as after a Terminal error).
	Phase Phase `json:"phase"`
	// Why says in words why the key is in its phase; Until is when it
	// becomes ready, for the waiting phases that have a time.
	Why   string    `json:"why"`
	Until time.Time `json:"until,omitzero"`
	// Queue is what the term's queue holds for the key.
	Queue queue.KeyState `json:"queue"`
	// Failures is the number of consecutive failed attempts; LastError the
	// text of the last reconcile's error; LastResult its metric label
	// ("success", "error", "requeue", "requeue_after"); LastDuration how
	// long it took (zero unless the Loop times reconciles: with metrics or
	// Debug logging on).
	Failures     int           `json:"failures"`
	LastError    string        `json:"lastError,omitempty"`
	LastResult   string        `json:"lastResult,omitempty"`
	LastDuration time.Duration `json:"lastDuration,omitempty"`
	// LastFailure is when the key last failed, while the Loop keeps state
	// for it.
	LastFailure time.Time `json:"lastFailure,omitzero"`
	// Stalled reports whether the Loop last decided the key is stalled,
	// with the reason and message it used.
	Stalled        bool   `json:"stalled"`
	StalledReason  string `json:"stalledReason,omitempty"`
	StalledMessage string `json:"stalledMessage,omitempty"`
	// Oscillation is the last oscillation detected, while it holds, or
	// the status budget's Throttled report while its hold lasts; its Paths
	// are the flipping fields.
	Oscillation *oscillation.Report `json:"oscillation,omitempty"`
	// Conditions and Generation are the object's, read through the
	// StatusWriter; nil and 0 without one.
	Conditions []store.Condition `json:"conditions,omitempty"`
	Generation int64             `json:"generation,omitempty"`
}

// Status returns the Loop at this moment. It walks the term's queue and the
// keys the Loop holds state for, so it costs O(keys held): call it from a
// page or a scrape, not per reconcile. It is safe for concurrent use at any
// time, before and after Run.
func (l *Loop[K]) Status() LoopStatus {
	s := LoopStatus{Name: l.name, FieldManager: l.cfg.manager, Workers: l.cfg.workers}
	now := l.clk.Now()
	t := l.cur.Load()
	var held map[K]queue.KeyState
	if t != nil {
		s.Leading = true
		s.Fence, s.Fenced = store.FenceFrom(t.ctx)
		s.Busy = t.busy()
		c := t.q.Counts()
		s.Queue.Ready, s.Queue.ReadyLow, s.Queue.Processing = c.Ready+c.Low, c.Low, c.Processing
		if c.Delayed > 0 {
			held = map[K]queue.KeyState{}
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
			switch waitPhase(ks, st, now) {
			case PhaseHeld:
				s.Queue.Held++
			case PhaseBackingOff:
				s.Queue.BackingOff++
			default:
				s.Queue.Delayed++
			}
			delete(held, k)
		}
	}
	if l.stalledTracked.Load() {
		s.Stalled = len(l.stalledObjs)
	}
	l.mu.Unlock()
	s.Queue.Delayed += len(held) // delayed keys the Loop holds no state for
	s.RecentFailures = l.recent.list()
	return s
}

// KeyStatuses returns every key that is not idle: queued, running, delayed,
// or with something the Loop remembers about it (failures, the last error,
// a Stalled decision, an oscillation, a hold). They come stalled and oscillating keys first, then failing
// ones, then the rest, each group by key. Conditions are read through the
// StatusWriter (usually a cache, no store read). It costs O(keys held); it
// is safe for concurrent use at any time.
func (l *Loop[K]) KeyStatuses() []KeyStatus {
	now := l.clk.Now()
	type entry struct {
		key   K
		queue queue.KeyState
	}
	entries := map[K]*entry{}
	running := map[K]bool{}
	if t := l.cur.Load(); t != nil {
		for k, st := range t.q.All() {
			entries[k] = &entry{key: k, queue: st}
		}
		for i := range t.running {
			r := &t.running[i]
			r.mu.Lock()
			if r.busy {
				running[r.key] = true
			}
			r.mu.Unlock()
		}
	}
	out := make([]KeyStatus, 0, len(entries))
	keys := make([]K, 0, len(entries))
	l.mu.Lock()
	for k, s := range l.keys {
		if entries[k] == nil && s.noteworthy(now) {
			entries[k] = &entry{key: k}
		}
	}
	for k, e := range entries {
		ks := KeyStatus{Key: fmt.Sprint(k), Queue: e.queue}
		s := l.keys[k]
		if s != nil {
			ks.Failures, ks.LastResult, ks.LastDuration = s.failures, s.lastResult, s.lastDur
			ks.LastFailure = s.lastFailed
			if s.lastErr != nil {
				ks.LastError = errString(s.lastErr)
			}
			if s.stalled != nil {
				ks.Stalled, ks.StalledReason, ks.StalledMessage = true, s.stalled.reason, s.stalled.message
			}
			if r := cmp.Or(s.oscillated, s.throttled); r != nil {
				o := *r
				o.Paths = slices.Clone(o.Paths)
				ks.Oscillation = &o
			}
		}
		ks.Phase, ks.Why, ks.Until = describeKey(s, e.queue, running[k] || e.queue.Processing, now)
		out = append(out, ks)
		keys = append(keys, k)
	}
	l.mu.Unlock()
	if l.sw != nil {
		for i, k := range keys {
			if conds, gen, ok := l.sw.Conditions(k); ok {
				out[i].Conditions, out[i].Generation = conds, gen
			}
		}
	}
	slices.SortFunc(out, func(a, b KeyStatus) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a.Key, b.Key))
	})
	return out
}

// busy is the number of the term's workers reconciling now.
// busyWorkers is the number of workers holding a key now, for an
// ActiveWorkersReader.
func (l *Loop[K]) busyWorkers() int {
	if t := l.cur.Load(); t != nil {
		return t.busy()
	}
	return 0
}

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

// noteDuration keeps how long key's last reconcile took, for KeyStatuses,
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

// rank orders KeyStatuses: stalled or oscillating, then failing, then the rest.
func rank(k KeyStatus) int {
	switch {
	case k.Stalled || k.Oscillation != nil:
		return 0
	case k.Failures > 0:
		return 1
	}
	return 2
}

// waitPhase is the phase of a key whose queue state is delayed.
func waitPhase(s *keyState, st queue.KeyState, now time.Time) Phase {
	switch {
	case s != nil && !s.holdUntil.IsZero() && now.Before(s.holdUntil):
		return PhaseHeld
	case s != nil && s.failures > 0:
		return PhaseBackingOff
	}
	return PhaseDelayed
}

// describeKey gives a key's phase, why it is there and until when.
func describeKey(s *keyState, st queue.KeyState, running bool, now time.Time) (Phase, string, time.Time) {
	switch {
	case running:
		if st.Dirty || st.Delayed {
			return PhaseRunning, "reconciling; runs again after this reconcile", st.ReadyAt
		}
		return PhaseRunning, "reconciling", time.Time{}
	case st.Queued && st.Priority == queue.Low:
		return PhaseReady, "queued at low priority (resync)", time.Time{}
	case st.Queued:
		return PhaseReady, "queued, waiting for a worker", time.Time{}
	case st.Delayed:
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
	switch {
	case s != nil && s.lastResult == "error" && s.failures == 0:
		return PhaseWaiting, "terminal error: runs on the next change or resync", time.Time{}
	case s != nil && s.failures > 0:
		return PhaseWaiting, "failed; not queued (not leading, or the term ended)", time.Time{}
	}
	return PhaseWaiting, "runs on the next change or resync", time.Time{}
}
