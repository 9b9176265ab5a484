// Command ctl-steady is steady's side of the controller-shaped benchmark
// (see controller.sh): a memstore holding -objects Apps with ~200-byte
// specs, a cache, and a Loop with -workers workers whose Reconcile reads the
// App from the cache and applies one status field, guarded by the read
// (store.WithObserved), while another writer (its own Store over the same
// memstore, reading before each write) makes -updates spec updates, flat
// out or, with -rate, paced (see package ctlbench). It prints one report
// line (package ctlbench) and exits non-zero if the workload did not drain.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/steady-go/steady/bench/internal/ctlbench"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"
)

type appSpec struct {
	Replicas int64             `json:"replicas"`
	Image    string            `json:"image"`
	Args     []string          `json:"args"`
	Selector map[string]string `json:"selector"`
}

type appStatus struct {
	ReadyReplicas int64 `json:"readyReplicas"`
}

type app = store.Object[appSpec, appStatus]

func main() {
	cfg := ctlbench.Flags(flag.CommandLine)
	var hist historyFlags
	flag.IntVar(&hist.size, "history", 0, "memstore's watch window (memstore.WithHistorySize); 0 for memstore's default, which grows with the keys")
	flag.IntVar(&hist.bytes, "history-bytes", -1, "bytes of values memstore's history keeps in full before it keeps old values as deltas (memstore.WithHistoryBytes); -1 for memstore's default, which grows with a lagging watch's window")
	lastValues := flag.Int("last-values", -1, "the bound of the controller's Store's memory of values (store.WithLastValues), in bytes; -1 for the default (16 MiB: at 10k objects every object's value fits, at 1M about one in fifty, and each remembered value displaces one at random)")
	reconciled := flag.Bool("reconciled", false, "in the set-up, the controller applies each object's status once, as a controller that ran before has: no update of the timed phase is then an object's first status write by its controller (which adds its ownership record), where without it, at 1M objects and 300k updates, every update is one (client-go keeps no record of a status's writer: ctl-clientgo has no such flag)")
	idle := flag.Int("idle", 0, "hold this many more objects, each with its status written once, in a cache of a Store over a memstore of their own, that no update touches and no Loop watches: the heap is then nearly the size of a larger store's (less the Loop's state of each object it wrote, ~0.2 KB) while the controller's key space stays -objects, so that a run of 10k objects with -idle 990000 against one of 1M objects splits the growth from 10k to 1M into the heap's part (the GC, allocation on memory out of the CPU's caches) and the key space's (cold look-ups in the controller's structures); growth.sh -i runs it")
	allocBytes := flag.Int("alloc-bytes", 0, "allocate this many bytes more in each reconcile, in 128-byte objects that nothing keeps, so that a run against one without prices a byte allocated per event at its size (README: at 10k objects 0.1-0.6 µs a kilobyte, within that size's noise; at 1M about 1.5-2 µs)")
	flag.Parse()
	if err := run(cfg, hist, *lastValues, *reconciled, *idle, *allocBytes); err != nil {
		fmt.Fprintln(os.Stderr, "ctl-steady:", err)
		os.Exit(1)
	}
}

// historyFlags are memstore's history options, where set.
type historyFlags struct{ size, bytes int }

func (h historyFlags) options() []memstore.Option {
	var opts []memstore.Option
	if h.size > 0 {
		opts = append(opts, memstore.WithHistorySize(h.size))
	}
	if h.bytes >= 0 {
		opts = append(opts, memstore.WithHistoryBytes(h.bytes))
	}
	return opts
}

