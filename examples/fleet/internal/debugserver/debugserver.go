// Package debugserver is the fleet demo's -debug (a demo.Program's Debug):
// steady's debug page at /debug/steady/ and its Prometheus series at
// /metrics. It is apart from package demo so that the default program,
// examples/fleet, compiles none of net/http, Prometheus or protobuf;
// examples/fleet/fleet-full and examples/fleet/fleet-etcd use it.
package debugserver

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

	"github.com/steady-go/steady/examples/fleet/internal/demo"
	"github.com/steady-go/steady/metrics"
)

type (
	groupSpec   = demo.GroupSpec
	groupStatus = demo.GroupStatus
)

// debugServer serves, with -debug ADDR, the debug page at /debug/steady/
// and the Prometheus series at /metrics. The controller restarts with a
// new Loop and cache after each crash; the page and the scrape follow the
// current ones.
type debugServer struct {
	url   string // of the page
	prom  *steadyprom.Metrics
	loop  atomic.Pointer[reconcile.Loop[string]]
	cache atomic.Pointer[cache.Cache[groupSpec, groupStatus]]
	srv   *http.Server
	done  chan error
}

// Start listens on addr and serves until Close, and prints to w where.
// It returns an error naming -debug if it cannot listen there.
func Start(addr string, w io.Writer) (demo.Debugger, error) { return start(addr, w) }

func start(addr string, w io.Writer) (*debugServer, error) {
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
	d.url = fmt.Sprintf("http://%s/debug/steady/", ln.Addr())
	fmt.Fprintf(w, "fleet: debug page at %s, metrics at http://%s/metrics\n", d.url, ln.Addr())
	return d, nil
}

// URL is the page's address.
func (d *debugServer) URL() string { return d.url }

// Close stops the server.
func (d *debugServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
	<-d.done
}

// Metrics returns what the Loop reports to: own and the Prometheus series.
func (d *debugServer) Metrics(own metrics.Loop) metrics.Loop {
	return teeMetrics{own, d.prom}
}

// Track makes l and c the ones the page and the scrape show.
func (d *debugServer) Track(l *reconcile.Loop[string], c *cache.Cache[groupSpec, groupStatus]) {
	d.loop.Store(l)
	d.cache.Store(c)
}

// currentLoop shows the Loop of the current lifetime.
type currentLoop struct{ d *debugServer }

func (c currentLoop) Name() string { return demo.ControllerName }

func (c currentLoop) Info() reconcile.LoopInfo {
	if l := c.d.loop.Load(); l != nil {
		return l.Info()
	}
	return reconcile.LoopInfo{Name: demo.ControllerName}
}

func (c currentLoop) InspectAll() []reconcile.KeyInfo {
	if l := c.d.loop.Load(); l != nil {
		return l.InspectAll()
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
type teeMetrics struct{ a, b metrics.Loop }

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
