package reconcile

import (
	"context"
	"iter"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/diff"
	"github.com/steady-go/steady/internal/objpath"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// writesSink is a hooksSink that keeps state for every key and records the
// writes its oscillation detector would be fed.
type writesSink struct {
	hooksSink
	wmu    sync.Mutex
	writes []oscillation.Write
}

func (h *writesSink) keepsState(string) bool { return true }

// observeWrite copies w's lists, which the source reuses once it returns.
func (h *writesSink) observeWrite(_ string, w oscillation.Write) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	w.Owned, w.Foreign = slices.Clone(w.Owned), slices.Clone(w.Foreign)
	h.writes = append(h.writes, w)
}

func (h *writesSink) take() []oscillation.Write {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	w := h.writes
	h.writes = nil
	return w
}

// FromStore's source splits a change it observes into the writes of the
// manager it is judged as and of the others with the Store's ChangedBy,
// except the owned paths of a change that manager wrote last, which are
// all its own without asking, and the foreign paths of a change another
// manager wrote last, which are all the others' (see
// cacheSource.observe). The detector must be fed the same writes either
// way: for the Loop's own status write, for a change merging its write
// with another manager's, for another manager's change that removes a
// field of the Loop's (owned by the Loop by FieldChanges, since nobody
// owns it after, but made by the other), for another manager's spec
// write, and for the Loop's write that removes another's field (foreign
// by FieldChanges, but made by the Loop). The part of the manager that
// wrote last is observed last. A ChangeFunc of the user's settles
// nothing: its paths all go through ChangedBy.
func TestObserveSplitsAsChangedByDoes(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := store.New[appSpec, appStatus](memstore.New(), "App")
	require.NoError(t, err)
	src := FromStore(nil, st).(storeSource[appSpec, appStatus])
	require.True(t, src.fieldLevel, "FromStore judges with the Store's FieldChanges")
	h := &writesSink{}
	_, err = st.As("user").Create(ctx, &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
	require.NoError(t, err)
	get := func() *app {
		o, err := st.Get(ctx, "a")
		require.NoError(t, err)
		return o
	}
	status := func(manager string, f func(s *appStatus)) {
		o := get()
		f(&o.Status)
		_, err := st.As(manager).UpdateStatus(ctx, o)
		require.NoError(t, err)
	}
	steps := []struct {
		name    string
		write   func()
		judgeAs string
		self    bool // a write of judgeAs is observed
		other   bool // a write of another manager is observed
	}{
		{"own status write", func() { status("app", func(s *appStatus) { s.Phase = "Running" }) }, "app", true, false},
		{"merged: another's status field, then the Loop's", func() {
			status("other", func(s *appStatus) { s.Replicas = 7 })
			status("app", func(s *appStatus) { s.Phase = "Ready" })
		}, "app", true, true},
		{"merged: the Loop's status field, then another's", func() {
			status("app", func(s *appStatus) { s.Phase = "Scaling" })
			status("other", func(s *appStatus) { s.Replicas = 9 })
		}, "app", true, true},
		{"another removes the Loop's field", func() { status("other", func(s *appStatus) { s.Phase = "" }) }, "app", false, true},
		{"merged: the Loop's spec write, then its status write", func() {
			o := get()
			o.Spec.Image = "web:2"
			_, err := st.As("app").Update(ctx, o)
			require.NoError(t, err)
			status("app", func(s *appStatus) { s.Phase = "Done" })
		}, "app", true, false},
		{"another's spec write", func() {
			o := get()
			o.Spec.Replicas++
			_, err := st.As("user").Update(ctx, o)
			require.NoError(t, err)
		}, "app", false, true},
		{"the Loop removes another's field", func() { status("app", func(s *appStatus) { s.Replicas = 0 }) }, "app", true, false},
	}
	for _, step := range steps {
		old := get()
		step.write()
		new := get()
		owned, foreign := st.FieldChanges(old, new, step.judgeAs)
		require.NotEmpty(t, append(owned, foreign...), "%s: a change", step.name)

		src.fieldLevel = true
		src.observe(h, new, step.judgeAs, owned, foreign, at, false)
		got := h.take()
		src.fieldLevel = false // every path through ChangedBy
		src.observe(h, new, step.judgeAs, owned, foreign, at, false)
		want := h.take()
		require.Equal(t, want, got, step.name)

		var self, other bool
		for _, w := range got {
			self, other = self || w.Self, other || !w.Self
		}
		require.Equal(t, step.self, self, "%s: a write of %s: %+v", step.name, step.judgeAs, got)
		require.Equal(t, step.other, other, "%s: a write of another: %+v", step.name, got)
		// The last writer's part is observed last, as it was written last.
		require.Equal(t, new.Meta.LastWrite.Manager == step.judgeAs, got[len(got)-1].Self, "%s: the last write observed: %+v", step.name, got)
	}

	// Another writer's spec change, which a ChangeFunc of the user's
	// says changed .status.phase too, a field the Loop owns: ChangedBy
	// gives that path to the Loop.
	old := get()
	o := get()
	o.Spec.Replicas++
	_, err = st.As("user").Update(ctx, o)
	require.NoError(t, err)
	new := get()
	require.Equal(t, "user", new.Meta.LastWrite.Manager)
	_, foreign := st.FieldChanges(old, new, "app")
	phase := objpath.Status.Field("phase")
	src.fieldLevel = false
	src.observe(h, new, "app", nil, append(slices.Clip(foreign), phase), at, false)
	require.Equal(t, []oscillation.Write{
		{Time: at, Self: true, Foreign: []diff.Path{phase}},
		{Time: at, Foreign: foreign},
	}, h.take(), "the user's ChangeFunc: every path through ChangedBy")
}

// The primary source reports every object's state; the Loop keeps the set
// of objects carrying its Stalled, which a clean reconcile reads through a
// count without its lock. A report of an object without Stalled takes no
// lock while the set is empty, but still clears an object that had one.
func TestObserveStateClearsStalledOnlyFastWhenNoneIs(t *testing.T) {
	l, err := New("app", Func[string](func(context.Context, string) (Result, error) { return Result{}, nil }),
		Keys(func() iter.Seq[string] { return slices.Values([]string{"a", "b"}) }))
	require.NoError(t, err)
	require.True(t, l.mayBeStalled("a"), "untracked: every key may be")
	l.observeState("a", 1, nil, false)
	require.False(t, l.mayBeStalled("a"), "tracked once a source reports")
	l.observeState("a", 2, nil, true)
	l.observeState("b", 2, nil, false)
	require.True(t, l.mayBeStalled("a"))
	require.False(t, l.mayBeStalled("b"))
	l.observeState("a", 3, nil, false)
	require.False(t, l.mayBeStalled("a"), "its Stalled cleared")
	require.True(t, l.noneStalled())
}

// FromStore's source lists the names of the objects its cache holds: an
// addition adds one, a deletion removes it, a modification leaves the set
// as it is (its name came with its addition).
func TestStoreSourceKeysFollowTheCache(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, "App", nil)
		defer e.stop()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
		src := FromStore(e.cache, e.st).(storeSource[appSpec, appStatus])
		var wg sync.WaitGroup
		wg.Go(func() { _ = src.Run(ctx, &hooksSink{}) })
		defer func() { cancel(); wg.Wait() }()
		require.NoError(t, src.WaitForSync(ctx))
		synctest.Wait()
		e.create(t, "user", &app{Meta: store.Meta{Name: "b"}})
		e.create(t, "user", &app{Meta: store.Meta{Name: "c"}})
		o := copyOf(e.get(t, "a"))
		o.Spec.Replicas = 2
		_, err := e.st.As("user").Update(ctx, o)
		require.NoError(t, err)
		_, err = e.st.As("user").Delete(ctx, "b")
		require.NoError(t, err)
		synctest.Wait()
		require.ElementsMatch(t, []string{"a", "c"}, slices.Collect(src.Keys()))
	})
}
