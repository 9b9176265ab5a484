package browsertest

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/debugpage"
	"github.com/steady-go/steady/reconcile"
)

// chromium returns the browser to drive. Without one the test skips, except
// under CI, where .ci/run installs it and a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-headless-shell", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH under CI: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH: install it to run the browser test (Debian: apt-get install chromium)")
	return ""
}

// TestThePageInABrowser serves the page from a live Loop with a failing
// key and a healthy one, and checks what a person sees.
func TestThePageInABrowser(t *testing.T) {
	exe := chromium(t)

	var broken atomic.Bool
	broken.Store(true)
	r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
		switch key {
		case "db-primary":
			if broken.Load() {
				return reconcile.Result{}, errors.New("dial tcp 10.0.0.7:5432: connection refused")
			}
		case "web-frontend":
			return reconcile.Result{RequeueAfter: time.Hour}, nil
		}
		return reconcile.Result{}, nil
	})
	keys := []string{"db-primary", "web-frontend", "cache-idle"}
	loop, err := reconcile.New("apps", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) }),
		reconcile.WithWorkers(2), reconcile.WithStallAfter(2), reconcile.WithResync(24*time.Hour, 0),
		reconcile.WithBackoff(backoff.Policy{Base: 300 * time.Millisecond, Factor: 1, Cap: 300 * time.Millisecond}),
		reconcile.WithRetryLimit(backoff.BucketConfig{Rate: rate.Inf}))
	require.NoError(t, err)
	page := debugpage.New()
	require.NoError(t, page.AddLoop(loop))
	require.NoError(t, page.AddCache("apps", fakeCache{}))
	mux := http.NewServeMux()
	mux.Handle("/debug/steady/", http.StripPrefix("/debug/steady", page))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	loopCtx, stopLoop := context.WithCancel(context.Background())
	loopDone := make(chan error, 1)
	go func() { loopDone <- loop.Run(loopCtx) }()
	defer func() { stopLoop(); require.NoError(t, <-loopDone) }()

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU)...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	const db, web, idle = `tr[data-key="db-primary"]`, `tr[data-key="web-frontend"]`, `tr[data-key="cache-idle"]`
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		require.NoError(t, err, sel)
		return s
	}
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+sel+`').length`))
		require.NoError(t, err, sel)
		return n
	}

	// The failing key's row: stalled, why, the error, and when it runs next.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/debug/steady/"),
		chromedp.WaitVisible(db+`.stalled`),
		chromedp.WaitVisible(web),
	))
	dbRow := text(db)
	require.Contains(t, dbRow, "backing-off")
	require.Contains(t, dbRow, "backing off after")
	require.Contains(t, dbRow, "Stalled: "+reconcile.ReasonFailing)
	require.Contains(t, dbRow, "connection refused")
	next, err := chromedp.Run(ctx, chromedp.AttributeValue(db+` td.next time`, "datetime"))
	require.NoError(t, err)
	at, err := time.Parse(time.RFC3339Nano, next.Value)
	require.NoError(t, err, "the next run is a time: %q", next.Value)
	require.WithinDuration(t, time.Now(), at, 5*time.Second, "the next retry is within the 300ms backoff")
	require.Contains(t, text(`#loops tr[data-loop="apps"]`), "leading")
	require.Contains(t, text(`#caches tr[data-cache="apps"]`), "synced")
	panics, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const i = [...document.querySelectorAll('#caches thead th')].map(h => h.textContent).indexOf('panics');
		const row = document.querySelector('#caches tr[data-cache="apps"]');
		return i < 0 || !row ? '' : row.cells[i].textContent;
	})()`))
	require.NoError(t, err)
	require.Equal(t, "2", panics, "the cache's panics column")
	require.Zero(t, count(idle), "an idle, healthy key is not listed")

	// The search filter: only keys containing the text stay.
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(`#search`, "db-"), chromedp.WaitNotPresent(web)))
	require.Equal(t, 1, count(db))
	_, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const s = document.getElementById('search');
		s.value = '';
		return s.dispatchEvent(new Event('input'));
	})()`))
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(web)))

	// The key recovers: the page, refreshing by itself, drops its row.
	broken.Store(false)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitNotPresent(db)))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#keys tbody tr')].map(r => r.dataset.key)`))
	require.NoError(t, err)
	require.Equal(t, []string{"web-frontend"}, rows)
}

type fakeCache struct{}

func (fakeCache) HasSynced() bool { return true }
func (fakeCache) Revision() int64 { return 12 }
func (fakeCache) Len() int        { return 3 }
func (fakeCache) Panics() int64   { return 2 }
