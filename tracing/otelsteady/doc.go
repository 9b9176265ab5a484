// Package otelsteady traces steady with OpenTelemetry (go.opentelemetry.io/otel):
// one span per reconcile, a child span per store write made with the
// reconcile's ctx, and a link from each reconcile to the trace of the write
// that triggered it.
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter)) // e.g. an OTLP or stdouttrace exporter
//	defer tp.Shutdown(context.Background())                          // flushes the spans at exit
//	st, _ := store.New[S, T](otelsteady.Backend(backend, tp), "App",
//		store.WithTraceContext(otelsteady.TraceContext)) // writes record their trace
//	trigger, _ := otelsteady.FromCache(appCache) // link to the writer's trace
//	r := otelsteady.Reconciler(myReconciler, otelsteady.Config[string]{
//		Loop: "app", TracerProvider: tp, Trigger: trigger,
//	})
//	loop, _ := reconcile.New("app", r, reconcile.FromStore(appCache, st))
//
// The package's Example is all of it as a program that runs: the SDK
// provider, the stdouttrace exporter, the wrapped Backend and Reconciler,
// and Shutdown.
//
// # Spans
//
// "reconcile" (kind internal), one per call of Reconcile, a root span:
//
//	steady.loop            the Loop's name
//	steady.key             the key, fmt.Sprint'ed
//	steady.attempt         1, or n+1 after n consecutive failures (reconcile.Attempt)
//	steady.reconcile_id    the reconcile's ID (reconcile.ReconcileID), as in the Loop's log lines
//	steady.result          success, error, requeue, requeue_after (controller_runtime_reconcile_total's result)
//	steady.requeue.reason  why it runs again: backoff, blocked, retry_after, terminal (does not), requeue (after its write shows), requeue_after
//	steady.blocked.reason  Blocked's reason, when blocked
//	steady.requeue.after   RequeueAfter in seconds, when set
//
// An error is recorded on the span (RecordError) and sets its status to
// Error; a panic is recorded as an exception event and re-raised for the
// Loop to recover.
//
// When Trigger returns the trace context recorded with the object's last
// write (LastWrite.Trace, set by a store made WithTraceContext), the span
// carries a link to that writer's span: follow it from the reconcile to the
// request that changed the object, in the trace UI.
//
// "steady.store.txn" (kind client), a child of the span in the write's
// ctx, for every Txn through a Backend wrapped by Backend: attributes
// steady.store.key, steady.store.op (put, delete), steady.store.revision,
// and the error, if any. Reads are not traced.
//
// Attribute values are valid UTF-8, as OTLP requires (an exporter cannot
// encode a batch holding a span with a string that is not): in a key, the
// Loop's name, Blocked's reason or an error's message (the status and the
// exception event's exception.message) each run of bytes that are not
// valid UTF-8 becomes one U+FFFD, as in the Prometheus adapter's labels.
//
// With a no-op TracerProvider (the default global provider when none is
// installed) the wrappers add a few nanoseconds per call and allocate
// nothing beyond the attributes.
package otelsteady
