// Command ctl-clientgo is client-go's side of the controller-shaped
// benchmark (see controller.sh), the sample-controller pattern: an
// ObjectTracker holding -objects Apps (a custom resource, package kubefake) with ~200-byte specs, a
// SharedIndexInformer, a workqueue with client-go's default controller rate
// limiter, and -workers workers whose reconcile reads the App from
// the informer's cache and writes one status field with UpdateStatus,
// guarded by the read, while another writer makes -updates spec updates,
// flat out or, with -rate, paced (see package ctlbench).
// It prints one report line (package ctlbench) and exits non-zero if the
// workload did not drain.
//
// The API server is played by package kubefake, which says how and why.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	k8scache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/steady-go/steady/bench/internal/ctlbench"
	"github.com/steady-go/steady/bench/internal/kubefake"
)

func main() {
	cfg := ctlbench.Flags(flag.CommandLine)
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "ctl-clientgo:", err)
		os.Exit(1)
	}
}

func run(cfg *ctlbench.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	api, err := kubefake.NewAPIServer(cfg.Objects)
	if err != nil {
		return err
	}
	inf := api.Informer()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	if err := enqueueChanges(inf, q); err != nil {
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
		d := o.(*kubefake.App)
		want := d.Spec.Replicas
		if d.Status.ReadyReplicas == want {
			plan.Wrote(d.Name, int64(want))
			return nil
		}
		next := d.DeepCopy() // the cache's objects are read-only
		next.Status.ReadyReplicas = want
		if err := api.UpdateStatus(next); err != nil {
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
		wg.Go(func() { work(q, reconcile) })
	}

	rep := ctlbench.Report{Side: "client-go", Objects: cfg.Objects, Updates: cfg.Updates, Relists: -1, Expired: -1}
	if err := ctlbench.Drive(ctx, cfg, plan, &passes, func(_ context.Context, u int) error {
		i, replicas := plan.Update(u)
		return api.UpdateSpec(ctlbench.Name(i), func(d *kubefake.App) {
			d.Spec.Replicas = int32(replicas)
		})
	}, &rep); err != nil {
		return err
	}
	rep.Conflicts = api.Conflicts()
	rep.Write(os.Stdout)
	return nil
}

// enqueueChanges adds the key of every object inf sees change to q, as a
// controller-runtime event handler does.
func enqueueChanges(inf k8scache.SharedIndexInformer, q workqueue.TypedRateLimitingInterface[string]) error {
	enqueue := func(obj any) {
		if k, err := k8scache.MetaNamespaceKeyFunc(obj); err == nil {
			q.Add(k)
		}
	}
	_, err := inf.AddEventHandler(k8scache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if k, err := k8scache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				q.Add(k)
			}
		},
	})
	return err
}

// work is one worker: it reconciles the keys of q until q shuts down,
// retrying a failed key with q's rate limit.
func work(q workqueue.TypedRateLimitingInterface[string], reconcile func(string) error) {
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
}
