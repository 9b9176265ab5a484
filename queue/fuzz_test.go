package queue_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/internal/race"
	"github.com/steady-go/steady/queue"
	"github.com/stretchr/testify/require"
)

// FuzzQueue drives random operation sequences against the queue and a small
// reference model that states the semantics directly, with slices and a map
// instead of lists, a hash table and a heap, and checks after every step
// that both agree on the key Get hands out, on Len, and on every key's
// State. Time is a synctest bubble's, so the real clock and timer are used.
// Each sequence runs three times: with a limiter given to NewRateLimited,
// and with the failure counts kept in the queue's own entries (WithBackoff),
// whose entries must outlive Done and ShutDown while a count is above zero,
// once with a policy whose delays the queue computes with Policy.Delay and
// once with a Factor-2 policy whose delays it computes itself. Under -race
// the seed corpus holds a quarter of the long random sequences (see
// race.Sweep).
func FuzzQueue(f *testing.F) {
	f.Add([]byte{0, 0, 5, 0, 0, 0, 6, 0, 5, 0}) // add, get, add while processing, done, get
	f.Add([]byte{2, 5, 0, 1, 8, 1, 5, 0, 8, 3, 5, 0})
	f.Add([]byte{1, 0, 1, 1, 0, 2, 0, 1, 5, 0, 5, 0, 5, 0})
	f.Add([]byte{3, 0, 5, 0, 8, 0, 3, 0, 1, 0, 8, 3, 5, 0, 4, 0, 3, 0})
	f.Add([]byte{0, 0, 5, 0, 2, 4, 0, 0, 9, 0, 7, 0, 5, 0, 5, 0})
	r := rand.New(rand.NewPCG(1, 2))
	for range race.Sweep(24, 4) {
		b := make([]byte, 800)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		synctest.Test(t, func(t *testing.T) {
			runModel(t, ops, queue.NewRateLimited[string](&countingLimiter[string]{}), countingDelay)
		})
		synctest.Test(t, func(t *testing.T) {
			runModel(t, ops, queue.New[string](queue.WithBackoff(modelPolicy)), modelPolicy.Delay)
		})
		synctest.Test(t, func(t *testing.T) {
			runModel(t, ops, queue.New[string](queue.WithBackoff(doublingPolicy)), doublingPolicy.Delay)
		})
	})
}

// modelKeys is small enough for adds to collide often and large enough for
// both priority levels to hold more than 16 keys.
var modelKeys = func() []string {
	k := make([]string, 20)
	for i := range k {
		k[i] = string(rune('a' + i))
	}
	return k
}()

// countingDelay is countingLimiter's delay for a key's n-th failure from 0.
func countingDelay(n int) time.Duration { return time.Duration(n+1) * time.Second }

// modelPolicy backs off without jitter, so the model can predict every
// delay, and slowly enough for backed-off keys to come due during a run.
var modelPolicy = backoff.Policy{Base: 500 * time.Millisecond, Factor: 1.5, Cap: 10 * time.Second}

// doublingPolicy doubles, as DefaultPolicy does, with jitter from a Rand
// that always draws 0.3, so the model can still predict every delay.
var doublingPolicy = backoff.Policy{Base: 300 * time.Millisecond, Factor: 2, Cap: 8 * time.Second, Jitter: 0.2,
	Rand: func() float64 { return 0.3 }}

// runModel runs ops against q and the model; delay is q's delay for a key's
// n-th failure since Forget, from 0.
func runModel(t *testing.T, ops []byte, q *queue.Queue[string], delay func(n int) time.Duration) {
	defer q.ShutDown()
	m := newModel()
	m.delay = delay
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i]%10, ops[i+1]
		k := modelKeys[int(arg)%len(modelKeys)]
		d := time.Duration(arg/20%4) * time.Second
		switch op {
		case 0:
			q.Add(k)
			m.add(k)
		case 1:
			q.AddLow(k)
			m.addLow(k)
		case 2:
			q.AddAfter(k, d)
			m.addAfter(k, d)
		case 3:
			q.AddRateLimited(k)
			m.addRateLimited(k)
		case 4:
			q.Forget(k)
			delete(m.failures, k)
		case 5:
			got, ok := tryGet(q)
			want, wantOK := m.get()
			require.Equal(t, wantOK, ok, "Get ok, step %d", i/2)
			require.Equal(t, want, got, "Get key, step %d", i/2)
		case 6:
			q.Done(k)
			m.done(k)
		case 7: // Done of a key that is processing, if any
			for _, k := range modelKeys {
				if m.keys[k] != nil && m.keys[k].processing {
					q.Done(k)
					m.done(k)
					break
				}
			}
		case 8:
			d := time.Duration(arg%3+1) * 500 * time.Millisecond
			time.Sleep(d)
			m.now += d
		case 9:
			if arg == 0 { // rare, so most sequences run long
				q.ShutDown()
				m.shutDown()
			}
		}
		m.check()
		require.Equal(t, m.ready(), q.Len(), "Len, step %d", i/2)
		for _, k := range modelKeys {
			want, got := m.state(k), q.State(k)
			require.True(t, want.ReadyAt.Equal(got.ReadyAt), "State(%q).ReadyAt = %v, want %v, step %d", k, got.ReadyAt, want.ReadyAt, i/2)
			want.ReadyAt, got.ReadyAt = time.Time{}, time.Time{}
			require.Equal(t, want, got, "State(%q), step %d", k, i/2)
			require.Equal(t, m.failures[k], q.NumRequeues(k), "NumRequeues(%q)", k)
		}
	}
}

