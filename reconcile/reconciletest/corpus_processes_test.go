package reconciletest_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/gc"
	"github.com/steady-go/steady/reconcile/reconciletest"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/kv"
	"github.com/stretchr/testify/require"
)

// examples/processes: a ProcessSet wants N copies of a command; the set
// controller keeps its Instances (name-0 … name-(N-1), each with a stop
// finalizer), the instance controller makes each Instance a running
// process and stops every process no live Instance wants, and the GC
// deletes the Instances of a set that is gone. The three Loops run as the
// example runs them; their Reconcile methods are the example's, minus
// its log lines. The OS is a fake: a process table kept in the store (kind
// Proc), reached through the process's faulty view, so a start or a kill
// can fail or lose its reply like a system call of a dying machine.

type (
	ProcessSetSpec struct {
		Command  []string `json:"command"`
		Replicas int      `json:"replicas"`
	}
	ProcessSetStatus struct {
		Running int `json:"running"`
	}
	InstanceSpec struct {
		Set     string   `json:"set"`
		Index   int      `json:"index"`
		Command []string `json:"command"`
	}
	InstanceStatus struct {
		PID int `json:"pid,omitempty"`
	}
	ProcessSet = store.Object[ProcessSetSpec, ProcessSetStatus]
	Instance   = store.Object[InstanceSpec, InstanceStatus]
)

const (
	setKind         = "ProcessSet"
	stopFinalizer   = "processes.example/stop"
	maxReplicas     = 50
	setManager      = "processsets"
	instanceManager = "instances"
	confirmAfter    = 50 * time.Millisecond
)

func (s ProcessSetSpec) validate() error {
	if len(s.Command) == 0 || s.Command[0] == "" {
		return errors.New("empty command")
	}
	if s.Replicas < 0 || s.Replicas > maxReplicas {
		return fmt.Errorf("replicas %d: want 0 to %d", s.Replicas, maxReplicas)
	}
	return nil
}

func instanceName(set string, i int) string { return fmt.Sprintf("%s-%d", set, i) }

func wanted(set, n string, replicas int) bool {
	idx, ok := strings.CutPrefix(n, set+"-")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(idx)
	return err == nil && i >= 0 && i < replicas && instanceName(set, i) == n
}

func commandHash(argv []string) string {
	h := fnv.New32a()
	for _, a := range argv {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// proc is a process of the fake OS.
type proc struct {
	PID  int
	Name string // the instance it was started for
	UID  string // that instance's UID
	Hash string // commandHash of the argv it was started with
}

// procSpec is a process table entry, stored under the key of its
// (instance, UID, command): a start is idempotent, and its PID is the
// entry's revision (it is written once, at its start).
type procSpec struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
	Hash string `json:"hash"`
}

type fakeProcs struct {
	st *store.Store[procSpec, struct{}]
}

func (o fakeProcs) start(ctx context.Context, name, uid string, argv []string) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("empty command")
	}
	key := name + "." + uid + "." + commandHash(argv)
	_, err := o.st.As("os").Create(ctx, &store.Object[procSpec, struct{}]{Meta: store.Meta{Name: key}, Spec: procSpec{Name: name, UID: uid, Hash: commandHash(argv)}})
	if err := store.IgnoreAlreadyExists(err); err != nil {
		return 0, err
	}
	p, err := o.st.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	return int(p.Meta.Revision), nil
}

func (o fakeProcs) kill(ctx context.Context, pid int) error {
	all, err := o.st.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	for _, p := range all.Items {
		if int(p.Meta.Revision) == pid {
			_, err := o.st.As("os").Delete(ctx, p.Meta.Name)
			return store.IgnoreNotFound(err)
		}
	}
	return nil
}

