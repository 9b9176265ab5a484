package shard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// ErrLost is the cause of a membership term that ended without its ctx
// ending: the member key was taken over, or no renewal succeeded within 2/3
// of the TTL. The replica must stop all work; the next Join may succeed.
var ErrLost = errors.New("shard: membership lost")

// ErrMoved is the cause of a shard's context (Enter) when this replica no
// longer owns the shard: it moved to another replica, or the replica's
// membership ended.
var ErrMoved = errors.New("shard: shard moved to another replica")

// Sharder is one replica's membership in a sharded Loop and the shards it
// owns; see the package documentation. Create it with New and give it to
// reconcile.WithSharding; the Loop calls Join, Serve, Owns, Enter and Exit.
// A Sharder serves one Loop. Its methods are safe for concurrent use.
type Sharder struct {
	b      kv.Backend
	name   string
	id     string
	nonce  string // this process's, so a second process with our identity is seen
	cfg    config
	prefix string

	turn chan struct{} // holds a token from Join until Serve returns

	own    []atomic.Bool // own[i]: shard i is owned, filled and not being released
	cached []atomic.Bool // cached[i]: shard i is held (see Caches)
	wake   chan struct{} // a releasing shard's last reconcile returned

	mu     sync.Mutex
	held   map[int]*held
	status Status
	seen   map[string]seenRev // other members' ModRevisions being timed
	warned string             // the last problem logged, so it is logged once
	term   *memberTerm        // between Join and the end of Serve
}

// held is a shard this replica owns.
type held struct {
	fence     store.Fence
	ctx       context.Context // ends with ErrMoved when the shard is lost
	cancel    context.CancelCauseFunc
	inflight  int
	releasing time.Time // when the release began; zero while owned
}

type seenRev struct {
	rev int64
	at  time.Time
}

type memberTerm struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	epoch  int64        // the member key's CreateRevision
	modRev atomic.Int64 // the member key's last ModRevision
	start  time.Time    // when the last successful renewal began
	served bool         // a Serve claimed the term; under Sharder.mu
}

// Status is a replica's view of its sharded Loop.
type Status struct {
	// Identity is this replica's; Member whether it holds its membership.
	Identity string `json:"identity"`
	Member   bool   `json:"member"`
	// Shards is S. Members are the live members last seen, sorted.
	Shards  int      `json:"shards"`
	Members []string `json:"members"`
	// Owned are the shards this replica works on. Moving are the shards
	// in handover here: assigned to it and waiting for their old owner, or
	// owned and being released (their reconciles finishing).
	Owned  []int `json:"owned"`
	Moving []int `json:"moving"`
	// Problem says why the replica holds no shards although it is a
	// member (another replica uses another S), "" when none.
	Problem string `json:"problem,omitempty"`
}

// New returns the Sharder of replica identity in the sharded Loop name, on
// backend b. Every replica of the Loop uses the same name and options and a
// distinct identity (a pod name, a hostname). Its keys live under
// "_shards/"+name+"/", outside every Store's key space. It returns an error
// for a nil backend, an empty name or identity, a name or identity holding
// "/", or invalid options.
func New(b kv.Backend, name, identity string, opts ...Option) (*Sharder, error) {
	switch {
	case nilness.IsNil(b):
		return nil, fmt.Errorf("%w: shard: backend must not be nil (%T)", store.ErrInvalid, b)
	case name == "" || strings.Contains(name, "/"):
		return nil, fmt.Errorf("shard: name must be non-empty without '/', got %q", name)
	case identity == "" || strings.Contains(identity, "/"):
		return nil, fmt.Errorf("shard: identity must be non-empty without '/', got %q", identity)
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	var n [8]byte
	_, _ = rand.Read(n[:])
	return &Sharder{
		b: b, name: name, id: identity, nonce: hex.EncodeToString(n[:]), cfg: cfg,
		prefix: "_shards/" + name + "/",
		turn:   make(chan struct{}, 1), own: make([]atomic.Bool, cfg.shards), cached: make([]atomic.Bool, cfg.shards),
		wake: make(chan struct{}, 1),
		held: map[int]*held{}, seen: map[string]seenRev{},
		status: Status{Identity: identity, Shards: cfg.shards},
	}, nil
}

// Shards returns S.
func (s *Sharder) Shards() int { return s.cfg.shards }

// Identity returns the replica's identity.
func (s *Sharder) Identity() string { return s.id }

// Of returns key's shard: Of(key, s.Shards()).
func (s *Sharder) Of(key string) int { return Of(key, s.cfg.shards) }

// Status returns the replica's view now.
func (s *Sharder) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Members, st.Owned, st.Moving = slices.Clone(st.Members), slices.Clone(st.Owned), slices.Clone(st.Moving)
	return st
}