type modelKey struct {
	ready      int // 0: no, 1: normal, 2: low
	processing bool
	dirty      int // 0: no, 1: normal, 2: low
	delayed    bool
	at         time.Duration
	seq        int
}

type model struct {
	keys        map[string]*modelKey
	normal, low []string
	normalRun   int
	skips       int
	seq         int
	now         time.Duration
	shutdown    bool
	failures    map[string]int
	delay       func(n int) time.Duration
}

func newModel() *model {
	return &model{keys: map[string]*modelKey{}, failures: map[string]int{}}
}

func (m *model) ready() int { return len(m.normal) + len(m.low) }

func (m *model) hasDelayed() bool {
	for _, s := range m.keys {
		if s.delayed {
			return true
		}
	}
	return false
}

func (m *model) enqueue(k string, level int) {
	m.keys[k].ready = level
	if level == 1 {
		m.normal = append(m.normal, k)
	} else {
		m.low = append(m.low, k)
	}
}

func (m *model) add(k string) {
	if m.shutdown {
		return
	}
	s := m.keys[k]
	if s == nil {
		m.keys[k] = &modelKey{}
		m.enqueue(k, 1)
		return
	}
	s.delayed = false // a normal add makes a waiting key ready now
	switch {
	case s.processing:
		s.dirty = 1
	case s.ready == 2:
		m.low = slices.DeleteFunc(m.low, func(x string) bool { return x == k })
		m.enqueue(k, 1)
	case s.ready == 0:
		m.enqueue(k, 1)
	}
}

func (m *model) addLow(k string) {
	if m.shutdown {
		return
	}
	s := m.keys[k]
	if s == nil {
		m.keys[k] = &modelKey{}
		m.enqueue(k, 2)
		return
	}
	if s.processing && !s.delayed && s.dirty == 0 {
		s.dirty = 2
	}
}

func (m *model) addAfter(k string, d time.Duration) {
	if d <= 0 {
		m.add(k)
		return
	}
	if m.shutdown {
		return
	}
	at := m.now + d
	s := m.keys[k]
	switch {
	case s == nil:
		m.seq++
		m.keys[k] = &modelKey{delayed: true, at: at, seq: m.seq}
	case s.delayed:
		if at < s.at {
			m.seq++
			s.at, s.seq = at, m.seq
		}
	case s.processing && s.dirty == 0:
		m.seq++
		s.delayed, s.at, s.seq = true, at, m.seq
	}
}

func (m *model) addRateLimited(k string) {
	if m.shutdown {
		return
	}
	m.addAfter(k, m.delay(m.failures[k]))
	m.failures[k]++
}

func (m *model) promote() {
	var due []string
	for k, s := range m.keys {
		if s.delayed && s.at <= m.now {
			due = append(due, k)
		}
	}
	slices.SortFunc(due, func(a, b string) int {
		sa, sb := m.keys[a], m.keys[b]
		return cmp.Or(cmp.Compare(sa.at, sb.at), cmp.Compare(sa.seq, sb.seq))
	})
	for _, k := range due {
		s := m.keys[k]
		s.delayed = false
		if s.processing {
			s.dirty = 1
		} else {
			m.enqueue(k, 1)
		}
	}
}

// check is what Len and State do first: make due keys ready.
func (m *model) check() {
	if m.hasDelayed() {
		m.skips = 0
		m.promote()
	}
}

func (m *model) get() (string, bool) {
	if m.hasDelayed() && (m.ready() == 0 || m.skips >= 7) {
		m.skips = 0
		m.promote()
	} else {
		m.skips++
	}
	var k string
	switch {
	case len(m.low) > 0 && (len(m.normal) == 0 || m.normalRun >= 15):
		k, m.low = m.low[0], m.low[1:]
		m.normalRun = 0
	case len(m.normal) > 0:
		if len(m.low) > 0 {
			m.normalRun++
		}
		k, m.normal = m.normal[0], m.normal[1:]
	default:
		return "", false
	}
	s := m.keys[k]
	s.ready = 0
	s.processing = true
	return k, true
}

func (m *model) done(k string) {
	s := m.keys[k]
	if s == nil || !s.processing {
		return
	}
	s.processing = false
	dirty := s.dirty
	s.dirty = 0
	switch {
	case dirty != 0:
		m.enqueue(k, dirty)
	case !s.delayed:
		delete(m.keys, k)
	}
}

func (m *model) shutDown() {
	m.shutdown = true
	for k, s := range m.keys {
		if s.delayed {
			s.delayed = false
			if !s.processing {
				delete(m.keys, k)
			}
		}
	}
}

func (m *model) state(k string) queue.KeyState {
	s := m.keys[k]
	if s == nil {
		return queue.KeyState{}
	}
	ks := queue.KeyState{Queued: s.ready != 0, Processing: s.processing, Dirty: s.dirty != 0, Delayed: s.delayed}
	if s.ready == 2 || s.dirty == 2 {
		ks.Priority = queue.Low
	}
	if s.delayed {
		ks.ReadyAt = time.Now().Add(s.at - m.now)
	}
	return ks
}
