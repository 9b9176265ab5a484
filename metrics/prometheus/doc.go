// Package prometheus adapts steady's metric hooks (metrics.Loop and
// queue.Metrics) to github.com/prometheus/client_golang, with the series
// names, types, labels and buckets that controller-runtime and client-go
// export, so that dashboards and alerts written for controller-runtime work
// on a steady controller unchanged, plus steady's own series.
//
//	reg := prometheus.NewRegistry()            // client_golang's
//	m, err := steadyprom.New(reg)              // this package
//	loop, err := reconcile.New("app", r, src, reconcile.WithMetrics(m))
//	m.AddLoop(loop)                            // the scrape-time series
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Nothing is registered globally: New registers on the Registerer it is
// given, and fails (registering nothing) if a series of the same name is
// already there, for example controller-runtime's own. Beside the series
// below it registers client_golang's Go and process collectors (go_*,
// process_*), as controller-runtime's registry holds them; a registry
// that has them already keeps its own, and WithoutRuntimeCollectors leaves
// them out.
//
// # controller-runtime's series (label controller = the Loop's name)
//
// As in sigs.k8s.io/controller-runtime pkg/internal/controller/metrics:
//
//	controller_runtime_reconcile_total{controller,result}        counter   result: success, error, requeue, requeue_after
//	controller_runtime_reconcile_errors_total{controller}        counter
//	controller_runtime_terminal_reconcile_errors_total{controller} counter
//	controller_runtime_reconcile_panics_total{controller}        counter
//	controller_runtime_reconcile_time_seconds{controller}        histogram 0.005, 0.01, 0.025, 0.05, 0.1 … 0.5 by 0.05, 0.6 … 1 by 0.1, 1.25 … 2 by 0.25, 2.5 … 5 by 0.5, 6 … 10, 15 … 30 by 5, 40, 50, 60
//	controller_runtime_max_concurrent_reconciles{controller}     gauge
//	controller_runtime_active_workers{controller}                gauge
//
// # client-go's workqueue series (labels name and controller = the Loop's name)
//
// As controller-runtime's pkg/metrics/workqueue.go registers them:
//
//	workqueue_depth{name,controller,priority}                    gauge     priority is "" (steady reports both levels together)
//	workqueue_adds_total{name,controller}                        counter
//	workqueue_queue_duration_seconds{name,controller}            histogram ExponentialBuckets(10e-9, 10, 12); native factor 1.1 WithNativeHistograms
//	workqueue_work_duration_seconds{name,controller}             histogram ExponentialBuckets(10e-9, 10, 12); native factor 1.1 WithNativeHistograms
//	workqueue_unfinished_work_seconds{name,controller}           gauge
//	workqueue_longest_running_processor_seconds{name,controller} gauge
//	workqueue_retries_total{name,controller}                     counter
//
// controller-runtime also makes the two duration histograms native
// histograms (sparse exponential buckets, seen only by a scraper that
// negotiates the protobuf format). Here that is the option
// WithNativeHistograms, off by default: a native observation costs a
// sparse-bucket map lookup and more atomic updates, on two of the three
// observations per reconcile, a large share of the adapter's cost. The classic buckets
// are the same either way.
//
// steady's Loop backs off with delayed adds, not AddRateLimited; it calls
// the queue hook Retry for every retry it schedules through backoff (a
// failure, a RequeueAfterWrite that wrote nothing, or a revision conflict), so workqueue_retries_total
// counts what controller-runtime's rate-limited adds count.
//
// # steady's series
//
// From the Loop's hooks:
//
//	steady_stalled_total{controller,reason}              counter   keys marked Stalled, by reason (ReconcileFailing, Blocked's reason, TerminalError, Oscillating; see metrics.Loop.Stalled)
//	steady_oscillations_total{controller,kind}           counter   kind: Fight, NoProgress
//	steady_time_to_converge_seconds{controller}          histogram from a generation change to Ready at it; ExponentialBuckets(0.1, 2, 16)
//	steady_unconverged_objects{controller}               gauge
//	steady_fence_rejections_total{controller}            counter   see FenceRejected
//	steady_write_limit_delayed_total{controller}         counter   writes reconcile.WithWriteLimit delayed
//	steady_write_limit_delay_seconds_total{controller}   counter   the time they waited
//
// Read from each Loop given to AddLoop when scraped (reconcile.LoopInfo):
//
//	steady_stalled_objects{controller}                   gauge
//	steady_failing_keys{controller}                      gauge     keys whose last reconcile failed
//	steady_oscillating_keys{controller}                  gauge
//	steady_queue_keys{controller,state}                  gauge     state: ready, processing, delayed, backing_off, held
//	steady_leading{controller}                           gauge     1 while the Loop works a term
//	steady_leader_term{controller}                       gauge     the term's fence revision; 0 unfenced or not leading
//	steady_shards{controller,state}                      gauge     sharded Loops: shards owned, or moving (handed over)
//	steady_shard_queue_keys{controller,shard}            gauge     sharded Loops: queued keys per owned or moving shard
//
// Read from each cache given to AddCache when scraped:
//
//	steady_cache_synced{cache}                           gauge     1 once synced
//	steady_cache_objects{cache}                          gauge
//	steady_cache_revision{cache}                         gauge
//	steady_cache_relists_total{cache}                    counter   when the cache has Relists() int64
//	steady_cache_drift_repairs_total{cache}              counter   when the cache has DriftRepairs() int64
//	steady_cache_undecodable_values{cache}               gauge     when the cache has Undecodable() int
//	steady_cache_panics_total{cache}                     counter   when the cache has Panics() int64
//
// Label values must be valid UTF-8 in Prometheus, and a Loop's name, a
// cache's name or a Stalled reason need not be: each run of bytes that are
// not valid UTF-8 becomes one U+FFFD in the label (strings.ToValidUTF8: a
// Loop named "bad\xff" is controller="bad\uFFFD", and so is one named
// "bad\xff\xfe"), once per Loop, not per hook call. Names that differ only
// in such bytes share their series, and AddLoop and AddCache refuse the
// second as added twice.
//
// Every hook is safe for concurrent use. On the reconcile path a hook
// costs a lookup of the Loop's pre-bound series and a few atomic updates:
// the three duration histograms (reconcile_time, queue_duration,
// work_duration) are this package's own collector, whose observation is
// two atomic adds, exposed at scrape exactly as client_golang's classic
// histograms (WithNativeHistograms makes the workqueue ones client_golang's
// again).
package prometheus
