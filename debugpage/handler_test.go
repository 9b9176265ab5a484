package debugpage_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/debugpage"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store/cache"
)

func get(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

func decode[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var v T
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	return v
}

func newLoop(t *testing.T, name string, r reconcile.Reconciler[string], keys ...string) *reconcile.Loop[string] {
	t.Helper()
	l, err := reconcile.New(name, r, reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) }),
		reconcile.WithResync(24*time.Hour, 0), reconcile.WithStallAfter(2),
		reconcile.WithBackoff(backoff.Policy{Base: time.Second, Factor: 2, Cap: time.Minute}),
		reconcile.WithRetryLimit(backoff.BucketConfig{Rate: rate.Inf}))
	require.NoError(t, err)
	return l
}

// run runs l until stop, or until the test ends.
func run(t *testing.T, l *reconcile.Loop[string]) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- l.Run(ctx) }()
	done := false
	stop = func() error {
		if done {
			return nil
		}
		done = true
		cancel()
		return <-errc
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func TestAPIShowsLoopsKeysAndCaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		long := strings.Repeat("é", debugpage.MaxErrorBytes)
		r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
			switch key {
			case "db-1":
				return reconcile.Result{}, errors.New("connection refused")
			case "web-1":
				return reconcile.Result{RequeueAfter: time.Hour}, nil
			case "huge":
				return reconcile.Result{}, reconcile.Terminal(errors.New(long))
			}
			return reconcile.Result{}, nil
		})
		l := newLoop(t, "apps", r, "db-1", "web-1", "huge", "fine")
		page := debugpage.New()
		require.NoError(t, page.AddLoop(l))
		require.Error(t, page.AddLoop(l), "same name twice")
		require.Error(t, page.AddLoop(nil))
		require.NoError(t, page.AddCache("apps", fakeCache{}))
		require.Error(t, page.AddCache("apps", fakeCache{}))
		stop := run(t, l)
		time.Sleep(1500 * time.Millisecond) // db-1 fails twice: Stalled
		synctest.Wait()

		loops := decode[[]debugpage.LoopView](t, get(t, page, "/api/loops"))
		require.Len(t, loops, 1)
		require.Equal(t, "apps", loops[0].Name)
		require.Equal(t, "leading", loops[0].Role)
		require.Equal(t, 1, loops[0].Idle)
		require.Equal(t, reconcile.QueueCounts{Delayed: 1, BackingOff: 1}, loops[0].Queue)
		require.Equal(t, 2, loops[0].Stalled)

		keys := decode[[]debugpage.KeyView](t, get(t, page, "/api/keys"))
		var names []string
		for _, k := range keys {
			names = append(names, k.Key)
		}
		require.Equal(t, []string{"db-1", "huge", "web-1"}, names, "stalled first; the healthy key is idle")
		db := keys[0]
		require.Equal(t, "apps", db.Loop)
		require.Equal(t, reconcile.PhaseBackingOff, db.Phase)
		require.Equal(t, "backing off after 2 consecutive failures", db.Why)
		require.True(t, time.Now().Add(1500*time.Millisecond).Equal(db.Until), "failures at 0s and 1s, then a 2s backoff: runs at 3s")
		require.Equal(t, "connection refused", db.LastError)
		require.True(t, db.Stalled)
		require.Equal(t, conditions.ReasonFailing, db.Reason)
		require.Equal(t, 2, db.Failures)

		huge := keys[1]
		require.LessOrEqual(t, len(huge.LastError), debugpage.MaxErrorBytes, "error texts are bounded, the mark included")
		require.True(t, strings.HasSuffix(huge.LastError, "…(cut)"))

		filtered := decode[[]debugpage.KeyView](t, get(t, page, "/api/keys?q=web"))
		require.Len(t, filtered, 1)
		require.Equal(t, "web-1", filtered[0].Key)
		require.Empty(t, decode[[]debugpage.KeyView](t, get(t, page, "/api/keys?loop=other")))

		caches := decode[[]debugpage.CacheView](t, get(t, page, "/api/caches"))
		require.Len(t, caches, 1)
		require.Equal(t, "apps", caches[0].Name)
		require.True(t, caches[0].Synced)
		require.Equal(t, int64(7), caches[0].Revision)
		require.Equal(t, 4, caches[0].Objects)
		require.Equal(t, int64(1), *caches[0].Relists)
		require.Nil(t, caches[0].DriftRepairs, "this cache does not count drift repairs")
		require.Contains(t, get(t, page, "/api/caches").Body.String(), `"panics":5`, "the panics of user functions the cache called")

		require.NoError(t, stop())
		loops = decode[[]debugpage.LoopView](t, get(t, page, "/api/loops"))
		require.Equal(t, "standby", loops[0].Role)
	})
}

func TestThePageIsReadOnlyAndSelfContained(t *testing.T) {
	page := debugpage.New()
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		rec := httptest.NewRecorder()
		page.ServeHTTP(rec, httptest.NewRequest(m, "/api/keys", nil))
		require.Equal(t, http.StatusMethodNotAllowed, rec.Code, m)
	}

	html := get(t, page, "/")
	require.Equal(t, http.StatusOK, html.Code)
	require.Contains(t, html.Header().Get("Content-Type"), "text/html")
	require.Contains(t, html.Body.String(), `<script src="assets/app.js"`)
	require.Equal(t, "default-src 'self'", html.Header().Get("Content-Security-Policy"))
	for _, a := range []string{"/assets/app.js", "/assets/style.css"} {
		require.Equal(t, http.StatusOK, get(t, page, a).Code, a)
	}
	require.Equal(t, http.StatusNotFound, get(t, page, "/nothing").Code)

	// Nothing in the assets names another host.
	require.NoError(t, fs.WalkDir(debugpage.Assets(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(debugpage.Assets(), path)
		require.NoError(t, err)
		require.NotRegexp(t, `(?i)(https?:)?//[a-z0-9.-]+\.[a-z]`, string(b), path)
		return nil
	}))
}

func TestObjectBodiesOnlyWhenEnabled(t *testing.T) {
	off := debugpage.New()
	require.Equal(t, http.StatusForbidden, get(t, off, "/api/object?loop=apps&key=a").Code)

	on := debugpage.New(debugpage.WithObjects(func(loop, key string) (any, bool) {
		if loop == "apps" && key == "a" {
			return map[string]string{"spec": "x"}, true
		}
		return nil, false
	}))
	require.Equal(t, map[string]string{"spec": "x"}, decode[map[string]string](t, get(t, on, "/api/object?loop=apps&key=a")))
	require.Equal(t, http.StatusNotFound, get(t, on, "/api/object?loop=apps&key=b").Code)
}

type fakeCache struct{}

func (fakeCache) HasSynced() bool { return true }
func (fakeCache) Revision() int64 { return 7 }
func (fakeCache) Len() int        { return 4 }
func (fakeCache) Relists() int64  { return 1 }
func (fakeCache) Panics() int64   { return 5 }

// A typed nil Loop or cache (a nil pointer) is refused like nil, not found
// by the first request, on the server's goroutine.
func TestAddRejectsTypedNils(t *testing.T) {
	h := debugpage.New()
	require.Error(t, h.AddLoop((*reconcile.Loop[string])(nil)))
	require.Error(t, h.AddCache("c", (*cache.Cache[int, int])(nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/loops", nil))
	require.Equal(t, http.StatusOK, rec.Code)
}
