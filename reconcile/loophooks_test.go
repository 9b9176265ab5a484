package reconcile

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// hooksSink is a Sink that is not a Loop but keeps the Loop's side of the
// contract with its cache sources (loopHooks), and records what it is told.
type hooksSink struct {
	mu      sync.Mutex
	added   []string
	judging bool
	states  []string
	forgot  []string
}

func (h *hooksSink) Add(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.added = append(h.added, key)
}
func (h *hooksSink) AddLow(key string)                            { h.Add(key) }
func (h *hooksSink) AddAfter(key string, _ time.Duration)         { h.Add(key) }
func (h *hooksSink) userPanic(string, *guard.Panic, ...slog.Attr) {}
func (h *hooksSink) managers() (string, string)                   { return "app", "app-loop" }
func (h *hooksSink) ownWrite(any, string, int64) (author, bool, bool) {
	return author{}, false, false
}
func (h *hooksSink) sawWrite(any, int64) (author, bool)     { return author{}, false }
func (h *hooksSink) missedHints(any, int64, []string)       {}
func (h *hooksSink) holdEarly(any, int64, *earlyWrite)      {}
func (h *hooksSink) keepsState(string) bool                 { return false }
func (h *hooksSink) observeWrite(string, oscillation.Write) {}
func (h *hooksSink) inTerm() bool                           { return true }
func (h *hooksSink) deferJudgements(func()) func()          { return func() {} }
func (h *hooksSink) now() time.Time                         { return time.Now() }

func (h *hooksSink) judgeOwnWrites() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.judging = true
}

func (h *hooksSink) observeState(key string, _ int64, _ []store.Condition, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.states = append(h.states, key)
}

func (h *hooksSink) forgetKey(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.forgot = append(h.forgot, key)
}

// A cache source finds the Loop through the contract its Sink offers, not
// through the Sink's concrete type: any Sink keeping it is judged by and
// told what the source sees, as a Loop is.
func TestCacheSourceTalksToItsLoopThroughTheContract(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		h := &hooksSink{}
		src := FromStore(e.cache, e.st)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = src.Run(ctx, h) })
		defer func() { cancel(); wg.Wait() }()
		require.NoError(t, src.(syncer).WaitForSync(ctx))
		synctest.Wait()

		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		synctest.Wait()
		o := copyOf(e.get(t, "a"))
		o.Status.Phase = "ok"
		_, err := e.st.As("app").UpdateStatus(ctx, o) // the reconciler's own write: not a hint
		require.NoError(t, err)
		synctest.Wait()
		_, err = e.st.As("user").Delete(ctx, "a")
		require.NoError(t, err)
		synctest.Wait()

		h.mu.Lock()
		defer h.mu.Unlock()
		require.True(t, h.judging, "the source asks its Loop to remember its own writes")
		require.Equal(t, []string{"a", "a"}, h.states, "the object's state is reported on create and update")
		require.Equal(t, []string{"a"}, h.forgot, "a deleted object is forgotten")
		require.Equal(t, 2, len(h.added), "the creation and the deletion are hints, the own status write is not: %v", h.added)
		require.True(t, slices.Equal(h.added, []string{"a", "a"}))
	})
}
