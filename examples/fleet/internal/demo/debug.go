package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/steady-go/steady/debugpage"
	steadyprom "github.com/steady-go/steady/metrics/prometheus"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store/cache"
)

// debugServer serves, with -debug ADDR, the debug page at /debug/steady/
// and the Prometheus series at /metrics. The controller restarts with a
// new Loop and cache after each crash; the page and the scrape follow the
// current ones.
type debugServer struct {
	prom  *steadyprom.Metrics
	loop  atomic.Pointer[reconcile.Loop[string]]
	cache atomic.Pointer[cache.Cache[GroupSpec, GroupStatus]]
	srv   *http.Server
	done  chan error
}

// startDebug listens on addr and serves until close; "" means no server
// (a nil *debugServer, whose methods do nothing).
func startDebug(addr string, w io.Writer) (*debugServer, error) {
	if addr == "" {
		return nil, nil
	}
	reg := prom.NewRegistry()
	m, err := steadyprom.New(reg)
	if err != nil {
		return nil, err
	}
	d := &debugServer{prom: m, done: make(chan error, 1)}
	page := debugpage.New()
	if err := errors.Join(page.AddLoop(currentLoop{d}), page.AddCache("groups", currentCache{d}),
		m.AddLoop(currentLoop{d}), m.AddCache("groups", currentCache{d})); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/steady/", http.StripPrefix("/debug/steady", page))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/{$}", http.RedirectHandler("/debug/steady/", http.StatusFound))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-debug %s: %w", addr, err)
	}
	d.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { d.done <- d.srv.Serve(ln) }()
	fmt.Fprintf(w, "fleet: debug page at http://%s/debug/steady/, metrics at http://%s/metrics\n", ln.Addr(), ln.Addr())
	return d, nil
}

// close stops the server.
func (d *debugServer) close() {
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
	<-d.done
}

// metrics returns what the Loop reports to: own alone, or own and the
// Prometheus series.
func (d *debugServer) metrics(own reconcile.Metrics) reconcile.Metrics {
	if d == nil {
		return own
	}
	return teeMetrics{own, d.prom}
}

// track makes l and c the ones the page and the scrape show.
func (d *debugServer) track(l *reconcile.Loop[string], c *cache.Cache[GroupSpec, GroupStatus]) {
	if d != nil {
		d.loop.Store(l)
		d.cache.Store(c)
	}
}

// currentLoop shows the Loop of the current lifetime.
type currentLoop struct{ d *debugServer }

func (c currentLoop) Name() string { return controllerName }

func (c currentLoop) Status() reconcile.LoopStatus {
	if l := c.d.loop.Load(); l != nil {
		return l.Status()
	}
	return reconcile.LoopStatus{Name: controllerName}
}

func (c currentLoop) KeyStatuses() []reconcile.KeyStatus {
	if l := c.d.loop.Load(); l != nil {
		return l.KeyStatuses()
	}
	return nil
}

// currentCache shows the cache of the current lifetime.
type currentCache struct{ d *debugServer }

func (c currentCache) HasSynced() bool {
	cc := c.d.cache.Load()
	return cc != nil && cc.HasSynced()
}

func (c currentCache) Revision() int64 {
	if cc := c.d.cache.Load(); cc != nil {
		return cc.Revision()
	}
	return 0
}

func (c currentCache) Len() int {
	if cc := c.d.cache.Load(); cc != nil {
		return cc.Len()
	}
	return 0
}

// teeMetrics reports to both a and b.
type teeMetrics struct{ a, b reconcile.Metrics }

func (t teeMetrics) ReconcileDone(c, r string, d time.Duration) {
	t.a.ReconcileDone(c, r, d)
	t.b.ReconcileDone(c, r, d)
}
func (t teeMetrics) ReconcileError(c string, term bool) {
	t.a.ReconcileError(c, term)
	t.b.ReconcileError(c, term)
}
func (t teeMetrics) ReconcilePanic(c string)       { t.a.ReconcilePanic(c); t.b.ReconcilePanic(c) }
func (t teeMetrics) ActiveWorkers(c string, n int) { t.a.ActiveWorkers(c, n); t.b.ActiveWorkers(c, n) }
func (t teeMetrics) MaxConcurrency(c string, n int) {
	t.a.MaxConcurrency(c, n)
	t.b.MaxConcurrency(c, n)
}
func (t teeMetrics) Converged(c string, d time.Duration) { t.a.Converged(c, d); t.b.Converged(c, d) }
func (t teeMetrics) Unconverged(c string, n int)         { t.a.Unconverged(c, n); t.b.Unconverged(c, n) }
func (t teeMetrics) Stalled(c, reason string)            { t.a.Stalled(c, reason); t.b.Stalled(c, reason) }
func (t teeMetrics) FenceRejected(c string)              { t.a.FenceRejected(c); t.b.FenceRejected(c) }
func (t teeMetrics) Oscillation(c string, k oscillation.Kind) {
	t.a.Oscillation(c, k)
	t.b.Oscillation(c, k)
}

// QueueMetrics reports the queue to the Prometheus series (the demo's own
// metrics keep none).
func (t teeMetrics) QueueMetrics(c string) queue.Metrics { return t.b.QueueMetrics(c) }
