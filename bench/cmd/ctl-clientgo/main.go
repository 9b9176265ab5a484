// Command ctl-clientgo is client-go's side of the controller-shaped
// benchmark (see controller.sh), the sample-controller pattern: an
// ObjectTracker holding -objects Deployments with ~200-byte specs, a
// SharedIndexInformer, a workqueue with client-go's default controller rate
// limiter, and -workers workers whose reconcile reads the Deployment from
// the informer's cache and writes one status field with UpdateStatus,
// guarded by the read, while another writer makes -updates spec updates.
// It prints one report line (package ctlbench) and exits non-zero if the
// workload did not drain.
//
// The tracker stores what it is given: it keeps no generation, checks no
// precondition and writes a status update over the whole object. So the
// API server's part is played by a small apiServer here, on the tracker:
// a spec update keeps the status and bumps the generation, and UpdateStatus
// keeps the spec and is rejected with a Conflict unless the stored object
// has the UID and generation the status was computed from (what steady's
// IfObserved checks; the real API server checks the resourceVersion, which
// any write moves, so it would reject more). The fake clientset is not
// used: it records every action, and its heap would grow with the run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	k8scache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/steady-go/steady/bench/internal/ctlbench"
)

const ns = "default"

var (
	gvr = appsv1.SchemeGroupVersion.WithResource("deployments")
	gvk = appsv1.SchemeGroupVersion.WithKind("Deployment")
	gr  = gvr.GroupResource()
)

func main() {
	cfg := ctlbench.Flags(flag.CommandLine)
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "ctl-clientgo:", err)
		os.Exit(1)
	}
}

// apiServer is the API server's semantics over the tracker (see the
// package comment). Its lock makes each read-check-write one step, as
// the API server's storage does.
type apiServer struct {
	mu        sync.Mutex
	tracker   k8stesting.ObjectTracker
	conflicts atomic.Int64
}

// updateReplicas is the other writer's spec update.
func (a *apiServer) updateReplicas(name string, replicas int32) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, err := a.tracker.Get(gvr, ns, name)
	if err != nil {
		return err
	}
	d := o.(*appsv1.Deployment)
	d.Spec.Replicas = &replicas
	d.Generation++
	return a.tracker.Update(gvr, d, ns)
}

// updateStatus is UpdateStatus: d's status onto the stored object, if it
// is still the object and spec d was read as.
func (a *apiServer) updateStatus(d *appsv1.Deployment) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, err := a.tracker.Get(gvr, ns, d.Name)
	if err != nil {
		return err
	}
	cur := o.(*appsv1.Deployment)
	if cur.UID != d.UID || cur.Generation != d.Generation {
		a.conflicts.Add(1)
		return apierrors.NewConflict(gr, d.Name, fmt.Errorf("generation %d, status computed for %d", cur.Generation, d.Generation))
	}
	cur.Status = d.Status
	return a.tracker.Update(gvr, cur, ns)
}

func deployment(i int) *appsv1.Deployment {
	labels := ctlbench.Labels(i)
	zero := int32(0)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: ctlbench.Name(i), Namespace: ns, Generation: 1, UID: types.UID(fmt.Sprintf("uid-%d", i))},
		Spec: appsv1.DeploymentSpec{
			Replicas: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "web", Image: ctlbench.Image, Args: ctlbench.Args()},
				}},
			},
		},
	}
}

func run(cfg *ctlbench.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// The tracker's watch panics when its channel is full (100 events by
	// default); an API server would end a slow watch instead. Room for every
	// event of the run keeps the writer free to run ahead, as steady's is.
	watch.DefaultChanSize = int32(min(2*cfg.Updates+1024, 1<<30))

	scheme := runtime.NewScheme()
	if err := appsv1.AddToScheme(scheme); err != nil {
		return err
	}
	api := &apiServer{tracker: k8stesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())}
	for i := range cfg.Objects {
		if err := api.tracker.Create(gvr, deployment(i), ns); err != nil {
			return err
		}
	}
	lw := &k8scache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return api.tracker.List(gvr, gvk, ns)
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return api.tracker.Watch(gvr, ns)
		},
	}
	inf := k8scache.NewSharedIndexInformer(noWatchList{lw}, &appsv1.Deployment{}, 0,
		k8scache.Indexers{k8scache.NamespaceIndex: k8scache.MetaNamespaceIndexFunc})
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if k, err := k8scache.MetaNamespaceKeyFunc(obj); err == nil {
			q.Add(k)
		}
	}
	if _, err := inf.AddEventHandler(k8scache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if k, err := k8scache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				q.Add(k)
			}
		},
	}); err != nil {
		return err
	}

	plan := ctlbench.NewPlan(cfg)
	var passes atomic.Int64
	reconcile := func(key string) error {
		defer passes.Add(1)
		o, ok, err := inf.GetIndexer().GetByKey(key)
		if err != nil || !ok {
			return err
		}
		d := o.(*appsv1.Deployment)
		want := *d.Spec.Replicas
		if d.Status.ReadyReplicas == want {
			plan.Wrote(d.Name, int64(want))
			return nil
		}
		next := d.DeepCopy() // the cache's objects are read-only
		next.Status.ReadyReplicas = want
		if err := api.updateStatus(next); err != nil {
			return err
		}
		plan.Wrote(d.Name, int64(want))
		return nil
	}

	ctx, cancel := context.WithCancel(context.Background())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer q.ShutDown()
	defer close(stop)
	defer cancel()
	wg.Go(func() { inf.Run(stop) })
	if !k8scache.WaitForCacheSync(stop, inf.HasSynced) {
		return fmt.Errorf("informer did not sync")
	}
	for range cfg.Workers {
		wg.Go(func() {
			for {
				k, quit := q.Get()
				if quit {
					return
				}
				if err := reconcile(k); err != nil {
					q.AddRateLimited(k)
				} else {
					q.Forget(k)
				}
				q.Done(k)
			}
		})
	}

	rep := ctlbench.Report{Side: "client-go", Objects: cfg.Objects, Updates: cfg.Updates, Relists: -1}
	if err := ctlbench.Drive(ctx, cfg, plan, &passes, func(ctx context.Context) error {
		for u := range cfg.Updates {
			if err := ctx.Err(); err != nil {
				return err
			}
			i, replicas := plan.Update(u)
			if err := api.updateReplicas(ctlbench.Name(i), int32(replicas)); err != nil {
				return err
			}
		}
		return nil
	}, &rep); err != nil {
		return err
	}
	rep.Conflicts = api.conflicts.Load()
	rep.Write(os.Stdout)
	return nil
}

// noWatchList tells the reflector that the tracker cannot stream the
// initial list (as client-go's own fake clientset does), so it lists and
// then watches.
type noWatchList struct{ *k8scache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
