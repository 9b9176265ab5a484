// Package kubefake is client-go's side of the bench module's controller
// workloads: Apps (a custom resource) with the ~200-byte spec of package
// ctlbench in client-go's ObjectTracker, with the API server's write semantics, and a
// SharedIndexInformer over them.
//
// The tracker stores what it is given: it keeps no generation, checks no
// precondition, and writes a status update over the whole object. So the
// API server's part is played by APIServer, on the tracker: a spec update
// keeps the status and bumps the generation, and UpdateStatus keeps the spec
// and is rejected with a Conflict unless the stored object has the UID and
// generation the status was computed from (what steady's store.WithObserved
// checks; the real API server checks the resourceVersion, which any write
// moves, so it would reject more). The fake clientset is not used: it
// records every action, so its heap would grow with the run.
package kubefake

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
	k8scache "k8s.io/client-go/tools/cache"

	"github.com/steady-go/steady/bench/internal/ctlbench"
)

// Namespace holds every object.
const Namespace = "default"

var (
	gvr = groupVersion.WithResource("apps")
	gvk = groupVersion.WithKind("App")
)

// APIServer is the API server's write semantics over an ObjectTracker (see
// the package comment). Its lock makes each read-check-write one step, as
// the API server's storage does.
type APIServer struct {
	mu        sync.Mutex
	tracker   k8stesting.ObjectTracker
	conflicts atomic.Int64
	watchers  []*watcher // the watches of the Apps, guarded by mu
}

// NewAPIServer returns an APIServer holding objects Apps, named
// and labelled as package ctlbench says, at 0 replicas and generation 1.
// Its watch is its own (see watcher), not the tracker's, whose channel had
// to be sized for every event a run could put ahead of its informer.
func NewAPIServer(objects int) (*APIServer, error) {
	scheme := runtime.NewScheme()
	if err := addToScheme(scheme); err != nil {
		return nil, err
	}
	a := &APIServer{tracker: k8stesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())}
	for i := range objects {
		if err := a.tracker.Create(gvr, app(i), Namespace); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func app(i int) *App {
	return &App{
		ObjectMeta: metav1.ObjectMeta{Name: ctlbench.Name(i), Namespace: Namespace, Generation: 1, UID: types.UID("uid-" + strconv.Itoa(i))},
		Spec:       AppSpec{Image: ctlbench.Image, Args: ctlbench.Args(), Selector: ctlbench.Labels(i)},
	}
}

// UpdateSpec is another writer's spec update of name: mutate changes the
// spec of a fresh copy, the generation moves, and the status stays.
func (a *APIServer) UpdateSpec(name string, mutate func(*App)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, err := a.tracker.Get(gvr, Namespace, name)
	if err != nil {
		return err
	}
	d := o.(*App)
	mutate(d)
	d.Generation++
	return a.update(d)
}

// update stores d, and sends its event to every watch, as the tracker's
// own watch did: a copy of d for each (the tracker keeps its own copy).
// The caller holds a.mu, so the watches see the writes in their order.
func (a *APIServer) update(d *App) error {
	if err := a.tracker.Update(gvr, d, Namespace); err != nil {
		return err
	}
	for _, w := range a.watchers {
		w.modified(d.DeepCopy())
	}
	return nil
}

// startWatch starts a watch of the Apps' writes from now on.
func (a *APIServer) startWatch() watch.Interface {
	a.mu.Lock()
	defer a.mu.Unlock()
	var w *watcher
	w = newWatcher(func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.watchers = slices.DeleteFunc(a.watchers, func(o *watcher) bool { return o == w })
	})
	a.watchers = append(a.watchers, w)
	return w
}

// UpdateStatus writes d's status onto the stored object if it is still
// the object and spec d was read as, else returns a Conflict.
func (a *APIServer) UpdateStatus(d *App) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	o, err := a.tracker.Get(gvr, Namespace, d.Name)
	if err != nil {
		return err
	}
	cur := o.(*App)
	if cur.UID != d.UID || cur.Generation != d.Generation {
		a.conflicts.Add(1)
		return apierrors.NewConflict(gvr.GroupResource(), d.Name,
			fmt.Errorf("generation %d, status computed for %d", cur.Generation, d.Generation))
	}
	cur.Status = d.Status
	return a.update(cur)
}

// Conflicts is the number of UpdateStatus calls rejected so far.
func (a *APIServer) Conflicts() int64 { return a.conflicts.Load() }

// Informer returns a SharedIndexInformer over a's Apps, with the
// namespace index an informer factory adds and no resync.
func (a *APIServer) Informer() k8scache.SharedIndexInformer {
	lw := &k8scache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return a.tracker.List(gvr, gvk, Namespace)
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return a.startWatch(), nil
		},
	}
	return k8scache.NewSharedIndexInformer(noWatchList{lw}, &App{}, 0,
		k8scache.Indexers{k8scache.NamespaceIndex: k8scache.MetaNamespaceIndexFunc})
}

// noWatchList tells the reflector that the tracker cannot stream the
// initial list (as client-go's own fake clientset does), so it lists and
// then watches.
type noWatchList struct{ *k8scache.ListWatch }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