// Owns reports whether this replica owns shard i now: taken, filled (see
// Hooks.Fill) and not being released. It takes no lock.
func (s *Sharder) Owns(i int) bool { return i >= 0 && i < len(s.own) && s.own[i].Load() }

// Caches reports whether this replica holds the shard of the object named
// name: owned, being filled, or being released (its reconciles may still
// read it). It is the function to give the cache of the Loop's own kind
// (cache.WithKeep(s.Caches)), so that each replica caches only its shards'
// objects; a sharded Loop then refilters that cache as shards move (see
// reconcile.WithSharding). It takes no lock.
func (s *Sharder) Caches(name string) bool { return s.cached[s.Of(name)].Load() }

// Enter registers one reconcile in shard i, if this replica owns it and is
// not releasing it: it returns the shard's context, which ends with cause
// ErrMoved when the shard is lost, and its fence, which every write of the
// reconcile must carry. A shard is released only after every Enter has
// been matched by an Exit (or after the TTL). ok is false for a shard not
// owned here: the caller must drop the key.
func (s *Sharder) Enter(i int) (lost context.Context, fence store.Fence, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[i]
	if h == nil || !s.own[i].Load() { // not held, being filled, or releasing
		return nil, store.Fence{}, false
	}
	h.inflight++
	return h.ctx, h.fence, true
}

// Fence returns the fence of shard i while this replica holds it (owned or
// being released), and otherwise a fence that never holds: a write made
// with it fails with store.ErrFenced.
func (s *Sharder) Fence(i int) store.Fence {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[i]; h != nil {
		return h.fence
	}
	// No key is ever created at revision MaxInt64; a negative revision
	// would be refused as invalid rather than fenced.
	return store.Fence{Key: s.shardKey(i), Revision: math.MaxInt64}
}

