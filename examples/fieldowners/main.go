// Command fieldowners shows two controllers that claim the same field, the
// first of the essay's three oscillation patterns, and what steady does about
// it in both designs:
//
//  1. Without field ownership both controllers read the object and Update
//     .spec.replicas to their own default (3 and 2). Each write undoes the
//     other's; the Loop's oscillation detector notices that it keeps
//     re-setting a field another manager changed and reports the fight as
//     Stalled, reason Oscillating, naming the path.
//  2. With field ownership both controllers Apply the field. The first owns
//     it; the second's apply is refused with an *ownership.ConflictError
//     naming the owner and the path, nothing is written, and nothing flaps.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/reconcile/oscillation"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"

	"github.com/steady-go/steady/examples/internal/cli"
)

// Spec and Status of the demo's kind, App.
type (
	Spec struct {
		Image    string `json:"image,omitempty"`
		Replicas *int   `json:"replicas,omitempty"`
	}
	Status struct{}
	App    = store.Object[Spec, Status]
)

const (
	appName   = "web"
	replicas  = ".spec.replicas"
	managerA  = "defaulter-a"
	managerB  = "defaulter-b"
	defaultA  = 3
	defaultB  = 2
	oscWindow = 3 * time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli.Exit("fieldowners", run(ctx, os.Args[1:], os.Stdout))
}

// run plays both scenes and prints what happened to w. It returns nil when
// the fight was reported with its path and the owned field did not flap.
func run(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("fieldowners", flag.ContinueOnError)
	fs.SetOutput(w)
	quiet := fs.Duration("quiet", time.Second, "how long scene 2 watches for writes after the conflict")
	timeout := fs.Duration("timeout", 20*time.Second, "give up on a scene after this long")
	if err := cli.Parse(fs, args, false); err != nil {
		return err
	}
	if *quiet <= 0 || *timeout <= 0 {
		return cli.Usagef("-quiet %v, -timeout %v: both must be positive", *quiet, *timeout)
	}
	fightErr := fight(ctx, w, *timeout)
	fmt.Fprintln(w)
	ownedErr := owned(ctx, w, *quiet, *timeout)
	fmt.Fprintln(w)
	if err := errors.Join(fightErr, ownedErr); err != nil {
		return err
	}
	fmt.Fprintln(w, "Both behaved as described: without ownership the fight is reported; with it, a conflict is, and nothing flaps.")
	return nil
}

// fight is scene 1: both controllers Update the field.
func fight(ctx context.Context, w io.Writer, timeout time.Duration) error {
	fmt.Fprintln(w, "1. Without field ownership: both controllers Update .spec.replicas")
	fmt.Fprintf(w, "   %s wants %d replicas, %s wants %d; each reads the object and writes its default back.\n",
		managerA, defaultA, managerB, defaultB)
	e, err := newScene(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = e.stop() }()
	a, b := e.defaulter(managerA, defaultA, false), e.defaulter(managerB, defaultB, false)
	if err := e.start(a, b); err != nil {
		return err
	}
	stalled, err := e.waitFor(timeout, func(obj *App) (store.Condition, bool) {
		for _, m := range []string{managerA, managerB} {
			if c, ok := conditions.Get(obj.Conditions, stalledType(m)); ok && c.Status == store.ConditionTrue && c.Reason == conditions.ReasonOscillating {
				return c, true
			}
		}
		return store.Condition{}, false
	})
	if err != nil {
		return fmt.Errorf("scene 1: the fight was not reported: %w", err)
	}
	if err := e.stop(); err != nil {
		return err
	}
	fmt.Fprintf(w, "   .spec.replicas went %s\n", e.history())
	fmt.Fprintf(w, "   writes to .spec: %s %d, %s %d\n", managerA, a.writes.Load(), managerB, b.writes.Load())
	fmt.Fprintf(w, "   condition %s=True  reason=%s\n     message: %q\n", stalled.Type, stalled.Reason, stalled.Message)
	if !strings.Contains(stalled.Message, replicas) {
		return fmt.Errorf("scene 1: the Stalled message %q does not name %s", stalled.Message, replicas)
	}
	fmt.Fprintln(w, "   → the fight is detected, and reported with the flipping path.")
	return nil
}

