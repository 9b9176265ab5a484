package prometheus_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	steadyprom "github.com/steady-go/steady/metrics/prometheus"
)

// TestBlackbox51OddLabelValues: controller names, Stalled reasons, results
// and cache names of any bytes are label values that a scrape carries
// back exactly (an empty one, quotes, backslashes, newlines, a long one),
// except that a run of bytes that are not valid UTF-8 is one U+FFFD, as
// the package documentation says.
func TestBlackbox51OddLabelValues(t *testing.T) {
	reg := prom.NewRegistry()
	m, err := steadyprom.New(reg, steadyprom.WithoutRuntimeCollectors())
	require.NoError(t, err)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	long := strings.Repeat("n", 64<<10)
	names := map[string]string{ // name → its label value
		"":                   "",
		`quo"te`:             `quo"te`,
		`back\slash`:         `back\slash`,
		"new\nline":          "new\nline",
		"tab\there":          "tab\there",
		long:                 long,
		"two\xff\xfebad":     "two\uFFFDbad",
		"apart\xffx\xfe":     "apart\uFFFDx\uFFFD",
		"\xc3":               "\uFFFD",
		"ok\u00e9\U0001F600": "ok\u00e9\U0001F600",
	}
	for name := range names {
		m.ReconcileDone(name, "success", time.Millisecond)
		m.Stalled(name, name)
		m.QueueMetrics(name).Added()
		require.NoError(t, m.AddCache(name, fakeCache{}), "%.20q", name)
	}
	m.ReconcileDone("x", "", time.Millisecond)

	fams := scrape(t, srv.URL)
	for name, label := range names {
		require.Equal(t, 1.0, value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": label, "result": "success"}), "%.20q", name)
		require.Equal(t, 1.0, value(t, fams, "steady_stalled_total", map[string]string{"controller": label, "reason": label}), "%.20q", name)
		require.Equal(t, 1.0, value(t, fams, "workqueue_adds_total", map[string]string{"name": label, "controller": label}), "%.20q", name)
		require.Equal(t, 9.0, value(t, fams, "steady_cache_objects", map[string]string{"cache": label}), "%.20q", name)
	}
	require.Equal(t, 1.0, value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": "x", "result": ""}))
	require.Error(t, m.AddCache("two\xffbad", fakeCache{}), "the label of two\\xff\\xfebad: added twice")
}

// TestBlackbox51NewRegistersNothingOnFailure: New on a registry that
// already holds one of its series (another package's, or a first New's)
// fails and registers nothing of its own; the first Metrics goes on
// working.
func TestBlackbox51NewRegistersNothingOnFailure(t *testing.T) {
	reg := prom.NewRegistry()
	clash := prom.NewGauge(prom.GaugeOpts{Name: "steady_unconverged_objects", Help: "someone else's"})
	require.NoError(t, reg.Register(clash))
	_, err := steadyprom.New(reg)
	require.Error(t, err)
	fams, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, fams, 1, "only the clashing series is registered")
	// A series New registers before it met the clash is not left behind:
	// the name is free.
	panics := prom.NewCounterVec(prom.CounterOpts{Name: "controller_runtime_reconcile_panics_total",
		Help: "Total number of reconciliation panics per controller"}, []string{"controller"})
	require.NoError(t, reg.Register(panics))

	reg = prom.NewRegistry()
	m, err := steadyprom.New(reg, steadyprom.WithoutRuntimeCollectors())
	require.NoError(t, err)
	m.ReconcilePanic("c")
	before, err := reg.Gather()
	require.NoError(t, err)
	_, err = steadyprom.New(reg)
	require.Error(t, err, "a second New on one registry")
	after, err := reg.Gather()
	require.NoError(t, err)
	require.Equal(t, len(before), len(after), "the failed New left the first's series, and added none (not even go_* and process_*)")
	m.ReconcilePanic("c")
}