// Exit ends a reconcile registered by a successful Enter(i). An Exit with
// no Enter left to match does nothing.
func (s *Sharder) Exit(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[i]
	if h == nil || h.inflight == 0 {
		// An unmatched Exit must not count against a later Enter, whose
		// reconcile the release would then not wait for.
		return
	}
	h.inflight--
	if h.inflight == 0 && !h.releasing.IsZero() {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// record is the value of a member key. Others time its ModRevision and use
// only the TTL it declares, never its clock.
type record struct {
	Holder    string `json:"holder"`
	TTLMillis int64  `json:"ttlMillis"`
	Shards    int    `json:"shards"`
	Nonce     string `json:"nonce"`
}

// shardRecord is the value of a shard key: its holder and the holder's
// epoch (member key CreateRevision). The shard is live while that member key
// is.
type shardRecord struct {
	Holder string `json:"holder"`
	Epoch  int64  `json:"epoch"`
}

func (s *Sharder) memberKey(id string) string { return s.prefix + "members/" + id }
func (s *Sharder) shardKey(i int) string      { return s.prefix + "shard/" + strconv.Itoa(i) }

func (s *Sharder) memberValue() []byte {
	b, _ := json.Marshal(record{Holder: s.id, TTLMillis: s.cfg.ttl.Milliseconds(), Shards: s.cfg.shards, Nonce: s.nonce})
	return b
}

func decode[T any](b []byte) (T, bool) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err == nil
}

// Join blocks until this replica is a member (its member key created), or
// until ctx ends (then it returns ctx's error). It returns the membership
// term: a context derived from ctx that ends when ctx ends or when the
// membership is lost (cause wrapping ErrLost). The caller must then call
// Serve with it, which renews the membership and moves shards. Backend
// errors are retried every retry period. A member key held by another
// process with the same identity is waited out (logged at Error), never
// taken while it is renewed.
func (s *Sharder) Join(ctx context.Context) (context.Context, error) {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	term, err := s.join(ctx)
	if err != nil {
		<-s.turn
	}
	return term, err
}

func (s *Sharder) join(ctx context.Context) (context.Context, error) {
	clk := s.cfg.clock
	key := s.memberKey(s.id)
	var seen seenRev
	wait := clk.NewTimer(s.cfg.retry)
	defer wait.Stop()
	for {
		start := clk.Now()
		kvp, err := s.b.Get(ctx, key)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, store.ErrNotFound):
			kvp = kv.KeyValue{}
			fallthrough
		case err == nil:
			if s.heldElsewhere(kvp, start, &seen) {
				s.logOnce(ctx, "identity in use", "another process renews this replica's member key: give each replica its own identity")
				break
			}
			rev, began, err := s.create(ctx, key, kvp.ModRevision)
			if err == nil {
				return s.startTerm(ctx, rev, began), nil
			}
			if errors.Is(err, kv.ErrCondFailed) {
				continue
			}
		}
		wait.Reset(s.cfg.retry)
		select {
		case <-wait.C():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// heldElsewhere reports whether another live process holds this replica's
// member key kvp, read at start: its nonce is not ours and the key changed
// within its TTL. seen carries the key's revision and when it was first
// seen across join's attempts.
func (s *Sharder) heldElsewhere(kvp kv.KeyValue, start time.Time, seen *seenRev) bool {
	rec, _ := decode[record](kvp.Value)
	if kvp.ModRevision == 0 || rec.Nonce == s.nonce {
		return false
	}
	expired := kvp.ModRevision == seen.rev && start.Sub(seen.at) >= ttlOf(rec, s.cfg.ttl)
	if kvp.ModRevision != seen.rev {
		*seen = seenRev{kvp.ModRevision, start}
	}
	return !expired && rec.Holder == s.id && rec.Nonce != ""
}

// create makes the member key anew: it deletes the one at modRev (a
// leftover of an earlier term, or an expired one) first, so the new key has
// a new CreateRevision, the epoch. It returns when the creating call began:
// no other replica can see the key, and time it, before then, so the term
// is timed from there (the Get and the delete before it need not eat into
// the first renewal's time).
func (s *Sharder) create(ctx context.Context, key string, modRev int64) (rev int64, began time.Time, err error) {
	if modRev != 0 {
		if _, err := s.b.Txn(ctx, []kv.Cond{{Key: key, Target: kv.ModRevision, Revision: modRev}},
			kv.Write{Kind: kv.WriteDelete, Key: key}); err != nil {
			return 0, time.Time{}, err
		}
	}
	began = s.cfg.clock.Now()
	rev, err = s.b.Txn(ctx, []kv.Cond{{Key: key, Target: kv.CreateRevision, Revision: 0}},
		kv.Write{Kind: kv.WritePut, Key: key, Value: s.memberValue()})
	return rev, began, err
}

func (s *Sharder) startTerm(ctx context.Context, rev int64, start time.Time) context.Context {
	tctx, cancel := context.WithCancelCause(ctx)
	t := &memberTerm{ctx: tctx, cancel: cancel, epoch: rev, start: start}
	t.modRev.Store(rev)
	s.mu.Lock()
	s.term = t
	s.status.Member = true
	s.warned = ""
	s.mu.Unlock()
	s.cfg.log.LogAttrs(ctx, slog.LevelInfo, "joined", s.attrs(slog.Int64("epoch", rev))...)
	return store.WithFence(tctx, store.Fence{Key: s.memberKey(s.id), Revision: rev})
}

func ttlOf(r record, fallback time.Duration) time.Duration {
	if r.TTLMillis <= 0 {
		return fallback
	}
	return time.Duration(r.TTLMillis) * time.Millisecond
}

func (s *Sharder) attrs(extra ...slog.Attr) []slog.Attr {
	return append([]slog.Attr{slog.String("sharded", s.name), slog.String("identity", s.id)}, extra...)
}

// logOnce logs problem at Error unless it was the last one logged.
func (s *Sharder) logOnce(ctx context.Context, problem, why string) {
	s.mu.Lock()
	again := s.warned == problem
	s.warned = problem
	s.mu.Unlock()
	if !again {
		s.cfg.log.LogAttrs(ctx, slog.LevelError, problem, s.attrs(slog.String("why", why))...)
	}
}

// Hooks are what Serve calls, from its goroutine, as shards move. A nil
// field is skipped.
type Hooks struct {
	// Fill is called with the shards taken in a round before they are
	// owned: Enter refuses them until it returns, so a cache of the
	// Loop's kind filtered by Caches can list them first and no reconcile
	// reads it before. It should return once that is done or term ended.
	Fill func(shards []int)
	// Gained is called with the shards taken in a round once they are
	// owned: the caller queues their keys.
	Gained func(shards []int)
	// Released is called with the shards whose keys this replica let go
	// of in a round (Caches now rejects their objects).
	Released func(shards []int)
}

// Serve renews the membership of term (Join's) and moves shards until term
// ends: every retry period it lists members and shards, releases the shards
// no longer assigned here (once their reconciles returned) and takes the
// ones assigned here once free, calling h's functions on the way. When term
// ends it releases every shard and then the membership, and returns. With
// no term to serve (no Join before it, or a Serve of that term already
// called) it returns at once.
func (s *Sharder) Serve(term context.Context, h Hooks) {
	s.mu.Lock()
	t := s.term
	// Without a term (no Join, or its Serve ran) there is nothing to serve,
	// and no turn to give back: Join's turn is the one Serve that claims
	// the term.
	fresh := t != nil && !t.served
	if fresh {
		t.served = true
	}
	s.mu.Unlock()
	if !fresh {
		return
	}
	defer func() { <-s.turn }()
	var renewer sync.WaitGroup
	renewer.Go(func() { s.renew(t) })
	clk := s.cfg.clock
	tick := clk.NewTimer(0)
	defer tick.Stop()
	for {
		select {
		case <-term.Done():
			t.cancel(context.Cause(term))
			renewer.Wait()
			s.leave(t)
			return
		case <-tick.C():
			tick.Reset(s.cfg.retry)
		case <-s.wake:
		}
		g, r := s.balance(term, t)
		if len(r) > 0 && h.Released != nil {
			h.Released(r)
		}
		if len(g) == 0 {
			continue
		}
		if h.Fill != nil {
			h.Fill(g)
		}
		if term.Err() != nil {
			continue // leave releases them, never opened
		}
		s.open(g)
		if h.Gained != nil {
			h.Gained(g)
		}
	}
}

// open lets reconciles Enter the shards taken (and filled), unless one was
// dropped or began its release meanwhile.
func (s *Sharder) open(taken []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range taken {
		if h := s.held[i]; h != nil && h.releasing.IsZero() {
			s.own[i].Store(true)
		}
	}
	s.status.Owned = s.ownedLocked()
	s.status.Moving = slices.DeleteFunc(s.status.Moving, func(i int) bool { return s.own[i].Load() })
}

// renew keeps t's member key alive, ending t at 2/3 of the TTL after the
// start of the last successful renewal. Each renewal is due one renew
// interval after that start too, not after the last call returned: on a
// slow store a renewal then has the whole interval to land, where timing
// from its return left it the interval less the previous call's latency
// (and the first one, less Join's calls and Serve's start).
func (s *Sharder) renew(t *memberTerm) {
	clk := s.cfg.clock
	stopAfter := s.cfg.ttl * 2 / 3
	deadline := clk.NewTimer(t.start.Add(stopAfter).Sub(clk.Now()))
	defer deadline.Stop()
	tick := clk.NewTimer(t.start.Add(s.cfg.renew).Sub(clk.Now()))
	defer tick.Stop()
	key := s.memberKey(s.id)
	lost := func(why string) { t.cancel(fmt.Errorf("%w: %s", ErrLost, why)) }
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-deadline.C():
			lost("no successful renewal within 2/3 of the TTL")
			return
		case <-tick.C():
		}
		start := clk.Now()
		res := make(chan error, 1)
		var rev int64
		go func() {
			var err error
			rev, err = s.b.Txn(t.ctx, []kv.Cond{{Key: key, Target: kv.ModRevision, Revision: t.modRev.Load()}},
				kv.Write{Kind: kv.WritePut, Key: key, Value: s.memberValue()})
			res <- err
		}()
		var err error
		select {
		case err = <-res:
		case <-deadline.C():
			lost("no successful renewal within 2/3 of the TTL")
			<-res
			return
		}
		switch {
		case err == nil:
			t.modRev.Store(rev)
			deadline.Reset(start.Add(stopAfter).Sub(clk.Now()))
			tick.Reset(start.Add(s.cfg.renew).Sub(clk.Now()))
		case errors.Is(err, kv.ErrCondFailed):
			lost("the member key was taken over")
			return
		case t.ctx.Err() != nil:
			return
		default:
			tick.Reset(min(s.cfg.retry, s.cfg.renew))
		}
	}
}

