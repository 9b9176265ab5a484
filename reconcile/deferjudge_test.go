package reconcile

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
)

// orderSink is a hooksSink that keeps state for every key, so that another
// writer's change counts for the oscillation detector, and logs in one
// list the hints it gets and the writes it observes.
type orderSink struct {
	hooksSink
	log     []string
	flushes []func()
}

func (h *orderSink) Add(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, "hint "+key)
}

func (h *orderSink) keepsState(string) bool { return true }

// holdEarly hears w as the Loop's own at once: this sink sees no reports,
// so every write by the Loop's names stays unreported.
func (h *orderSink) holdEarly(_ any, _ int64, w *earlyWrite) {
	for _, x := range w.own {
		h.observeWrite(w.key, x)
	}
}

func (h *orderSink) observeWrite(key string, w oscillation.Write) {
	h.mu.Lock()
	defer h.mu.Unlock()
	who := "other"
	if w.Self {
		who = "self"
	}
	h.log = append(h.log, "observe "+who+" "+key)
}

func (h *orderSink) deferJudgements(flush func()) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flushes = append(h.flushes, flush)
	return func() {}
}

func (h *orderSink) note(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log = append(h.log, s)
}

func (h *orderSink) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.log
	h.log = nil
	return l
}

// Another writer's change to a key its Loop keeps state for is a hint
// whatever its field-level judgement finds (Stalled did not change), so
// the key is queued first: the judgement, which only the oscillation
// detector needs, is made after, and the detector still hears of every
// write in the order they were made, before the next one, whether the
// next is seen by the cache or is the Loop's own Stalled write (which the
// Loop flushes the deferred judgements for).
func TestAnotherWritersChangeIsHintedBeforeItsFieldLevelJudgement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		h := &orderSink{}
		judge := func(old, new *store.Object[appSpec, appStatus], manager string) (owned, foreign []diff.Path) {
			h.note("judge " + new.Meta.LastWrite.Manager)
			owned, foreign = SectionChanges(old, new, manager)
			return owned, foreign
		}
		src := FromStore(e.cache, e.st, WithChanges(judge))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { _ = src.Run(ctx, h) })
		defer func() { cancel(); wg.Wait() }()
		require.NoError(t, src.(syncer).WaitForSync(ctx))
		synctest.Wait()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		synctest.Wait()
		require.Equal(t, []string{"hint a"}, h.take())

		o := copyOf(e.get(t, "a"))
		o.Spec.Replicas = 2
		_, err := e.st.As("user").Update(ctx, o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{"hint a"}, h.take(), "the hint goes first; the judgement waits")

		o = copyOf(e.get(t, "a"))
		o.Status.Phase = "ok"
		_, err = e.st.As("app").UpdateStatus(ctx, o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{"judge user", "observe other a", "judge app", "observe self a"}, h.take(),
			"the deferred judgement is made before the next change is judged")

		o = copyOf(e.get(t, "a"))
		o.Spec.Replicas = 3
		_, err = e.st.As("user").Update(ctx, o)
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{"hint a"}, h.take())
		h.mu.Lock()
		flushes := h.flushes
		h.mu.Unlock()
		require.Len(t, flushes, 1, "the source gives its Loop a way to make its deferred judgement")
		flushes[0]()
		flushes[0]()
		require.Equal(t, []string{"judge user", "observe other a"}, h.take(), "a flush makes the deferred judgement, once")
	})
}

// The Loop makes its sources' deferred judgements before it observes a
// Stalled write of its own, which no cache event carries, and not after
// the source that deferred them removed its flush.
func TestLoopFlushesDeferredJudgementsBeforeItObservesItsStalledWrite(t *testing.T) {
	e := newEnv(t, "App", nil)
	defer e.stop()
	l, err := New("app", Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }), FromStore(e.cache, e.st))
	require.NoError(t, err)
	var log []string
	remove := l.deferJudgements(func() { log = append(log, "flush") })
	l.stalledWritten("a", stalledSet, stalledNote{reason: "Failing"}, time.Now())
	require.Equal(t, []string{"flush"}, log)
	require.True(t, l.keepsState("a"), "the Stalled write was observed")
	remove()
	l.stalledWritten("a", stalledSet, stalledNote{reason: "Failing"}, time.Now())
	require.Equal(t, []string{"flush"}, log, "a removed flush is not called")
}