func run(cfg *ctlbench.Config, hist historyFlags, lastValues int, reconciled bool, idle, allocBytes int) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if idle < 0 {
		return fmt.Errorf("-idle is %d; it must be 0 or more", idle)
	}
	if allocBytes < 0 {
		return fmt.Errorf("-alloc-bytes is %d; it must be 0 or more", allocBytes)
	}
	g := &garbage{n: allocBytes}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	if idle > 0 {
		if _, err := holdIdle(ctx, &wg, idle); err != nil {
			return err
		}
	}
	mem := memstore.New(hist.options()...)
	var opts []store.Option
	if lastValues >= 0 {
		opts = append(opts, store.WithLastValues(lastValues))
	}
	st, err := store.New[appSpec, appStatus](mem, "App", opts...)
	if err != nil {
		return err
	}
	// The other writer is another client: its own Store, remembering
	// nothing, so each update reads the object and writes it back.
	other, err := store.New[appSpec, appStatus](mem, "App", store.WithLastValues(0))
	if err != nil {
		return err
	}
	user := other.As("user")
	w := st.As("app-controller")
	if err := setUp(ctx, cfg.Objects, user, w, reconciled); err != nil {
		return err
	}

	plan := ctlbench.NewPlan(cfg)
	// The cache's errors, counted from the first: an expired watch or
	// listing (the backend's history moved past it) is why it relists.
	var expired atomic.Int64
	c := cache.New(st, cache.WithErrorHandler(func(err error) {
		if errors.Is(err, store.ErrExpired) {
			expired.Add(1)
		}
	}))
	var passes, conflicts atomic.Int64
	r := reconcile.Func[string](func(ctx context.Context, name string) (reconcile.Result, error) {
		defer passes.Add(1)
		g.alloc()
		o, ok := c.Get(name)
		if !ok {
			return reconcile.Result{}, nil
		}
		if o.Status.ReadyReplicas == o.Spec.Replicas {
			plan.Wrote(name, o.Spec.Replicas)
			return reconcile.Result{}, nil
		}
		_, err := w.ApplyStatus(ctx, name, appStatus{ReadyReplicas: o.Spec.Replicas}, nil, store.WithObserved(o.Meta))
		switch {
		case errors.Is(err, store.ErrConflict):
			conflicts.Add(1)
			return reconcile.Result{}, err // the Loop paces it as a retry
		case err != nil:
			return reconcile.Result{}, store.IgnoreNotFound(err)
		}
		plan.Wrote(name, o.Spec.Replicas)
		return reconcile.Result{}, nil
	})
	// Warn and above only: conflicts are logged at Info, and a log line per
	// conflict would measure the logger.
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := reconcile.New("app", r, reconcile.FromStore(c, st),
		reconcile.WithWorkers(cfg.Workers), reconcile.WithFieldManager("app-controller"), reconcile.WithLogger(log))
	if err != nil {
		return err
	}
	wg.Go(func() { _ = c.Run(ctx) })
	wg.Go(func() { _ = l.Run(ctx) })
	relists0, expired0 := c.Relists(), expired.Load()
	var retries atomic.Int64
	rep := ctlbench.Report{Side: "steady", Objects: cfg.Objects, Updates: cfg.Updates}
	if err := ctlbench.Drive(ctx, cfg, plan, &passes, func(ctx context.Context, u int) error {
		return update(ctx, u, plan, other, user, &retries)
	}, &rep); err != nil {
		return err
	}
	rep.Conflicts, rep.Retries, rep.Relists = conflicts.Load(), retries.Load(), c.Relists()-relists0
	rep.Expired = expired.Load() - expired0
	rep.Write(os.Stdout)
	return nil
}

// setUp creates the objects as user, at 0 replicas; with reconciled, the
// controller w then applies each one's status once, which records w's
// ownership of it as a controller that ran before would have.
func setUp(ctx context.Context, objects int, user, w *store.Writer[appSpec, appStatus], reconciled bool) error {
	for i := range objects {
		o := &app{
			Meta: store.Meta{Name: ctlbench.Name(i)},
			Spec: appSpec{Image: ctlbench.Image, Args: ctlbench.Args(), Selector: ctlbench.Labels(i)},
		}
		if _, err := user.Create(ctx, o); err != nil {
			return err
		}
		if reconciled {
			if _, err := w.ApplyStatus(ctx, o.Meta.Name, appStatus{}, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// holdIdle creates n objects like the workload's in a memstore of their
// own, each with a status written once by the controller (its values then
// as large as a reconciled object's), and returns a cache of them, synced,
// which runs and holds them until ctx ends (wg waits for it). Nothing
// touches them after.
func holdIdle(ctx context.Context, wg *sync.WaitGroup, n int) (*cache.Cache[appSpec, appStatus], error) {
	st, err := store.New[appSpec, appStatus](memstore.New(), "Idle")
	if err != nil {
		return nil, err
	}
	if err := setUp(ctx, n, st.As("user"), st.As("app-controller"), true); err != nil {
		return nil, err
	}
	c := cache.New(st)
	wg.Go(func() { _ = c.Run(ctx) })
	return c, c.WaitForSync(ctx)
}

// update is the other writer's update u: it reads the object, sets its
// replica count and writes it back, again on a conflict.
func update(ctx context.Context, u int, plan *ctlbench.Plan, st *store.Store[appSpec, appStatus], user *store.Writer[appSpec, appStatus], retries *atomic.Int64) error {
	i, replicas := plan.Update(u)
	name := ctlbench.Name(i)
	for {
		o, err := st.Get(ctx, name)
		if err != nil {
			return err
		}
		o.Spec.Replicas = replicas
		_, err = user.Update(ctx, o)
		if errors.Is(err, store.ErrConflict) {
			retries.Add(1)
			continue
		}
		return err
	}
}

// garbage allocates n bytes on each alloc, in 128-byte objects that
// nothing keeps past the next one: -alloc-bytes.
type garbage struct {
	n    int
	last atomic.Pointer[[128]byte] // so that the objects escape to the heap
}

func (g *garbage) alloc() {
	for range (g.n + 127) / 128 {
		g.last.Store(new([128]byte))
	}
}