// balance lists members and shards once and moves shards; it returns the
// shards taken (not yet open) and those let go.
func (s *Sharder) balance(ctx context.Context, t *memberTerm) (gained, released []int) {
	kvs, err := s.list(ctx)
	if err != nil {
		return nil, nil
	}
	v := s.look(ctx, t, kvs)
	owner := make([]string, s.cfg.shards) // nobody's: hold no shards
	if v.problem == "" {
		owner = Rebalance(v.members, v.holders(s.cfg.shards))
	} else {
		s.logOnce(ctx, "shard count mismatch; holding no shards", v.problem)
	}
	releasing, released := s.release(ctx, v, owner)
	gained, waiting := s.take(ctx, t, v, owner)
	moving := append(append(releasing, waiting...), gained...) // gained: filling
	slices.Sort(moving)
	s.mu.Lock()
	s.status.Members = v.members
	s.status.Owned = s.ownedLocked()
	s.status.Moving = moving
	s.status.Problem = v.problem
	s.mu.Unlock()
	return gained, released
}

// view is one listing of the members and shards.
type view struct {
	now     time.Time
	members []string            // live, sorted, this replica included
	epochs  map[string]int64    // live member → its epoch
	shards  map[int]kv.KeyValue // shard → its key
	problem string              // a member with another S
}

