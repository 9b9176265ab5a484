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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/debugpage"
	"github.com/steady-go/steady/events"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store/memstore"
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

	rec, err := events.New(memstore.New())
	require.NoError(t, err)
	recCtx, stopRec := context.WithCancel(context.Background())
	recDone := make(chan error, 1)
	go func() { recDone <- rec.Run(recCtx) }()
	defer func() { stopRec(); require.NoError(t, <-recDone) }()

	var broken, flaky atomic.Bool
	broken.Store(true)
	flaky.Store(true)
	r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
		switch key {
		case "db-primary":
			if broken.Load() {
				rec.Record(events.Event{Kind: "App", Name: key, Type: events.Warning, Reason: "DialFailed", Message: "10.0.0.7:5432 refused"})
				return reconcile.Result{}, errors.New("dial tcp 10.0.0.7:5432: connection refused")
			}
		case "billing-service-eu-west-1-production-primary":
			// Fails once, then is idle: only the recent failures show it.
			if flaky.Swap(false) {
				return reconcile.Result{}, errors.New("quota exceeded for " + strings.Repeat("/a/long/path", 30))
			}
		case "web-frontend":
			return reconcile.Result{RequeueAfter: time.Hour}, nil
		}
		return reconcile.Result{}, nil
	})
	keys := []string{"db-primary", "web-frontend", "cache-idle", "billing-service-eu-west-1-production-primary"}
	loop, err := reconcile.New("apps", r, reconcile.Keys(func() iter.Seq[string] { return slices.Values(keys) }),
		reconcile.WithWorkers(2), reconcile.WithStallAfter(2), reconcile.WithResync(24*time.Hour, 0),
		reconcile.WithBackoff(backoff.Policy{Base: 300 * time.Millisecond, Factor: 1, Cap: 300 * time.Millisecond}),
		reconcile.WithRetryLimit(backoff.BucketConfig{Rate: rate.Inf}))
	require.NoError(t, err)
	page := debugpage.New(debugpage.WithEvents(rec))
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

	const db, web, idle = `#keys tr[data-key="db-primary"]`, `#keys tr[data-key="web-frontend"]`, `#keys tr[data-key="cache-idle"]`
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
	require.Contains(t, dbRow, "Stalled: "+conditions.ReasonFailing)
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

	// Failures that came and went stay under "Recent failures", with
	// their time; the failing key's row says when it last failed.
	const billing = `#failures tr[data-key="billing-service-eu-west-1-production-primary"]`
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(billing)))
	require.Zero(t, count(`#keys tr[data-key="billing-service-eu-west-1-production-primary"]`), "idle after one failure")
	require.Contains(t, text(billing), "quota exceeded")
	require.Contains(t, text(billing), "ago")
	require.Contains(t, text(db+` td.failures`), "last ")
	// Events: the reconciler's, aggregated into a count.
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#events tr[data-object="App/db-primary"]`)))
	require.Contains(t, text(`#events tr[data-object="App/db-primary"]`), "DialFailed")

	// Layout: in a narrow window every row of the tables is at most two
	// lines, and no key wraps mid-word.
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(900, 800)))
	tall, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const line = parseFloat(getComputedStyle(document.body).lineHeight);
		return [...document.querySelectorAll('#keys tbody tr, #failures tbody tr, #events tbody tr')]
			.filter(r => r.getBoundingClientRect().height > 2 * line + 12)
			.map(r => r.dataset.key + ' ' + r.getBoundingClientRect().height + 'px: ' +
				[...r.cells].map(c => c.getBoundingClientRect().height + '/' + c.scrollHeight + ' ' + c.textContent.slice(0, 30)).join(' | '));
	})()`))
	require.NoError(t, err)
	require.Empty(t, tall, "rows over two lines")
	wrapped, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('td.key code')]
		.filter(c => c.getClientRects().length > 1).map(c => c.textContent)`))
	require.NoError(t, err)
	require.Empty(t, wrapped, "keys wrapped")

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