func (o fakeProcs) scan(ctx context.Context) ([]proc, error) {
	all, err := o.st.List(ctx, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []proc
	for _, p := range all.Items {
		out = append(out, proc{PID: int(p.Meta.Revision), Name: p.Spec.Name, UID: p.Spec.UID, Hash: p.Spec.Hash})
	}
	return out, nil
}

type setController struct {
	sets   *cache.Cache[ProcessSetSpec, ProcessSetStatus]
	setSt  *store.Store[ProcessSetSpec, ProcessSetStatus]
	insts  *cache.Cache[InstanceSpec, InstanceStatus]
	instSt *store.Store[InstanceSpec, InstanceStatus]
}

func (c *setController) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	set, ok := c.sets.Get(name)
	if !ok || set.Meta.DeletionRequested {
		return reconcile.Result{}, nil // the GC deletes its Instances
	}
	if err := set.Spec.validate(); err != nil {
		return reconcile.Result{}, reconcile.Terminal(err)
	}
	w := c.instSt.As(setManager)

	// The Instances this set controls, by UID: an Instance left over from
	// an earlier set of the same name is not ours (the GC removes it).
	have := map[string]*Instance{}
	for _, in := range c.insts.ByIndex(cache.IndexOwnerUID, set.Meta.UID) {
		for _, ref := range in.Meta.Owners {
			if ref.Controller && ref.UID == set.Meta.UID {
				have[in.Meta.Name] = in
			}
		}
	}

	running := 0
	for i := range set.Spec.Replicas {
		n := instanceName(name, i)
		if in, ok := have[n]; ok {
			if in.Status.PID > 0 && !in.Meta.DeletionRequested {
				running++
			}
			if !slices.Equal(in.Spec.Command, set.Spec.Command) {
				if err := c.setCommand(ctx, in, set.Spec.Command); err != nil {
					return reconcile.Result{}, err
				}
			}
			continue
		}
		in := &Instance{
			Meta: store.Meta{Name: n, Finalizers: []string{stopFinalizer},
				Owners: []store.OwnerRef{{Kind: setKind, Name: name, UID: set.Meta.UID, Controller: true}}},
			Spec: InstanceSpec{Set: name, Index: i, Command: set.Spec.Command},
		}
		rev, err := w.Create(ctx, in)
		if err := store.IgnoreAlreadyExists(err); err != nil {
			return reconcile.Result{}, err
		}
		if err == nil {
			reconcile.RecordWrite(ctx, rev)
		}
	}
	for n, in := range have {
		if in.Meta.DeletionRequested || wanted(name, n, set.Spec.Replicas) {
			continue
		}
		rev, err := w.Delete(ctx, n, store.WithUID(in.Meta.UID))
		if err := store.IgnoreNotFound(err); err != nil {
			return reconcile.Result{}, err
		}
		reconcile.RecordWrite(ctx, rev)
	}

	if set.Status.Running != running {
		fresh, err := c.setSt.Get(ctx, name)
		if err != nil {
			return reconcile.Result{}, store.IgnoreNotFound(err)
		}
		fresh.Status.Running = running
		rev, err := c.setSt.As(setManager).UpdateStatus(ctx, fresh, store.WithObserved(set.Meta))
		if err != nil {
			return reconcile.Result{}, store.IgnoreNotFound(err)
		}
		reconcile.RecordWrite(ctx, rev)
	}
	return reconcile.Result{}, nil
}

func (c *setController) setCommand(ctx context.Context, in *Instance, cmd []string) error {
	fresh, err := c.instSt.Get(ctx, in.Meta.Name)
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	fresh.Spec.Command = cmd
	rev, err := c.instSt.As(setManager).Update(ctx, fresh)
	if err != nil {
		return err
	}
	reconcile.RecordWrite(ctx, rev)
	return nil
}

type instanceController struct {
	cache *cache.Cache[InstanceSpec, InstanceStatus]
	st    *store.Store[InstanceSpec, InstanceStatus]
	os    fakeProcs

	mu      sync.Mutex
	seen    map[string]int
	adopted int
}

func (c *instanceController) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	all, err := c.os.scan(ctx)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("scan /proc: %w", err)
	}
	var mine []proc
	for _, p := range all {
		if p.Name == name {
			mine = append(mine, p)
		}
	}
	obj, exists := c.cache.Get(name)
	want := exists && !obj.Meta.DeletionRequested

	// Keep at most one process: started for this very Instance (UID) with
	// its current command. Stop every other.
	keep := -1
	if want {
		hash := commandHash(obj.Spec.Command)
		keep = slices.IndexFunc(mine, func(p proc) bool { return p.UID == obj.Meta.UID && p.Hash == hash })
	}
	for i, p := range mine {
		if i == keep {
			continue
		}
		if err := c.os.kill(ctx, p.PID); err != nil {
			return reconcile.Result{}, fmt.Errorf("kill pid %d: %w", p.PID, err)
		}
	}
	killed := len(mine) > 0 && (keep < 0 || len(mine) > 1)

	switch {
	case !exists:
		c.forget(name)
		if killed {
			return reconcile.Result{RequeueAfter: confirmAfter}, nil
		}
		return reconcile.Result{}, nil
	case obj.Meta.DeletionRequested:
		if len(mine) > 0 {
			return reconcile.Result{RequeueAfter: confirmAfter}, nil
		}
		return reconcile.Result{}, c.release(ctx, name)
	}

	var pid int
	if keep >= 0 {
		pid = mine[keep].PID
		if c.observe(name, pid) {
			c.mu.Lock()
			c.adopted++
			c.mu.Unlock()
		}
	} else {
		pid, err = c.os.start(ctx, name, obj.Meta.UID, obj.Spec.Command)
		if err != nil {
			return reconcile.Result{}, reconcile.Blocked("StartFailed", fmt.Errorf("start %q: %w", obj.Spec.Command, err))
		}
		c.observe(name, pid)
	}
	if obj.Status.PID != pid {
		if err := c.writePID(ctx, obj, pid); err != nil {
			return reconcile.Result{}, err
		}
	}
	if killed {
		return reconcile.Result{RequeueAfter: confirmAfter}, nil
	}
	return reconcile.Result{}, nil
}