// holders returns each shard's live holder, "" for a shard nobody holds
// or whose holder's membership is over.
func (v view) holders(shards int) []string {
	out := make([]string, shards)
	for i, kvp := range v.shards {
		if rec, _ := decode[shardRecord](kvp.Value); rec.Epoch != 0 && v.epochs[rec.Holder] == rec.Epoch {
			out[i] = rec.Holder
		}
	}
	return out
}

// look reads a listing: it times the other members' keys, deletes those
// that expired (so their shards can be taken) and leaves them out.
func (s *Sharder) look(ctx context.Context, t *memberTerm, kvs []kv.KeyValue) view {
	v := view{now: s.cfg.clock.Now(), members: []string{s.id}, epochs: map[string]int64{s.id: t.epoch}, shards: map[int]kv.KeyValue{}}
	listed := map[string]bool{}
	for _, kvp := range kvs {
		rest := strings.TrimPrefix(kvp.Key, s.prefix)
		if n, ok := strings.CutPrefix(rest, "shard/"); ok {
			if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < s.cfg.shards {
				v.shards[i] = kvp
			}
			continue
		}
		id, ok := strings.CutPrefix(rest, "members/")
		if !ok || id == s.id {
			continue
		}
		listed[id] = true
		rec, _ := decode[record](kvp.Value)
		if s.expired(id, kvp.ModRevision, ttlOf(rec, s.cfg.ttl), v.now) {
			_, _ = s.b.Txn(ctx, []kv.Cond{{Key: kvp.Key, Target: kv.ModRevision, Revision: kvp.ModRevision}},
				kv.Write{Kind: kv.WriteDelete, Key: kvp.Key})
			continue
		}
		v.members = append(v.members, id)
		v.epochs[id] = kvp.CreateRevision
		if rec.Shards != s.cfg.shards && v.problem == "" {
			v.problem = fmt.Sprintf("replica %q uses %d shards, this one %d: every replica must use the same number", id, rec.Shards, s.cfg.shards)
		}
	}
	slices.Sort(v.members)
	s.mu.Lock()
	for id := range s.seen {
		if !listed[id] {
			delete(s.seen, id)
		}
	}
	s.mu.Unlock()
	return v
}

// expired reports whether member id's key has stayed at modRev for ttl,
// timed on this replica's clock from when it first saw modRev.
func (s *Sharder) expired(id string, modRev int64, ttl time.Duration, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sr, known := s.seen[id]
	if !known || sr.rev != modRev {
		sr = seenRev{modRev, now}
		s.seen[id] = sr
	}
	return now.Sub(sr.at) >= ttl
}