// owned is scene 2: both controllers Apply the field.
func owned(ctx context.Context, w io.Writer, quiet, timeout time.Duration) error {
	fmt.Fprintln(w, "2. With field ownership: both controllers Apply .spec.replicas")
	e, err := newScene(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = e.stop() }()
	a, b := e.defaulter(managerA, defaultA, true), e.defaulter(managerB, defaultB, true)
	if err := e.start(a); err != nil {
		return err
	}
	if _, err := e.waitFor(timeout, func(obj *App) (store.Condition, bool) {
		return store.Condition{}, obj.Spec.Replicas != nil && *obj.Spec.Replicas == defaultA
	}); err != nil {
		return fmt.Errorf("scene 2: %s did not apply: %w", managerA, err)
	}
	// The cache can show a's write before a's reconcile has counted it: wait
	// for the count, so the quiet window below sees only later writes.
	for deadline := time.Now().Add(timeout); a.writes.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("scene 2: %s's write was not counted after %v", managerA, timeout)
		}
	}
	fmt.Fprintf(w, "   %s applied replicas=%d, and so owns %s\n", managerA, defaultA, replicas)

	if err := e.start(b); err != nil {
		return err
	}
	stalled, err := e.waitFor(timeout, func(obj *App) (store.Condition, bool) {
		c, ok := conditions.Get(obj.Conditions, stalledType(managerB))
		return c, ok && c.Status == store.ConditionTrue
	})
	if err != nil {
		return fmt.Errorf("scene 2: %s's conflict was not reported: %w", managerB, err)
	}
	conflict := b.lastConflict.Load()
	if conflict == nil {
		return fmt.Errorf("scene 2: %s is Stalled (%s: %s) without an ownership conflict", managerB, stalled.Reason, stalled.Message)
	}
	for _, c := range conflict.Conflicts {
		fmt.Fprintf(w, "   %s's apply of replicas=%d is refused: %s owns %s (*ownership.ConflictError)\n",
			managerB, defaultB, c.Manager, c.Path)
	}
	fmt.Fprintf(w, "   condition %s=True  reason=%s\n     message: %q\n", stalled.Type, stalled.Reason, stalled.Message)

	before, gen := a.writes.Load()+b.writes.Load(), e.generation()
	time.Sleep(quiet)
	after, genAfter := a.writes.Load()+b.writes.Load(), e.generation()
	if err := e.stop(); err != nil {
		return err
	}
	fmt.Fprintf(w, "   writes to .spec: %s %d, %s %d; in the %v after the conflict: %d (generation %d → %d)\n",
		managerA, a.writes.Load(), managerB, b.writes.Load(), quiet, after-before, gen, genAfter)
	fmt.Fprintf(w, "   .spec.replicas went %s\n", e.history())

	var errs []error
	if !slices.ContainsFunc(conflict.Conflicts, func(c ownership.Conflict) bool {
		return c.Manager == managerA && c.Path.String() == replicas
	}) {
		errs = append(errs, fmt.Errorf("scene 2: the conflict %v does not name (%s, %s)", conflict, managerA, replicas))
	}
	if b.writes.Load() != 0 || after != before || genAfter != gen {
		errs = append(errs, fmt.Errorf("scene 2: the field flapped: %d writes by %s, %d after the conflict",
			b.writes.Load(), managerB, after-before))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintln(w, "   → the disagreement is a reported conflict, and nothing flaps.")
	return nil
}

// scene is one store, one cache of App, and the Loops of a scene.
type scene struct {
	ctx    context.Context
	cancel context.CancelFunc
	g      *errgroup.Group
	st     *store.Store[Spec, Status]
	cache  *cache.Cache[Spec, Status]
	notify chan struct{}

	mu     sync.Mutex
	values []string // the successive values of .spec.replicas
	once   sync.Once
	err    error
}

func newScene(ctx context.Context) (*scene, error) {
	st, err := store.New[Spec, Status](memstore.New(), "App")
	if err != nil {
		return nil, err
	}
	app := &App{Meta: store.Meta{Name: appName}, Spec: Spec{Image: "web:1.0"}}
	if _, err := st.As("user").Create(ctx, app); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(ctx)
	e := &scene{ctx: gctx, cancel: cancel, g: g, st: st, cache: cache.New(st), notify: make(chan struct{}, 1)}
	e.cache.AddHandler(func(old, new *App) {
		if new == nil {
			return
		}
		if old == nil || replicasOf(old) != replicasOf(new) {
			e.record(new)
		}
		select {
		case e.notify <- struct{}{}:
		default:
		}
	})
	g.Go(func() error { return e.cache.Run(gctx) })
	return e, nil
}