func (c *instanceController) writePID(ctx context.Context, obj *Instance, pid int) error {
	fresh, err := c.st.Get(ctx, obj.Meta.Name)
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	fresh.Status.PID = pid
	rev, err := c.st.As(instanceManager).UpdateStatus(ctx, fresh, store.WithObserved(obj.Meta))
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	reconcile.RecordWrite(ctx, rev)
	return nil
}

func (c *instanceController) release(ctx context.Context, name string) error {
	fresh, err := c.st.Get(ctx, name)
	if err != nil {
		return store.IgnoreNotFound(err)
	}
	if !slices.Contains(fresh.Meta.Finalizers, stopFinalizer) {
		return nil
	}
	fresh.Meta.Finalizers = slices.DeleteFunc(slices.Clone(fresh.Meta.Finalizers), func(f string) bool { return f == stopFinalizer })
	if _, err := c.st.As(instanceManager).Update(ctx, fresh); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err // a conflict: the retry reads again
	}
	c.forget(name)
	return nil
}

func (c *instanceController) observe(name string, pid int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[name] == pid {
		return false
	}
	c.seen[name] = pid
	return true
}

func (c *instanceController) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.seen, name)
}

// processKeys lists the instance names of every process of the fleet, so
// resync and each new term reach processes that have no Instance. (The
// example's, with a ctx for the fake OS.)
func (c *instanceController) processKeys(ctx context.Context) func() iter.Seq[string] {
	return func() iter.Seq[string] {
		return func(yield func(string) bool) {
			procs, err := c.os.scan(ctx)
			if err != nil {
				return // the next resync scans again
			}
			for _, p := range procs {
				if !yield(p.Name) {
					return
				}
			}
		}
	}
}

