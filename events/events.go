package events

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Kind is the store kind events are kept under.
const Kind = "Event"

// Event types, as Kubernetes spells them.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Defaults of the Recorder's bounds.
const (
	DefaultPerObject = 20
	DefaultTotal     = 10_000
	DefaultTTL       = time.Hour
	DefaultBuffer    = 1024
)

// Event is one entry of an object's history; it is the spec of the stored
// Event objects.
type Event struct {
	// Kind, Name and UID name the object the event is about.
	Kind string `json:"kind"`
	Name string `json:"name"`
	UID  string `json:"uid,omitempty"`
	// Type is Normal or Warning.
	Type string `json:"type"`
	// Reason is a short CamelCase word a program can match; Message says
	// what happened for a person.
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Source is who recorded it: a Loop's name, or what user code chose.
	Source string `json:"source,omitempty"`
	// ReconcileID is the reconcile that recorded its last occurrence
	// (reconcile.ReconcileID), "" outside a reconcile.
	ReconcileID string `json:"reconcileID,omitempty"`
	// Count is how many times it happened; First and Last when it first
	// and last did.
	Count int       `json:"count"`
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// Stats counts what a Recorder did with the events it was given.
type Stats struct {
	// Recorded events were taken into the buffer; Dropped found it full.
	Recorded, Dropped int64
	// Written is the store writes of events (a merged repeat is one);
	// Deleted the events removed by the bounds and the TTL; WriteErrors
	// the store writes that failed (the events are lost).
	Written, Deleted, WriteErrors int64
}

// Option configures a Recorder.
type Option func(*Recorder) error

// WithPerObject bounds the events kept per object (default 20); n ≥ 1.
func WithPerObject(n int) Option {
	return func(r *Recorder) error {
		if n < 1 {
			return fmt.Errorf("events: per-object bound must be at least 1, got %d", n)
		}
		r.perObject = n
		return nil
	}
}

// WithTotal bounds the events kept in all (default 10,000); n ≥ 1.
func WithTotal(n int) Option {
	return func(r *Recorder) error {
		if n < 1 {
			return fmt.Errorf("events: total bound must be at least 1, got %d", n)
		}
		r.total = n
		return nil
	}
}

// WithTTL deletes an event its TTL after it was last seen (default 1h);
// d > 0.
func WithTTL(d time.Duration) Option {
	return func(r *Recorder) error {
		if d <= 0 {
			return fmt.Errorf("events: TTL must be positive, got %v", d)
		}
		r.ttl = d
		return nil
	}
}

// WithBuffer sets how many events wait for Run before Record drops
// (default 1024); n ≥ 1.
func WithBuffer(n int) Option {
	return func(r *Recorder) error {
		if n < 1 {
			return fmt.Errorf("events: buffer must be at least 1, got %d", n)
		}
		r.ch = make(chan Event, n)
		return nil
	}
}

// WithClock sets the time source (default the real clock); c must not be
// nil (a typed nil, such as a nil pointer, included).
func WithClock(c clock.Clock) Option {
	return func(r *Recorder) error {
		if nilness.IsNil(c) {
			return fmt.Errorf("events: nil clock (%T)", c)
		}
		r.clk = c
		return nil
	}
}

// Recorder records events and keeps them bounded. Record and the readers
// are safe for concurrent use; Run writes, once.
type Recorder struct {
	st        *store.Store[Event, struct{}]
	clk       clock.Clock
	ch        chan Event
	perObject int
	total     int
	ttl       time.Duration
	started   atomic.Bool

	recorded, dropped, written, deleted, writeErrors atomic.Int64

	// What Run knows of the stored events (only Run uses it).
	index map[string]*entry // by event name
	byObj map[objKey][]string

	mu     sync.Mutex
	recent []Event // the last recentSize events recorded, oldest first
}

type objKey struct{ kind, name string }

type entry struct {
	obj  objKey
	last time.Time
}

const recentSize = 100

// New returns a Recorder keeping events in backend under Kind. Run it to
// write them. It fails for a bad option.
func New(backend kv.Backend, opts ...Option) (*Recorder, error) {
	st, err := store.New[Event, struct{}](backend, Kind)
	if err != nil {
		return nil, err
	}
	r := &Recorder{st: st, clk: clock.Real{}, ch: make(chan Event, DefaultBuffer), perObject: DefaultPerObject,
		total: DefaultTotal, ttl: DefaultTTL, index: map[string]*entry{}, byObj: map[objKey][]string{}}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Record records e, stamped now: it never blocks. e.Kind, e.Name and
// e.Reason must be set (else e is dropped and counted); Type defaults to
// Normal. When the buffer is full, e is dropped and counted in
// Stats.Dropped. A nil Recorder drops everything.
func (r *Recorder) Record(e Event) {
	if r == nil {
		return
	}
	if e.Kind == "" || e.Name == "" || e.Reason == "" {
		r.dropped.Add(1)
		return
	}
	if e.Type == "" {
		e.Type = Normal
	}
	now := r.clk.Now()
	e.Count, e.First, e.Last = 1, now, now
	select {
	case r.ch <- e:
		r.recorded.Add(1)
	default:
		r.dropped.Add(1)
		return
	}
	r.mu.Lock()
	if len(r.recent) == recentSize {
		r.recent = append(r.recent[:0], r.recent[1:]...)
	}
	r.recent = append(r.recent, e)
	r.mu.Unlock()
}

// Recent returns the last 100 events recorded by this process, newest
// first, from memory (what the debug page shows).
func (r *Recorder) Recent() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.recent)
	slices.Reverse(out)
	return out
}

