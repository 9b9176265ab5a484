package bench

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	k8scache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

// eventObjects is how many objects each side holds; the writes cycle
// through them, so every event is a modification of a cached object.
const eventObjects = 1000

// BenchmarkEventToReconcile is the event path of issue 17, one change at a
// time: a write by another actor, seen by the informer, judged, queued and
// handed to a reconcile that reads the object from the cache. Each op is one
// event; it reports the write-to-reconcile latency (p50-µs, p99-µs) and,
// through -benchmem, the allocations and bytes of the whole path per event.
//
//   - steady: a memstore write (Writer.Update of the spec by "user"),
//     cache.Cache, the Loop's own-write judge (field level, FromStore), the
//     Loop's queue and worker.
//   - client-go: its in-memory analog with no encoding, a fake
//     ObjectTracker feeding a SharedIndexInformer whose handler adds to a
//     workqueue drained by a hand-rolled worker (the sample-controller
//     pattern).
//
// Targets (issue 17): steady's p50 and p99 ≤ 3× client-go's, measured in
// the same sitting; ≤ 60 allocs and ≤ 8 KB per event.
func BenchmarkEventToReconcile(b *testing.B) {
	b.Run("steady", benchSteadyEvents)
	b.Run("client-go", benchClientGoEvents)
}

// latencies collects one duration per op and reports its quantiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	q := func(f float64) float64 { return float64(l[int(f*float64(len(l)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

type eventSpec struct {
	Image    string `json:"image"`
	Replicas int    `json:"replicas"`
}

type eventStatus struct {
	Ready int `json:"ready"`
}

func benchSteadyEvents(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := store.New[eventSpec, eventStatus](memstore.New(), "App")
	if err != nil {
		b.Fatal(err)
	}
	user := st.As("user")
	objs := make([]*store.Object[eventSpec, eventStatus], eventObjects)
	for i := range objs {
		objs[i] = &store.Object[eventSpec, eventStatus]{
			Meta: store.Meta{Name: "obj-" + strconv.Itoa(i), Labels: map[string]string{"app": "web"}},
			Spec: eventSpec{Image: "web:1", Replicas: 1},
		}
		if _, err := user.Create(ctx, objs[i]); err != nil {
			b.Fatal(err)
		}
	}
	c := cache.New[eventSpec, eventStatus](st)
	reconciled := make(chan string, 1)
	r := reconcile.Func[string](func(_ context.Context, key string) (reconcile.Result, error) {
		if _, ok := c.Get(key); ok {
			reconciled <- key
		}
		return reconcile.Result{}, nil
	})
	l, err := reconcile.New("bench", r, reconcile.FromStore(c, st), reconcile.WithWorkers(2),
		reconcile.WithResync(24*time.Hour, 0))
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = c.Run(ctx) })
	wg.Go(func() { _ = l.Run(ctx) })
	for range objs { // the first term reconciles every key once
		<-reconciled
	}
	lat := make(latencies, 0, 1<<16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		o := objs[i%len(objs)]
		o.Spec.Replicas++
		t0 := time.Now()
		if _, err := user.Update(ctx, o); err != nil {
			b.Fatal(err)
		}
		if k := <-reconciled; k != o.Meta.Name {
			b.Fatalf("reconciled %s, want %s", k, o.Meta.Name)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	b.StopTimer()
	lat.report(b)
}

func benchClientGoEvents(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	tracker := k8stesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	const ns = "default"
	objs := make([]*corev1.ConfigMap, eventObjects)
	for i := range objs {
		objs[i] = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "obj-" + strconv.Itoa(i), Namespace: ns, Labels: map[string]string{"app": "web"}},
			Data:       map[string]string{"image": "web:1", "replicas": "1"},
		}
		if err := tracker.Add(objs[i]); err != nil {
			b.Fatal(err)
		}
	}
	lw := &k8scache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return tracker.List(gvr, gvk, ns)
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return tracker.Watch(gvr, ns)
		},
	}
	inf := k8scache.NewSharedIndexInformer(noWatchList{lw}, &corev1.ConfigMap{}, 0, k8scache.Indexers{})
	q := workqueue.NewTyped[string]()
	enqueue := func(obj any) {
		if k, err := k8scache.MetaNamespaceKeyFunc(obj); err == nil {
			q.Add(k)
		}
	}
	if _, err := inf.AddEventHandler(k8scache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		b.Fatal(err)
	}
	reconciled := make(chan string, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer q.ShutDown()
	defer close(stop)
	wg.Go(func() { inf.Run(stop) })
	for range 2 { // two workers, as the steady Loop has
		wg.Go(func() {
			for {
				k, quit := q.Get()
				if quit {
					return
				}
				if _, ok, _ := inf.GetIndexer().GetByKey(k); ok {
					reconciled <- k
				}
				q.Done(k)
			}
		})
	}
	for range objs {
		<-reconciled
	}
	lat := make(latencies, 0, 1<<16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		o := objs[i%len(objs)]
		o.Data["replicas"] = strconv.Itoa(i)
		t0 := time.Now()
		if err := tracker.Update(gvr, o, ns); err != nil {
			b.Fatal(err)
		}
		if k := <-reconciled; k != ns+"/"+o.Name {
			b.Fatalf("reconciled %s, want %s/%s", k, ns, o.Name)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	b.StopTimer()
	lat.report(b)
}

// noWatchList tells the reflector that the tracker cannot stream the
// initial list (as client-go's own fake clientset does), so it lists and
// then watches.
type noWatchList struct{ *k8scache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