// release lets go of the held shards owner gives to another replica: it
// cancels their reconciles, and deletes a shard's key once they returned
// (or after the TTL). A held shard whose key was taken over is dropped at
// once. It returns the shards still being released, and those let go.
func (s *Sharder) release(ctx context.Context, v view, owner []string) (releasing, released []int) {
	var done []int // ready to delete: no reconciles left, or the TTL passed
	for _, i := range s.heldShards() {
		kvp, present := v.shards[i]
		s.mu.Lock()
		h := s.held[i]
		if !present || kvp.CreateRevision != h.fence.Revision {
			// Taken over: only after our membership expired, so our term
			// is ending. Stop at once; the store fences what is left.
			s.drop(i, h)
			s.mu.Unlock()
			released = append(released, i)
			continue
		}
		if owner[i] == s.id && h.releasing.IsZero() {
			s.mu.Unlock()
			continue
		}
		if h.releasing.IsZero() {
			h.releasing = v.now
			s.own[i].Store(false)
			h.cancel(ErrMoved)
		}
		ready := h.inflight == 0 || v.now.Sub(h.releasing) >= s.cfg.ttl
		s.mu.Unlock()
		if ready {
			done = append(done, i)
			continue
		}
		releasing = append(releasing, i)
	}
	deleted, failed := partition(done, func(i int) bool {
		s.mu.Lock()
		h := s.held[i] // only this goroutine (Serve's) removes held shards
		s.mu.Unlock()
		if !s.deleteShard(ctx, i, h.fence.Revision) {
			return false
		}
		s.mu.Lock()
		delete(s.held, i)
		s.cached[i].Store(false)
		s.mu.Unlock()
		return true
	})
	released, releasing = append(released, deleted...), append(releasing, failed...)
	slices.Sort(releasing)
	slices.Sort(released)
	return releasing, released
}

// take acquires the shards owner gives to this replica that are free: no
// key, or a key whose holder's membership is over. It returns the shards
// taken and those that wait for their live old owner (or failed), each
// sorted. The shards are taken concurrently (each its own delete and
// create, conditioned on that shard's key alone), so taking a crashed
// replica's many shards costs a few round trips, not two per shard.
func (s *Sharder) take(ctx context.Context, t *memberTerm, v view, owner []string) (gained, waiting []int) {
	var free []int
	for i := range s.cfg.shards {
		if owner[i] != s.id || s.holds(i) {
			continue
		}
		kvp, present := v.shards[i]
		if present {
			rec, _ := decode[shardRecord](kvp.Value)
			switch {
			case rec.Holder == s.id && rec.Epoch == t.epoch:
				s.adopt(i, kvp.CreateRevision) // ours, from a release that failed
				gained = append(gained, i)
				continue
			case rec.Epoch != 0 && v.epochs[rec.Holder] == rec.Epoch:
				waiting = append(waiting, i) // its live owner has yet to release it
				continue
			}
		}
		free = append(free, i)
	}
	taken, failed := partition(free, func(i int) bool { return s.takeOne(ctx, t, i, v.shards[i]) })
	gained, waiting = append(gained, taken...), append(waiting, failed...)
	slices.Sort(gained)
	slices.Sort(waiting)
	return gained, waiting
}

// takeOne creates shard i's key for t, first deleting kv (when present: a
// key whose holder's membership is over). It reports whether i is now held.
func (s *Sharder) takeOne(ctx context.Context, t *memberTerm, i int, kvp kv.KeyValue) bool {
	if kvp.ModRevision != 0 {
		if _, err := s.b.Txn(ctx, []kv.Cond{{Key: kvp.Key, Target: kv.ModRevision, Revision: kvp.ModRevision}},
			kv.Write{Kind: kv.WriteDelete, Key: kvp.Key}); err != nil {
			return false
		}
	}
	val, _ := json.Marshal(shardRecord{Holder: s.id, Epoch: t.epoch})
	rev, err := s.b.Txn(ctx, []kv.Cond{
		{Key: s.shardKey(i), Target: kv.CreateRevision, Revision: 0},
		{Key: s.memberKey(s.id), Target: kv.CreateRevision, Revision: t.epoch},
	}, kv.Write{Kind: kv.WritePut, Key: s.shardKey(i), Value: val})
	if err != nil {
		return false
	}
	s.adopt(i, rev)
	return true
}

// maxCalls bounds the store calls one replica makes at once to take or
// release shards: enough that a replica taking a crashed peer's shards
// waits a few round trips, few enough not to flood a loaded store.
const maxCalls = 32

