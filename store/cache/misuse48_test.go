package cache_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// deepCopy copies an object the way a user without generated DeepCopy
// methods does: through its JSON encoding, Meta.Revision and the rest of
// Meta's json:"-" fields by hand.
func deepCopy(t *testing.T, o *appObj) *appObj {
	t.Helper()
	b, err := json.Marshal(o)
	require.NoError(t, err)
	var c appObj
	require.NoError(t, json.Unmarshal(b, &c))
	c.Meta.Revision = o.Meta.Revision
	return &c
}

// A Store's writes never change the objects a Cache over it serves, and a
// writer's later edits of the objects it wrote (in place, as
// controller-runtime code edits the object it fetched) do not reach the
// Cache: whether the writer passed a deep copy of a cached object, a
// shallow copy whose scalars alone it changed, or an object of its own.
// The mutation detector, on in these tests, finds nothing, and every
// cached object holds what is stored.
func TestMisuseWritesAndWritersEditsNeverReachTheCachedObjects(t *testing.T) {
	for name, opts := range map[string][]store.Option{
		"remembering": nil,
		"forgetting":  {store.WithLastValues(0)},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				st, err := store.New[appSpec, appStatus](memstore.New(), "App", opts...)
				require.NoError(t, err)
				w := st.As("ctl")
				var detected []error
				c := cache.New(st, cache.WithMutationDetector(func(err error) { detected = append(detected, err) }))
				stop := startApps(t, c)
				defer stop()
				require.NoError(t, c.WaitForSync(ctx))

				mine := fleetApp("a")
				mine.Conditions = []store.Condition{{Type: "Ready", Status: store.ConditionFalse, Reason: "Starting"}}
				rev, err := w.Create(ctx, mine)
				require.NoError(t, err)
				require.NoError(t, c.WaitFor(ctx, rev))
				_, err = w.Create(ctx, fleetApp("b"))
				require.NoError(t, err)
				// The writer edits its own object in place, after the write.
				mine.Meta.Labels["app"] = "writer"
				mine.Spec.Args[0] = "writer"
				mine.Spec.Selector["app"] = "writer"
				mine.Conditions[0].Reason = "writer"

				// A status write of a shallow copy of the cached object
				// whose scalar alone changed, then a spec write.
				cached, ok := c.Get("a")
				require.True(t, ok)
				shallow := *cached
				shallow.Status.Ready = 3
				rev, err = w.UpdateStatus(ctx, &shallow, store.WithObserved(cached.Meta))
				require.NoError(t, err)
				require.NoError(t, c.WaitFor(ctx, rev))
				cached, _ = c.Get("a")
				shallow = *cached
				shallow.Spec.Replicas = 5
				rev, err = w.Update(ctx, &shallow)
				require.NoError(t, err)
				require.NoError(t, c.WaitFor(ctx, rev))

				// A deep copy, edited in place and written twice.
				cached, _ = c.Get("b")
				deep := deepCopy(t, cached)
				deep.Meta.Labels["tier"] = "back"
				deep.Spec.Selector["app"] = "api"
				_, err = w.Update(ctx, deep)
				require.NoError(t, err)
				deep.Spec.Args = append(deep.Spec.Args[:1], "--v=9")
				deep.Meta.Labels["tier"] = "edge"
				rev, err = w.Update(ctx, deep)
				require.NoError(t, err)
				require.NoError(t, c.WaitFor(ctx, rev))
				deep.Meta.Labels["tier"] = "deep-after-write"
				deep.Spec.Selector["app"] = "deep-after-write"

				// Applies of both.
				_, err = w.ApplyStatus(ctx, "a", map[string]any{"ready": 4}, []store.Condition{{Type: "Ready", Status: store.ConditionTrue, Reason: "Up"}})
				require.NoError(t, err)
				res, err := w.Apply(ctx, "b", map[string]any{"replicas": 7})
				require.NoError(t, err)
				require.NoError(t, c.WaitFor(ctx, res.Revision))

				require.NoError(t, c.Check())
				require.Empty(t, detected)
				for _, name := range []string{"a", "b"} {
					stored, err := st.Get(ctx, name)
					require.NoError(t, err)
					cached, ok := c.Get(name)
					require.True(t, ok)
					require.Equal(t, stored.Meta.Labels, cached.Meta.Labels, name)
					require.Equal(t, stored.Spec, cached.Spec, name)
					require.Equal(t, stored.Status, cached.Status, name)
					require.Equal(t, len(stored.Conditions), len(cached.Conditions), name)
					for i := range stored.Conditions {
						require.Equal(t, stored.Conditions[i].Reason, cached.Conditions[i].Reason, name)
					}
					// What the Store's Get returns is the reader's own.
					stored.Meta.Labels["app"] = "reader"
					stored.Spec.Selector["app"] = "reader"
					stored.Spec.Args[0] = "reader"
					for i := range stored.Conditions {
						stored.Conditions[i].Reason = "reader"
					}
				}
				require.NoError(t, c.Check())
				a, _ := c.Get("a")
				require.Equal(t, "web", a.Meta.Labels["app"])
				require.Equal(t, []string{"--port=80", "--v=2"}, a.Spec.Args)
				require.Equal(t, 5, a.Spec.Replicas)
				b, _ := c.Get("b")
				require.Equal(t, map[string]string{"app": "web", "tier": "edge"}, b.Meta.Labels)
				require.Equal(t, map[string]string{"app": "api"}, b.Spec.Selector)
				require.Equal(t, []string{"--port=80", "--v=9"}, b.Spec.Args)
				require.Equal(t, 7, b.Spec.Replicas)
			})
		})
	}
}

// WaitFor on a revision the Cache never reaches returns ctx's error when
// ctx ends, whether the Cache runs, never ran, or stopped; an already
// cancelled ctx returns at once, before any wait; and a revision of 0 or
// below is nil whatever ctx says.
func TestMisuseWaitForARevisionNeverReachedEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		st, err := store.New[appSpec, appStatus](memstore.New(), "App")
		require.NoError(t, err)
		rev, err := st.As("u").Create(ctx, newApp("a"))
		require.NoError(t, err)

		running := cache.New(st)
		stop := startApps(t, running)
		require.NoError(t, running.WaitFor(ctx, rev))
		stopped := cache.New(st)
		stopStopped := startApps(t, stopped)
		require.NoError(t, stopped.WaitFor(ctx, rev))
		stopStopped()
		never := cache.New(st)

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		for name, c := range map[string]*cache.Cache[appSpec, appStatus]{"running": running, "stopped": stopped, "never run": never} {
			require.ErrorIs(t, c.WaitFor(cancelled, rev+1000), context.Canceled, name)
			require.NoError(t, c.WaitFor(cancelled, 0), name)
			require.NoError(t, c.WaitFor(cancelled, -1), name)

			start := time.Now()
			deadline, cancelDeadline := context.WithTimeout(ctx, time.Minute)
			err := c.WaitFor(deadline, rev+1000)
			cancelDeadline()
			require.ErrorIs(t, err, context.DeadlineExceeded, name)
			require.Equal(t, time.Minute, time.Since(start), name)
		}
		// The running Cache still serves, and waits for what comes.
		rev, err = st.As("u").Create(ctx, newApp("b"))
		require.NoError(t, err)
		require.NoError(t, running.WaitFor(ctx, rev))
		_, ok := running.Get("b")
		require.True(t, ok)
		stop()
	})
}