// Stats returns the Recorder's counts.
func (r *Recorder) Stats() Stats {
	return Stats{Recorded: r.recorded.Load(), Dropped: r.dropped.Load(), Written: r.written.Load(),
		Deleted: r.deleted.Load(), WriteErrors: r.writeErrors.Load()}
}

// For returns the stored events about the object kind/name, oldest last
// seen first: the Events section of `kubectl describe`. It reads the store
// (every event, as the history is bounded), so it is for people and
// tools, not for every reconcile.
func (r *Recorder) For(ctx context.Context, kind, name string) ([]Event, error) {
	l, err := r.st.List(ctx, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []Event
	for _, o := range l.Items {
		if o.Spec.Kind == kind && o.Spec.Name == name {
			out = append(out, o.Spec)
		}
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Last.Compare(b.Last) })
	return out, nil
}

// Run writes the recorded events until ctx ends, merging repeats, and
// keeps the history within its bounds (a sweep for the TTL every tenth of
// it, at least a millisecond and at most a minute apart). It first reads the stored events, so the
// bounds count those of earlier runs. It returns nil when ctx ends, or the
// error of that first read; a second Run returns an error.
func (r *Recorder) Run(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return errors.New("events: Recorder is already running")
	}
	if err := r.load(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// A tenth of a TTL of a few nanoseconds is no time at all: sweeps due
	// at once would spin.
	sweep := max(min(r.ttl/10, time.Minute), time.Millisecond)
	t := r.clk.NewTimer(sweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			r.expire(ctx)
			t.Reset(sweep)
		case e := <-r.ch:
			batch, order := r.drain(e)
			for _, name := range order {
				r.write(ctx, name, *batch[name])
			}
		}
	}
}

// drain takes first and whatever else is buffered now, merging repeats:
// one store write per aggregate, however many repeats were buffered.
func (r *Recorder) drain(first Event) (map[string]*Event, []string) {
	batch := map[string]*Event{}
	var order []string
	add := func(e Event) {
		name := eventName(e)
		if b, ok := batch[name]; ok {
			b.Count++
			b.Last, b.ReconcileID = e.Last, e.ReconcileID
			return
		}
		batch[name] = &e
		order = append(order, name)
	}
	add(first)
	for range cap(r.ch) {
		select {
		case e := <-r.ch:
			add(e)
		default:
			return batch, order
		}
	}
	return batch, order
}

// load reads the stored events into the index.
func (r *Recorder) load(ctx context.Context) error {
	l, err := r.st.List(ctx, store.ListOptions{})
	if err != nil {
		return fmt.Errorf("events: listing stored events: %w", err)
	}
	for _, o := range l.Items {
		r.remember(o.Meta.Name, o.Spec)
	}
	return nil
}

func (r *Recorder) remember(name string, e Event) {
	k := objKey{e.Kind, e.Name}
	if en, ok := r.index[name]; ok {
		en.last = e.Last
		return
	}
	r.index[name] = &entry{obj: k, last: e.Last}
	r.byObj[k] = append(r.byObj[k], name)
}