// concurrently calls f for each of items, at most maxCalls at a time, and
// returns once every call returned.
func concurrently(items []int, f func(i int)) {
	if len(items) == 1 {
		f(items[0])
		return
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxCalls)
	for _, i := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// partition runs f on items as concurrently does and splits them by its
// answer, each part sorted.
func partition(items []int, f func(i int) bool) (yes, no []int) {
	var mu sync.Mutex
	concurrently(items, func(i int) {
		ok := f(i)
		mu.Lock()
		defer mu.Unlock()
		if ok {
			yes = append(yes, i)
		} else {
			no = append(no, i)
		}
	})
	slices.Sort(yes)
	slices.Sort(no)
	return yes, no
}

func (s *Sharder) holds(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.held[i]
	return ok
}

// list reads every member and shard key.
func (s *Sharder) list(ctx context.Context) ([]kv.KeyValue, error) {
	var out []kv.KeyValue
	opts := kv.ListOptions{}
	for {
		l, err := s.b.List(ctx, s.prefix, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, l.KVs...)
		if l.Continue == "" {
			return out, nil
		}
		opts.Continue, opts.Revision = l.Continue, l.Revision
	}
}

func (s *Sharder) heldShards() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int, 0, len(s.held))
	for i := range s.held {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

func (s *Sharder) ownedLocked() []int {
	out := []int{}
	for i := range s.held {
		if s.own[i].Load() {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// adopt records shard i as held with the fence of its key at rev; Serve
// opens it (Owns) once filled.
func (s *Sharder) adopt(i int, rev int64) {
	ctx, cancel := context.WithCancelCause(context.Background())
	s.mu.Lock()
	s.held[i] = &held{fence: store.Fence{Key: s.shardKey(i), Revision: rev}, ctx: ctx, cancel: cancel}
	s.cached[i].Store(true)
	s.mu.Unlock()
}

// drop forgets shard i, ending its context. Under s.mu.
func (s *Sharder) drop(i int, h *held) {
	s.own[i].Store(false)
	s.cached[i].Store(false)
	h.cancel(ErrMoved)
	delete(s.held, i)
}

// deleteShard deletes shard i's key if it still has CreateRevision rev. It
// reports whether the key is gone (deleted, or no longer ours).
func (s *Sharder) deleteShard(ctx context.Context, i int, rev int64) bool {
	_, err := s.b.Txn(ctx, []kv.Cond{{Key: s.shardKey(i), Target: kv.CreateRevision, Revision: rev}},
		kv.Write{Kind: kv.WriteDelete, Key: s.shardKey(i)})
	return err == nil || errors.Is(err, kv.ErrCondFailed)
}

// leave ends t: every shard's context ends, its reconciles get up to the TTL
// to return, then the shard keys and the member key are deleted, so other
// replicas take over at once. The deletes use a detached ctx bounded by the
// TTL; one that fails is taken over after the TTL.
func (s *Sharder) leave(t *memberTerm) {
	clk := s.cfg.clock
	s.mu.Lock()
	var moving []int
	for i, h := range s.held {
		s.own[i].Store(false)
		h.cancel(ErrMoved)
		if h.releasing.IsZero() {
			h.releasing = clk.Now()
		}
		moving = append(moving, i)
	}
	slices.Sort(moving)
	s.status.Owned, s.status.Moving = nil, moving
	s.mu.Unlock()
	limit := clk.NewTimer(s.cfg.ttl)
	defer limit.Stop()
wait:
	for s.busy() {
		select {
		case <-s.wake:
		case <-limit.C():
			s.cfg.log.LogAttrs(t.ctx, slog.LevelWarn, "leaving with reconciles still running; their writes are fenced", s.attrs()...)
			break wait
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), s.cfg.ttl)
	defer cancel()
	concurrently(s.heldShards(), func(i int) {
		s.mu.Lock()
		h := s.held[i]
		delete(s.held, i)
		s.cached[i].Store(false)
		s.mu.Unlock()
		s.deleteShard(ctx, i, h.fence.Revision)
	})
	_, _ = s.b.Txn(ctx, []kv.Cond{{Key: s.memberKey(s.id), Target: kv.ModRevision, Revision: t.modRev.Load()}},
		kv.Write{Kind: kv.WriteDelete, Key: s.memberKey(s.id)})
	s.mu.Lock()
	s.term = nil
	s.status.Member, s.status.Owned, s.status.Moving = false, nil, nil
	s.mu.Unlock()
	s.cfg.log.LogAttrs(ctx, slog.LevelInfo, "left", s.attrs(slog.Any("cause", context.Cause(t.ctx)))...)
}

// busy reports whether a held shard has reconciles running.
func (s *Sharder) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.held {
		if h.inflight > 0 {
			return true
		}
	}
	return false
}