func replicasOf(obj *App) string {
	if obj.Spec.Replicas == nil {
		return "unset"
	}
	return fmt.Sprint(*obj.Spec.Replicas)
}

func (e *scene) record(obj *App) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.values = append(e.values, replicasOf(obj))
}

// history formats the values .spec.replicas took, eliding the middle of a
// long fight.
func (e *scene) history() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := e.values
	if len(v) > 12 {
		return strings.Join(v[:8], " → ") + fmt.Sprintf(" → … (%d values in all) → ", len(v)) + strings.Join(v[len(v)-2:], " → ")
	}
	return strings.Join(v, " → ")
}

func (e *scene) generation() int64 {
	obj, ok := e.cache.Get(appName)
	if !ok {
		return 0
	}
	return obj.Meta.Generation
}

// defaulter makes a controller that sets .spec.replicas to want, with
// Update or with Apply.
func (e *scene) defaulter(manager string, want int, apply bool) *defaulter {
	return &defaulter{manager: manager, want: want, apply: apply, st: e.st, cache: e.cache}
}

// start runs a Loop for each controller.
func (e *scene) start(ds ...*defaulter) error {
	for _, d := range ds {
		src := reconcile.WithConditionWriter(reconcile.FromStore(e.cache, e.st, reconcile.WithChanges(fieldChanges)),
			newPerLoopStalled(e.cache, e.st, d.manager))
		loop, err := reconcile.New(d.manager, d, src, reconcile.WithOscillation(oscillation.Config{Window: oscWindow}))
		if err != nil {
			return err
		}
		e.g.Go(func() error { return loop.Run(e.ctx) })
	}
	return nil
}

// waitFor waits until match accepts the cached object, and returns the
// condition it picked.
func (e *scene) waitFor(timeout time.Duration, match func(*App) (store.Condition, bool)) (store.Condition, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if obj, ok := e.cache.Get(appName); ok {
			if c, ok := match(obj); ok {
				return c, nil
			}
		}
		select {
		case <-e.notify:
		case <-deadline.C:
			return store.Condition{}, fmt.Errorf("nothing after %v", timeout)
		case <-e.ctx.Done():
			return store.Condition{}, context.Cause(e.ctx)
		}
	}
}

// stop ends the scene's Loops and cache, waits for them and returns the
// first error one of them failed with; it may be called more than once.
func (e *scene) stop() error {
	e.once.Do(func() {
		e.cancel()
		e.err = e.g.Wait()
	})
	return e.err
}

// defaulter is a controller that sets .spec.replicas to its default.
type defaulter struct {
	manager string
	want    int
	apply   bool
	st      *store.Store[Spec, Status]
	cache   *cache.Cache[Spec, Status]

	writes       atomic.Int64
	lastConflict atomic.Pointer[ownership.ConflictError]
}

func (d *defaulter) Reconcile(ctx context.Context, name string) (reconcile.Result, error) {
	obj, ok := d.cache.Get(name)
	if !ok {
		return reconcile.Result{}, nil
	}
	if d.apply {
		// Only the fields present in the config are applied (and owned):
		// here .spec.replicas alone. Apply creates what does not exist, and
		// the cache may still show an App that was deleted since (a restart
		// against a lagging replica): WithRevision makes the apply fail with
		// ErrConflict unless the App is still the one read. The Loop retries
		// a conflict, and the next read finds it gone, or current.
		want := d.want
		res, err := d.st.As(d.manager).Apply(ctx, name, Spec{Replicas: &want}, store.WithRevision(obj.Meta.Revision))
		if c, ok := errors.AsType[*ownership.ConflictError](err); ok {
			d.lastConflict.Store(c)
			// Retrying a field conflict gives the same answer: report it and
			// wait for the next change instead.
			return reconcile.Result{}, reconcile.Terminal(err)
		}
		if res.Changed {
			d.writes.Add(1)
			reconcile.RecordWrite(ctx, res.Revision)
		}
		return reconcile.Result{}, err
	}
	if obj.Spec.Replicas != nil && *obj.Spec.Replicas == d.want {
		return reconcile.Result{}, nil
	}
	next := *obj // cached objects are shared: change a copy
	want := d.want
	next.Spec.Replicas = &want
	if _, err := d.st.As(d.manager).Update(ctx, &next); err != nil {
		return reconcile.Result{}, err
	}
	d.writes.Add(1)
	return reconcile.Result{}, nil
}