// eventName is the stored name of e's aggregate: the object's name (when
// short enough) and a hash of what makes events repeats of each other.
func eventName(e Event) string {
	h := fnv.New64a()
	for _, s := range []string{e.Kind, e.Name, e.UID, e.Type, e.Reason, e.Message, e.Source} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	sum := fmt.Sprintf("%016x", h.Sum64())
	if store.ValidateName(e.Name) == nil && len(e.Name)+1+len(sum) <= 253 {
		return e.Name + "." + sum
	}
	return "e." + sum
}

// write stores one batch entry: a bump of the stored aggregate, or a new
// one, then applies the bounds.
func (r *Recorder) write(ctx context.Context, name string, e Event) {
	w := r.st.As("steady-events")
	for range 3 {
		cur, err := r.st.Get(ctx, name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			_, err = w.Create(ctx, &store.Object[Event, struct{}]{Meta: store.Meta{Name: name}, Spec: e})
		case err == nil:
			next := *cur
			next.Spec.Count += e.Count
			next.Spec.Last, next.Spec.ReconcileID = e.Last, e.ReconcileID
			_, err = w.Update(ctx, &next)
			e = next.Spec
		}
		if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrAlreadyExists) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				r.writeErrors.Add(1)
			}
			return
		}
		r.written.Add(1)
		r.remember(name, e)
		r.bound(ctx, objKey{e.Kind, e.Name})
		return
	}
	r.writeErrors.Add(1)
}

// bound deletes the least recently seen events beyond the per-object bound
// of k and beyond the total bound.
func (r *Recorder) bound(ctx context.Context, k objKey) {
	names := r.byObj[k]
	for len(names) > r.perObject {
		oldest := slices.MinFunc(names, func(a, b string) int { return r.index[a].last.Compare(r.index[b].last) })
		r.remove(ctx, oldest)
		names = r.byObj[k]
	}
	for len(r.index) > r.total {
		var oldest string
		var at time.Time
		for n, en := range r.index {
			if oldest == "" || en.last.Before(at) || en.last.Equal(at) && n < oldest {
				oldest, at = n, en.last
			}
		}
		r.remove(ctx, oldest)
	}
}

// expire deletes the events last seen more than the TTL ago.
func (r *Recorder) expire(ctx context.Context) {
	cutoff := r.clk.Now().Add(-r.ttl)
	var old []string
	for n, en := range r.index {
		if en.last.Before(cutoff) {
			old = append(old, n)
		}
	}
	slices.Sort(old)
	for _, n := range old {
		r.remove(ctx, n)
	}
}

// remove deletes one event from the store and the index. A delete that
// fails leaves it to the next bound or sweep.
func (r *Recorder) remove(ctx context.Context, name string) {
	en := r.index[name]
	if en == nil {
		return
	}
	if _, err := r.st.As("steady-events").Delete(ctx, name); store.IgnoreNotFound(err) != nil {
		r.writeErrors.Add(1)
		if ctx.Err() != nil {
			return
		}
	} else {
		r.deleted.Add(1)
	}
	delete(r.index, name)
	names := r.byObj[en.obj]
	names = slices.DeleteFunc(names, func(n string) bool { return n == name })
	if len(names) == 0 {
		delete(r.byObj, en.obj)
	} else {
		r.byObj[en.obj] = names
	}
}

// emitterKey is the context key of the emitter NewContext installs.
type emitterKey struct{}

// NewContext returns ctx carrying emit, which Emit calls. A reconcile.Loop
// with events (reconcile.WithEvents) gives every reconcile such a ctx,
// whose emit records on the reconciled object with the reconcile's ID; a
// test of a reconciler can install its own to see what it emits.
func NewContext(ctx context.Context, emit func(typ, reason, message string)) context.Context {
	return context.WithValue(ctx, emitterKey{}, emit)
}

// Emit records an event about the object of the reconcile running with
// ctx: typ is Normal or Warning, reason a CamelCase word, message for
// people. Repeats are aggregated into a count. It never blocks; it does
// nothing for a ctx without an emitter (NewContext), such as one that does
// not come from a Loop with events.
func Emit(ctx context.Context, typ, reason, message string) {
	if emit, ok := ctx.Value(emitterKey{}).(func(typ, reason, message string)); ok && emit != nil {
		emit(typ, reason, message)
	}
}
