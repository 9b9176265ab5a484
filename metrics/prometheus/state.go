package prometheus

import (
	"errors"
	"slices"
	"strconv"
	"sync"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/reconcile"
)

// Cache is what the scrape-time cache series read; *cache.Cache
// implements it. A cache that also has any of the methods
//
//	Relists() int64      // relists since Run (after an expired watch)
//	DriftRepairs() int64 // objects a relist found changed, added or deleted while the watch was blind
//	Undecodable() int    // values held back because they do not decode
//	Panics() int64       // panics of user functions the cache called (handlers, index functions, ...)
//
// gets the matching series too (steady_cache_relists_total,
// steady_cache_drift_repairs_total, steady_cache_undecodable_values,
// steady_cache_panics_total).
type Cache interface {
	HasSynced() bool
	Revision() int64
	Len() int
}

type (
	relister     interface{ Relists() int64 }
	driftCounter interface{ DriftRepairs() int64 }
	quarantiner  interface{ Undecodable() int }
	panicCounter interface{ Panics() int64 }
)

// AddLoop adds a Loop whose state is read at every scrape (the
// steady_stalled_objects, steady_failing_keys, steady_oscillating_keys,
// steady_queue_keys, steady_leading and steady_leader_term series). A scrape
// costs one Loop.Status call per Loop: O(keys held). It returns an error for
// a nil Loop (a nil *reconcile.Loop included) or a second Loop of the same
// name (its label value: see the package documentation on invalid UTF-8).
func (m *Metrics) AddLoop(l reconcile.Inspectable) error {
	if nilness.IsNil(l) {
		return errors.New("steady prometheus: nil Loop")
	}
	return m.state.add(&m.state.loops, labelValue(l.Name()), l)
}

// AddCache adds a cache, named name in the cache label, whose state is read
// at every scrape (see Cache). It returns an error for a nil cache (a nil
// *cache.Cache included) or a second cache of the same name (its label
// value: see the package documentation on invalid UTF-8).
func (m *Metrics) AddCache(name string, c Cache) error {
	if nilness.IsNil(c) {
		return errors.New("steady prometheus: nil cache")
	}
	return m.state.add(&m.state.caches, labelValue(name), c)
}

// stateCollector reads Loops and caches when scraped.
type stateCollector struct {
	mu     sync.Mutex
	loops  map[string]any
	caches map[string]any

	stalledObjs, failing, oscillating, queueKeys, leading, term    *prom.Desc
	shards, shardQueue                                             *prom.Desc
	synced, objects, revision, relists, drift, undecodable, panics *prom.Desc
}

func newStateCollector() *stateCollector {
	ctl, cache := []string{"controller"}, []string{"cache"}
	d := prom.NewDesc
	return &stateCollector{
		loops: map[string]any{}, caches: map[string]any{},

		stalledObjs: d("steady_stalled_objects", "Objects the Loop reports Stalled", ctl, nil),
		failing:     d("steady_failing_keys", "Keys whose last reconcile failed", ctl, nil),
		oscillating: d("steady_oscillating_keys", "Keys whose oscillation report holds", ctl, nil),
		queueKeys: d("steady_queue_keys", "Keys in the Loop's queue by state (ready, processing, delayed, backing_off, held)",
			[]string{"controller", "state"}, nil),
		leading: d("steady_leading", "1 while the Loop works a leadership term", ctl, nil),
		term:    d("steady_leader_term", "The fence revision of the Loop's term; 0 when unfenced or not leading", ctl, nil),
		shards: d("steady_shards", "Shards of a sharded Loop this replica owns (state owned) or hands over (state moving)",
			[]string{"controller", "state"}, nil),
		shardQueue: d("steady_shard_queue_keys", "Keys in a sharded Loop's queue per shard this replica owns or hands over",
			[]string{"controller", "shard"}, nil),

		synced:      d("steady_cache_synced", "1 once the cache has synced", cache, nil),
		objects:     d("steady_cache_objects", "Objects in the cache", cache, nil),
		revision:    d("steady_cache_revision", "The store revision the cache reflects", cache, nil),
		relists:     d("steady_cache_relists_total", "Relists of the cache after its watch expired", cache, nil),
		drift:       d("steady_cache_drift_repairs_total", "Objects a relist found changed while the watch was blind", cache, nil),
		undecodable: d("steady_cache_undecodable_values", "Stored values the cache holds back because they do not decode", cache, nil),
		panics:      d("steady_cache_panics_total", "Panics of user functions the cache called (handlers, index functions, error handler, List, Watch)", cache, nil),
	}
}

