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
	"time"

	"github.com/steady-go/steady/examples/internal/cli"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"
)

// main plays a user of the controller in controller.go (the README's "A
// whole controller"): it creates an App, scales it, breaks its spec, fixes
// it and deletes it, printing what the controllers made of each step.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli.Exit("readme", demo(ctx, os.Args[1:], os.Stdout))
}

// waitFor bounds each step of the demo.
const waitFor = 10 * time.Second

func demo(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("readme", flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintln(w, "usage: readme (no flags): runs the README's whole controller through a user's steps")
	}
	if err := cli.Parse(fs, args, false); err != nil {
		return err
	}
	backend := memstore.New()
	apps, err := store.New[AppSpec, AppStatus](backend, "App")
	if err != nil {
		return err
	}
	replicas, err := store.New[ReplicaSpec, ReplicaStatus](backend, "Replica")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(ctx, backend) }()
	defer func() { cancel(); <-done }()

	user := apps.As("user")
	steps := []struct {
		say  string
		do   func() error
		want func() (string, bool)
	}{
		{"create App web: 3 replicas of web:v1",
			func() error {
				_, err := user.Create(ctx, &store.Object[AppSpec, AppStatus]{Meta: store.Meta{Name: "web"}, Spec: AppSpec{Replicas: 3, Image: "web:v1"}})
				return err
			},
			readyWith(ctx, apps, replicas, []string{"web-0", "web-1", "web-2"}, "web:v1")},
		{"scale web to 1 replica of web:v2", setSpec(ctx, apps, AppSpec{Replicas: 1, Image: "web:v2"}),
			readyWith(ctx, apps, replicas, []string{"web-0"}, "web:v2")},
		{"set web's replicas to -1", setSpec(ctx, apps, AppSpec{Replicas: -1, Image: "web:v2"}),
			stalled(ctx, apps)},
		{"fix it: 2 replicas of web:v2", setSpec(ctx, apps, AppSpec{Replicas: 2, Image: "web:v2"}),
			readyWith(ctx, apps, replicas, []string{"web-0", "web-1"}, "web:v2")},
		{"delete App web",
			func() error { _, err := user.Delete(ctx, "web"); return err },
			readyWith(ctx, apps, replicas, nil, "")},
	}
	for _, s := range steps {
		fmt.Fprintf(w, "user: %s\n", s.say)
		if err := s.do(); err != nil {
			return err
		}
		deadline := time.Now().Add(waitFor)
		for {
			got, ok := s.want()
			if ok {
				fmt.Fprintf(w, "  controllers: %s\n", got)
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("not converged %v after %q: %s", waitFor, s.say, got)
			}
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case err := <-done:
				return fmt.Errorf("controllers stopped: %w", err)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return nil
}

// setSpec replaces the spec of App web, as its user.
func setSpec(ctx context.Context, apps *store.Store[AppSpec, AppStatus], spec AppSpec) func() error {
	return func() error {
		app, err := apps.Get(ctx, "web")
		if err != nil {
			return err
		}
		app.Spec = spec
		_, err = apps.As("user").Update(ctx, app)
		return err
	}
}

// readyWith reports, read from the store, whether the Replicas are exactly
// names, each at image and controlled by App web, and web (unless names is
// empty: then web is gone) is Ready at its generation with that count.
func readyWith(ctx context.Context, apps *store.Store[AppSpec, AppStatus], replicas *store.Store[ReplicaSpec, ReplicaStatus],
	names []string, image string) func() (string, bool) {
	return func() (string, bool) {
		list, err := replicas.List(ctx, store.ListOptions{})
		if err != nil {
			return err.Error(), false
		}
		var got []string
		for _, r := range list.Items {
			got = append(got, r.Meta.Name)
			if i := slices.IndexFunc(r.Meta.Owners, func(o store.OwnerRef) bool { return o.Controller }); i < 0 || r.Meta.Owners[i].Name != "web" || r.Spec.Image != image {
				return fmt.Sprintf("replica %s: image %q, owners %v", r.Meta.Name, r.Spec.Image, r.Meta.Owners), false
			}
		}
		if !slices.Equal(got, names) {
			return fmt.Sprintf("replicas %v, want %v", got, names), false
		}
		app, err := apps.Get(ctx, "web")
		if len(names) == 0 {
			if !errors.Is(err, store.ErrNotFound) {
				return fmt.Sprintf("web not deleted yet (%v)", err), false
			}
			return "web's replicas are gone (garbage collected)", true
		}
		if err != nil {
			return err.Error(), false
		}
		ready, stalled := readyAt(app), isStalled(app)
		if !ready || stalled || app.Status.Replicas != len(names) {
			return fmt.Sprintf("web: Ready=%v, Stalled=%v, status %+v", ready, stalled, app.Status), false
		}
		return fmt.Sprintf("replicas %v at %s, each controlled by web; web Ready at generation %d, status %+v",
			got, image, app.Meta.Generation, app.Status), true
	}
}

// stalled reports whether App web is Stalled at its current generation.
func stalled(ctx context.Context, apps *store.Store[AppSpec, AppStatus]) func() (string, bool) {
	return func() (string, bool) {
		app, err := apps.Get(ctx, "web")
		if err != nil {
			return err.Error(), false
		}
		for _, c := range app.Conditions {
			if isStalled(app) && c.Type == conditions.Stalled {
				return fmt.Sprintf("web Stalled, reason %s: %s", c.Reason, c.Message), true
			}
		}
		return "web not Stalled yet", false
	}
}

// isStalled reports whether app has Stalled=True.
func isStalled(app *store.Object[AppSpec, AppStatus]) bool {
	return slices.ContainsFunc(app.Conditions, func(c store.Condition) bool {
		return c.Type == conditions.Stalled && c.Status == store.ConditionTrue
	})
}

// readyAt reports whether app is Ready=True at its current generation.
func readyAt(app *store.Object[AppSpec, AppStatus]) bool {
	for _, c := range app.Conditions {
		if c.Type == conditions.Ready {
			return c.Status == store.ConditionTrue && c.ObservedGeneration == app.Meta.Generation
		}
	}
	return false
}
