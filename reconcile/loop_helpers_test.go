package reconcile

import (
	"bytes"
	"context"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// fixedBackoff is 1s doubling, no jitter, and no overall bucket, so delays
// in tests are exact; resync is daily so it stays out of the way.
func fixedBackoff() []Option {
	return []Option{
		WithResync(24*time.Hour, 0),
		WithBackoff(backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute}),
		WithRetryLimit(backoff.BucketConfig{Rate: rate.Inf}),
	}
}

// script is a Reconciler whose answers are set per key and call number, and
// which records when each call happened.
type script struct {
	mu      sync.Mutex
	answers func(key string, n int) (Result, error)
	fn      func(ctx context.Context, key string) (Result, error)
	calls   map[string][]time.Time
	ctxs    []context.Context
}

func newScript(answers func(key string, n int) (Result, error)) *script {
	return &script{answers: answers, calls: map[string][]time.Time{}}
}

// scriptFunc records the calls of a reconcile function.
func scriptFunc(fn func(ctx context.Context, key string) (Result, error)) *script {
	s := &script{calls: map[string][]time.Time{}}
	s.fn = fn
	return s
}

func (s *script) Reconcile(ctx context.Context, key string) (Result, error) {
	s.mu.Lock()
	n := len(s.calls[key])
	s.calls[key] = append(s.calls[key], time.Now())
	s.ctxs = append(s.ctxs, ctx)
	s.mu.Unlock()
	if s.fn != nil {
		return s.fn(ctx, key)
	}
	return s.answers(key, n)
}

func (s *script) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls[key])
}

// gaps returns the time between consecutive calls of key.
func (s *script) gaps(key string) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	c := s.calls[key]
	for i := 1; i < len(c); i++ {
		out = append(out, c[i].Sub(c[i-1]))
	}
	return out
}

// keySet is a Source listing a fixed set of keys.
func keySet(keys ...string) Source[string] {
	return Keys(func() iter.Seq[string] { return slices.Values(keys) })
}

// memStatus is a ConditionWriter over an in-memory map. A condition is owned
// by the manager that wrote it last.
type memStatus struct {
	mu     sync.Mutex
	conds  map[string][]store.Condition
	owner  map[[2]string]string // (key, type) → manager
	gen    map[string]int64
	writes int
}

func newMemStatus(keys ...string) *memStatus {
	m := &memStatus{conds: map[string][]store.Condition{}, owner: map[[2]string]string{}, gen: map[string]int64{}}
	for _, k := range keys {
		m.gen[k] = 1
	}
	return m
}

func (m *memStatus) Conditions(key string) ([]store.Condition, int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.gen[key]
	return m.conds[key], g, ok
}

func (m *memStatus) OwnsCondition(key, manager, typ string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := conditions.Get(m.conds[key], typ)
	return ok && m.owner[[2]string{key, typ}] == manager
}

func (m *memStatus) WriteCondition(_ context.Context, key string, manager string, c store.Condition) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	conds := m.conds[key]
	if _, err := conditions.Set(&conds, c, time.Now()); err != nil {
		return err
	}
	m.conds[key] = conds
	m.owner[[2]string{key, c.Type}] = manager
	m.writes++
	return nil
}

func (m *memStatus) stalled(key string) (store.Condition, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return conditions.Get(m.conds[key], conditions.Stalled)
}

func (m *memStatus) writeCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes
}

// start runs l in the background; stop cancels it and returns Run's error.
//
// The loop is also stopped when the test ends, so a require that fails
// before stop is called ends the test with its own message instead of
// synctest's "blocked goroutines remain" panic, which hides it.
func start(t *testing.T, l interface{ Run(context.Context) error }) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- l.Run(ctx) }()
	stop = sync.OnceValue(func() error {
		cancel()
		return <-errc
	})
	t.Cleanup(func() { _ = stop() })
	return stop
}

func mustNew(t *testing.T, r Reconciler[string], src Source[string], opts ...Option) *Loop[string] {
	t.Helper()
	l, err := New("test", r, src, opts...)
	require.NoError(t, err)
	return l
}

// logBuffer is a concurrency-safe log destination.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
}

var _ = maps.Keys[map[string]int]

func splitLines(s string) []string { return strings.Split(s, "\n") }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