func processesConfig() reconciletest.Config[ProcessSetSpec, ProcessSetStatus] {
	commands := [][]string{{"sleep", "1000"}, {"sleep", "2000"}, {"yes"}}
	return reconciletest.Config[ProcessSetSpec, ProcessSetStatus]{
		Kind:    setKind,
		Manager: setManager,
		Object: func(i int, rng *rand.Rand) *ProcessSet {
			s := &ProcessSet{Meta: store.Meta{Name: fmt.Sprintf("set%d", i)},
				Spec: ProcessSetSpec{Command: commands[rng.IntN(len(commands))], Replicas: rng.IntN(4)}}
			if rng.IntN(8) == 0 {
				s.Spec.Command = nil // no retry can fix it: Terminal
			}
			return s
		},
		Setup: func(env *reconciletest.Env[ProcessSetSpec, ProcessSetStatus]) (reconcile.Reconciler[string], error) {
			insts, err := reconciletest.NewStore[InstanceSpec, InstanceStatus](env.Process, "Instance")
			if err != nil {
				return nil, err
			}
			procs, err := reconciletest.NewStore[procSpec, struct{}](env.Process, "Proc")
			if err != nil {
				return nil, err
			}
			instCache := reconciletest.NewCache(env.Process, insts)
			env.Watch(reconcile.FromOwned(instCache, setKind))
			ic := &instanceController{cache: instCache, st: insts, os: fakeProcs{procs}, seen: map[string]int{}}
			env.Go(func(ctx context.Context) error {
				instLoop, err := reconcile.New("instances", ic,
					reconcile.Sources(reconcile.FromStore(instCache, insts), reconcile.Keys(ic.processKeys(ctx))),
					reconcile.WithFieldManager(instanceManager), reconcile.WithElector(env.Elector()),
					reconcile.WithResync(30*time.Second, 0), reconcile.WithLogger(quiet))
				if err != nil {
					return err
				}
				return instLoop.Run(ctx)
			})
			gcLoop, err := gc.New("gc", instCache, insts, []gc.Owner{gc.OwnerKind(env.Cache, env.Store)},
				reconcile.WithElector(env.Elector()), reconcile.WithLogger(quiet))
			if err != nil {
				return nil, err
			}
			env.Go(gcLoop.Run)
			return &setController{sets: env.Cache, setSt: env.Store, insts: instCache, instSt: insts}, nil
		},
		Converged: func(ctx context.Context, b kv.Backend, s *ProcessSet) error {
			insts, err := store.New[InstanceSpec, InstanceStatus](b, "Instance")
			if err != nil {
				return err
			}
			procs, err := store.New[procSpec, struct{}](b, "Proc")
			if err != nil {
				return err
			}
			il, err := insts.List(ctx, store.ListOptions{})
			if err != nil {
				return err
			}
			pl, err := procs.List(ctx, store.ListOptions{})
			if err != nil {
				return err
			}
			running := map[string]int{} // instance name.UID.hash → PID
			for _, p := range pl.Items {
				running[p.Meta.Name] = int(p.Meta.Revision)
			}
			n := 0
			for _, in := range il.Items {
				if len(in.Meta.Owners) == 0 || in.Meta.Owners[0].UID != s.Meta.UID {
					continue
				}
				n++
				key := in.Meta.Name + "." + in.Meta.UID + "." + commandHash(s.Spec.Command)
				if pid, ok := running[key]; !ok || in.Status.PID != pid || !slices.Equal(in.Spec.Command, s.Spec.Command) {
					return fmt.Errorf("instance %s: command %q, pid %d, process running %v", in.Meta.Name, in.Spec.Command, in.Status.PID, ok)
				}
			}
			if n != s.Spec.Replicas || s.Status.Running != s.Spec.Replicas {
				return fmt.Errorf("%d instances (status: %d running), want %d", n, s.Status.Running, s.Spec.Replicas)
			}
			return nil
		},
		Unreconcilable: func(s *ProcessSet) bool { return s.Spec.validate() != nil },
		// A user scales sets and changes their commands; someone kill -9s a
		// process.
		Compete: func(ctx context.Context, b kv.Backend, w *store.Writer[ProcessSetSpec, ProcessSetStatus], name string, rng *rand.Rand) error {
			if rng.IntN(3) == 0 {
				procs, err := store.New[procSpec, struct{}](b, "Proc")
				if err != nil {
					return err
				}
				l, err := procs.List(ctx, store.ListOptions{})
				if err != nil || len(l.Items) == 0 {
					return err
				}
				_, err = procs.As("kill-9").Delete(ctx, l.Items[rng.IntN(len(l.Items))].Meta.Name)
				return err
			}
			sets, err := store.New[ProcessSetSpec, ProcessSetStatus](b, setKind)
			if err != nil {
				return err
			}
			s, err := sets.Get(ctx, name)
			if err != nil || s.Spec.validate() != nil {
				return err
			}
			s.Spec.Replicas = rng.IntN(4)
			s.Spec.Command = commands[rng.IntN(len(commands))]
			_, err = w.Update(ctx, s)
			return err
		},
		Faults: reconciletest.AllFaults(),
	}
}

// TestProcessesControllersAreTheExamples keeps this copy of
// examples/processes honest (the root module cannot import the examples
// module): the controllers' methods are the example's, byte for byte,
// except the example's progress lines (c.log) and the ctx this copy hands
// its fake OS so that the harness can gate it.
func TestProcessesControllersAreTheExamples(t *testing.T) {
	files := map[string]string{}
	for _, name := range []string{"sets.go", "instances.go"} {
		b, err := os.ReadFile("../../examples/processes/" + name)
		require.NoError(t, err)
		files[name] = string(b)
	}
	here, err := os.ReadFile("corpus_processes_test.go")
	require.NoError(t, err)
	body := func(src, sig string) string {
		i := strings.Index(src, sig)
		require.GreaterOrEqual(t, i, 0, "%s is gone", sig)
		j := strings.Index(src[i:], "\n}\n")
		require.Greater(t, j, 0)
		return src[i : i+j+3]
	}
	osCtx := regexp.MustCompile(`c\.os\.(\w+)\(ctx(, )?`)
	normal := func(s string) string {
		var kept []string
		for line := range strings.SplitSeq(s, "\n") {
			if !strings.Contains(line, "c.log(") {
				kept = append(kept, line)
			}
		}
		return osCtx.ReplaceAllString(strings.Join(kept, "\n"), "c.os.$1(")
	}
	for sig, file := range map[string]string{
		"func (c *setController) Reconcile(":      "sets.go",
		"func (c *setController) setCommand(":     "sets.go",
		"func wanted(":                            "sets.go",
		"func (c *instanceController) Reconcile(": "instances.go",
		"func (c *instanceController) writePID(":  "instances.go",
		"func (c *instanceController) release(":   "instances.go",
		"func (c *instanceController) observe(":   "instances.go",
		"func (c *instanceController) forget(":    "instances.go",
	} {
		require.Equal(t, normal(body(files[file], sig)), normal(body(string(here), sig)), "%s differs from examples/processes/%s", sig, file)
	}
}