func (c *stateCollector) add(set *map[string]any, name string, v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := (*set)[name]; dup {
		return errors.New("steady prometheus: " + name + " added twice")
	}
	(*set)[name] = v
	return nil
}

// Describe implements prom.Collector.
func (c *stateCollector) Describe(ch chan<- *prom.Desc) {
	for _, d := range []*prom.Desc{c.stalledObjs, c.failing, c.oscillating, c.queueKeys, c.leading, c.term,
		c.shards, c.shardQueue, c.synced, c.objects, c.revision, c.relists, c.drift, c.undecodable, c.panics} {
		ch <- d
	}
}

// Collect implements prom.Collector.
func (c *stateCollector) Collect(ch chan<- prom.Metric) {
	c.mu.Lock()
	loops := make(map[string]reconcile.Inspectable, len(c.loops))
	for n, l := range c.loops {
		loops[n] = l.(reconcile.Inspectable)
	}
	caches := make(map[string]Cache, len(c.caches))
	for n, cc := range c.caches {
		caches[n] = cc.(Cache)
	}
	c.mu.Unlock()

	gauge := func(d *prom.Desc, v float64, labels ...string) {
		ch <- prom.MustNewConstMetric(d, prom.GaugeValue, v, labels...)
	}
	for name, l := range loops {
		s := l.Info()
		gauge(c.stalledObjs, float64(s.Stalled), name)
		gauge(c.failing, float64(s.Failing), name)
		gauge(c.oscillating, float64(s.Oscillating), name)
		q := s.Queue
		for _, st := range []struct {
			state string
			n     int
		}{{"ready", q.Ready + q.Low}, {"processing", q.Processing}, {"delayed", q.Delayed}, {"backing_off", q.BackingOff}, {"held", q.Held}} {
			gauge(c.queueKeys, float64(st.n), name, st.state)
		}
		gauge(c.leading, bool01(s.Leading), name)
		var term float64
		if s.Leading && s.Fenced {
			term = float64(s.Fence.Revision)
		}
		gauge(c.term, term, name)
		if sh := s.Sharding; sh != nil {
			gauge(c.shards, float64(len(sh.Owned)), name, "owned")
			gauge(c.shards, float64(len(sh.Moving)), name, "moving")
			for _, i := range append(slices.Clone(sh.Owned), sh.Moving...) {
				gauge(c.shardQueue, float64(sh.Queue[i]), name, strconv.Itoa(i))
			}
		}
	}
	for name, cc := range caches {
		gauge(c.synced, bool01(cc.HasSynced()), name)
		gauge(c.objects, float64(cc.Len()), name)
		gauge(c.revision, float64(cc.Revision()), name)
		if r, ok := cc.(relister); ok {
			ch <- prom.MustNewConstMetric(c.relists, prom.CounterValue, float64(r.Relists()), name)
		}
		if r, ok := cc.(driftCounter); ok {
			ch <- prom.MustNewConstMetric(c.drift, prom.CounterValue, float64(r.DriftRepairs()), name)
		}
		if r, ok := cc.(quarantiner); ok {
			gauge(c.undecodable, float64(r.Undecodable()), name)
		}
		if r, ok := cc.(panicCounter); ok {
			ch <- prom.MustNewConstMetric(c.panics, prom.CounterValue, float64(r.Panics()), name)
		}
	}
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
