package otelsteady_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
	"github.com/steady-go/steady/tracing/otelsteady"
)

// Tracing a controller, whole: an SDK TracerProvider that exports every
// span with the stdouttrace exporter (to a buffer here, to read back the
// spans' names; drop WithWriter to print them on stdout, or use an OTLP
// exporter to send them to a collector), the Backend and the Reconciler
// wrapped, and Shutdown at the end, which flushes the spans.
func Example() {
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(&spans))
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter)) // WithBatcher in production

	type AppSpec struct {
		Replicas int `json:"replicas"`
	}
	type AppStatus struct {
		Running int `json:"running"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	apps, err := store.New[AppSpec, AppStatus](otelsteady.Backend(memstore.New(), tp), "App",
		store.WithTraceContext(otelsteady.TraceContext)) // every write records its trace
	if err != nil {
		log.Fatal(err)
	}
	appCache := cache.New(apps)
	r := reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
		app, ok := appCache.Get(name)
		if !ok {
			return reconcile.Result{}, nil
		}
		// A write with the reconcile's ctx: a child span of the reconcile.
		_, err := apps.As("app-controller").ApplyStatus(ctx, name, AppStatus{Running: app.Spec.Replicas}, nil)
		return reconcile.Result{}, err
	})
	trigger, err := otelsteady.FromCache(appCache) // link each reconcile to the trace of the write that caused it
	if err != nil {
		log.Fatal(err)
	}
	traced := otelsteady.Reconciler(r, otelsteady.Config[string]{Loop: "apps", TracerProvider: tp, Trigger: trigger})
	loop, err := reconcile.New("apps", traced, reconcile.FromStore(appCache, apps))
	if err != nil {
		log.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- appCache.Run(runCtx) }()
	go func() { done <- loop.Run(runCtx) }()

	if _, err := apps.As("user").Create(ctx, &store.Object[AppSpec, AppStatus]{
		Meta: store.Meta{Name: "web"}, Spec: AppSpec{Replicas: 2}}); err != nil {
		log.Fatal(err)
	}
	for { // until the controller reports and the Loop is idle
		app, err := apps.Get(ctx, "web")
		if err != nil {
			log.Fatal(err)
		}
		// A reconcile that stop cuts short would end its span with an error.
		info := loop.Info()
		if app.Status.Running == 2 && info.Busy == 0 && info.Queue.Ready+info.Queue.Low+info.Queue.Processing == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := errors.Join(<-done, <-done); err != nil {
		log.Fatal(err)
	}
	if err := tp.Shutdown(ctx); err != nil { // flushes the spans; call it before the program exits
		log.Fatal(err)
	}
	for _, s := range exported(&spans) {
		fmt.Println(s)
	}
	// The exporter writes a span when it ends, and the user's write may end
	// after the reconcile it caused, so the order of the lines is not fixed.

	// Unordered output:
	// steady.store.txn put App/web (a root span: the user's write)
	// steady.store.txn put App/web (a child of the reconcile's span)
	// reconcile apps/web: success
}

// spans is where the example's exporter writes.
var spans bytes.Buffer

// exported reads back the spans the stdouttrace exporter wrote to r (one
// JSON object each), once each: a name, and what identifies it.
func exported(r io.Reader) []string {
	var out []string
	dec := json.NewDecoder(r)
	for {
		var s struct {
			Name       string
			Parent     struct{ SpanID string }
			Attributes []struct {
				Key   string
				Value struct{ Value any }
			}
		}
		if err := dec.Decode(&s); err != nil {
			break
		}
		attr := map[string]any{}
		for _, a := range s.Attributes {
			attr[a.Key] = a.Value.Value
		}
		line := s.Name
		switch s.Name {
		case "reconcile":
			line = fmt.Sprintf("reconcile %v/%v: %v", attr["steady.loop"], attr["steady.key"], attr["steady.result"])
		case "steady.store.txn":
			line = fmt.Sprintf("steady.store.txn %v %v", attr["steady.store.op"], attr["steady.store.key"])
			if s.Parent.SpanID == "0000000000000000" || s.Parent.SpanID == "" {
				line += " (a root span: the user's write)"
			} else {
				line += " (a child of the reconcile's span)"
			}
		}
		if !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out
}
