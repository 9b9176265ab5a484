// Command unreconcilable shows what steady does with an object that cannot
// be reconciled yet: an app that references a secret which does not exist.
//
// The Loop marks the app Stalled at once, with a reason, a message and a
// timestamp, and retries it with exponential backoff that stops growing at a
// cap. When the secret is created, a mapped source (secret → every app that
// references it, through a cache index) wakes the app straight away: it
// converges within milliseconds, not at the next backoff retry.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/steady-go/steady/backoff"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/memstore"

	"github.com/steady-go/steady/examples/internal/cli"
)

// The two kinds of the demo.
type (
	AppSpec struct {
		Image     string `json:"image"`
		SecretRef string `json:"secretRef"`
	}
	AppStatus struct {
		// SecretRevision is the revision of the secret the app was last
		// configured with.
		SecretRevision int64 `json:"secretRevision,omitempty"`
	}
	SecretSpec struct {
		Data map[string]string `json:"data"`
	}
	SecretStatus struct{}

	App    = store.Object[AppSpec, AppStatus]
	Secret = store.Object[SecretSpec, SecretStatus]
)

const (
	appName    = "billing"
	secretName = "billing-db"
	// secretIndex files each app under the name of the secret it references.
	secretIndex = "secretRef"
	// convergeWithin is the promise the demo checks.
	convergeWithin = time.Second
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli.Exit("unreconcilable", run(ctx, os.Args[1:], os.Stdout))
}

// options are the command-line flags.
type options struct {
	cap    time.Duration // backoff cap
	capped int           // retries at the cap to show before the secret appears
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("unreconcilable", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.DurationVar(&o.cap, "cap", 2*time.Second, "backoff cap: no retry waits longer than this")
	fs.IntVar(&o.capped, "capped", 2, "how many retries at the cap to show before the secret is created")
	if err := cli.Parse(fs, args, false); err != nil {
		return o, err
	}
	if o.cap < 20*time.Millisecond || o.cap > time.Minute {
		return o, cli.Usagef("-cap %v: want between 20ms and 1m", o.cap)
	}
	if o.capped < 1 || o.capped > 10 {
		return o, cli.Usagef("-capped %d: want between 1 and 10", o.capped)
	}
	return o, nil
}

// attempt is one call of the reconciler, as the timeline shows it.
type attempt struct {
	at  time.Time
	err error
}

// run sets up the store, the caches and the Loop, plays the story and
// prints its timeline to w. It returns nil when the app converged within
// convergeWithin of the secret's creation and every retry waited at most
// the cap.
func run(ctx context.Context, args []string, w io.Writer) error {
	o, err := parseFlags(args, w)
	if err != nil {
		return err
	}
	policy := backoff.Policy{Base: o.cap / 20, Factor: 2, Cap: o.cap, Jitter: 0.2}

	backend := memstore.New()
	apps, err := store.New[AppSpec, AppStatus](backend, "App")
	if err != nil {
		return err
	}
	secrets, err := store.New[SecretSpec, SecretStatus](backend, "Secret")
	if err != nil {
		return err
	}
	appCache := cache.New(apps)
	secretCache := cache.New(secrets)
	if err := appCache.AddIndex(secretIndex, func(a *App) []string { return []string{a.Spec.SecretRef} }); err != nil {
		return err
	}

	attempts := make(chan attempt, 64)
	r := &appReconciler{apps: appCache, secrets: secretCache, st: apps, attempts: attempts}
	// A secret's change is a hint for every app that references it.
	dependents := reconcile.FromCacheMapped(secretCache, func(s *Secret) []string {
		var names []string
		for _, a := range appCache.ByIndex(secretIndex, s.Meta.Name) {
			names = append(names, a.Meta.Name)
		}
		return names
	})
	loop, err := reconcile.New("app-controller", r,
		reconcile.Sources(reconcile.FromStore(appCache, apps), dependents),
		reconcile.WithBackoff(policy),
		// No resync during the demo: what wakes the app must be the secret.
		reconcile.WithResync(time.Hour, 0.1),
	)
	if err != nil {
		return err
	}

	changed := make(chan struct{}, 1)
	appCache.AddHandler(func(_, _ *App) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(runCtx)
	g.Go(func() error { return appCache.Run(gctx) })
	g.Go(func() error { return secretCache.Run(gctx) })
	g.Go(func() error { return loop.Run(gctx) })

	s := &story{w: w, o: o, start: time.Now(), loop: loop, apps: appCache, secrets: secrets,
		attempts: attempts, changed: changed, tolerance: o.cap / 10}
	playErr := s.play(gctx, apps)
	cancel()
	if err := g.Wait(); err != nil && playErr == nil {
		playErr = err
	}
	return playErr
}

// appReconciler configures an app with its secret, or reports that it is
// blocked on the secret.
type appReconciler struct {
	apps     *cache.Cache[AppSpec, AppStatus]
	secrets  *cache.Cache[SecretSpec, SecretStatus]
	st       *store.Store[AppSpec, AppStatus]
	attempts chan<- attempt
}

func (r *appReconciler) Reconcile(ctx context.Context, name string) (res reconcile.Result, err error) {
	defer func() {
		select {
		case r.attempts <- attempt{at: time.Now(), err: err}:
		default:
		}
	}()
	app, ok := r.apps.Get(name)
	if !ok {
		return reconcile.Result{}, nil // gone: nothing to do
	}
	secret, ok := r.secrets.Get(app.Spec.SecretRef)
	if !ok {
		return reconcile.Result{}, reconcile.Blocked("SecretMissing",
			fmt.Errorf("secret %q not found", app.Spec.SecretRef))
	}
	// Configure the app (here: record which secret revision it uses) and
	// report Ready. Cached objects are shared: change a copy.
	next := *app
	next.Status.SecretRevision = secret.Meta.Revision
	if _, err := conditions.Set(&next.Conditions, store.Condition{
		Type: conditions.Ready, Status: store.ConditionTrue, Reason: "Configured",
		Message: fmt.Sprintf("using secret %q", secret.Meta.Name), ObservedGeneration: app.Meta.Generation,
	}, time.Now()); err != nil {
		return reconcile.Result{}, err
	}
	_, err = r.st.As("app-controller").UpdateStatus(ctx, &next)
	return reconcile.Result{}, err
}

// story drives the demo and prints its timeline.
type story struct {
	w        io.Writer
	o        options
	start    time.Time
	loop     *reconcile.Loop[string]
	apps     *cache.Cache[AppSpec, AppStatus]
	secrets  *store.Store[SecretSpec, SecretStatus]
	attempts <-chan attempt
	changed  <-chan struct{}

	// The timeline so far.
	last      time.Time       // the last attempt
	gaps      []time.Duration // between consecutive attempts
	atCap     int             // failed attempts that waited the whole cap
	created   time.Time       // when the secret was created
	readySeen bool            // the app was seen Ready
	tolerance time.Duration   // scheduling slack of a real clock

	mu sync.Mutex
}

func (s *story) printf(at time.Time, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "%8.3fs  %s\n", at.Sub(s.start).Seconds(), fmt.Sprintf(format, args...))
}

func (s *story) play(ctx context.Context, apps *store.Store[AppSpec, AppStatus]) error {
	fmt.Fprintf(s.w, "An app references a secret that does not exist yet (backoff cap %v).\n\n", s.o.cap)
	app := &App{Meta: store.Meta{Name: appName}, Spec: AppSpec{Image: "billing:1.4", SecretRef: secretName}}
	if _, err := apps.As("user").Create(ctx, app); err != nil {
		return err
	}
	s.printf(time.Now(), "created app %q, which needs secret %q", appName, secretName)

	stalledSeen := false
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped before the app converged: %w", context.Cause(ctx))
		case <-s.changed:
			// Attempts first: the timeline is in the order things happened.
			for drained := false; !drained; {
				select {
				case a := <-s.attempts:
					if err := s.attempt(ctx, a); err != nil {
						return err
					}
				default:
					drained = true
				}
			}
			obj, ok := s.apps.Get(appName)
			if !ok {
				continue
			}
			if c, ok := conditions.Get(obj.Conditions, conditions.Stalled); ok && c.Status == store.ConditionTrue && !stalledSeen {
				stalledSeen = true
				s.printf(time.Now(), "app is Stalled=True  reason=%s  message=%q  since %s",
					c.Reason, c.Message, c.LastTransitionTime.UTC().Format("15:04:05.000Z"))
			}
			if s.created.IsZero() {
				continue
			}
			ready, _ := conditions.Get(obj.Conditions, conditions.Ready)
			if ready.Status == store.ConditionTrue && !s.readySeen {
				s.readySeen = true
				s.printf(time.Now(), "app is Ready=True  reason=%s  message=%q", ready.Reason, ready.Message)
			}
			stalled, _ := conditions.Get(obj.Conditions, conditions.Stalled)
			if !s.readySeen || stalled.Status == store.ConditionTrue {
				continue
			}
			took := time.Since(s.created)
			s.printf(time.Now(), "app is Stalled=%s  reason=%s  since %s", stalled.Status, stalled.Reason,
				stalled.LastTransitionTime.UTC().Format("15:04:05.000Z"))
			return s.verdict(took)
		case a := <-s.attempts:
			if err := s.attempt(ctx, a); err != nil {
				return err
			}
		}
	}
}

// attempt adds one reconcile to the timeline, and creates the secret once
// enough retries waited the whole cap.
func (s *story) attempt(ctx context.Context, a attempt) error {
	n := len(s.gaps) + 1
	if s.last.IsZero() {
		s.printf(a.at, "attempt %d: %v", n, describe(a.err))
	} else {
		gap := a.at.Sub(s.last)
		s.gaps = append(s.gaps, gap)
		n = len(s.gaps) + 1
		note := ""
		if gap >= s.o.cap && a.err != nil { // a timer never fires early
			s.atCap++
			note = "  (the cap)"
		}
		s.printf(a.at, "attempt %d, %v after the last: %v%s", n, gap.Round(time.Millisecond), describe(a.err), note)
	}
	s.last = a.at
	if a.err == nil || s.atCap < s.o.capped || !s.created.IsZero() {
		return nil
	}
	// Create the secret shortly after a retry at the cap, so the next
	// backoff retry is almost a whole cap away.
	time.Sleep(s.o.cap / 20)
	info := s.loop.Inspect(appName)
	sec := &Secret{Meta: store.Meta{Name: secretName}, Spec: SecretSpec{Data: map[string]string{"password": "hunter2"}}}
	if _, err := s.secrets.As("user").Create(ctx, sec); err != nil {
		return err
	}
	s.created = time.Now()
	s.printf(s.created, "created secret %q (the Loop holds %d failures; next backoff retry due in %v)", secretName,
		info.Failures, info.Until.Sub(s.created).Round(time.Millisecond))
	return nil
}

// verdict prints the summary and returns an error if a promise was broken.
func (s *story) verdict(took time.Duration) error {
	longest := time.Duration(0)
	for _, g := range s.gaps[:len(s.gaps)-1] { // the last gap ended with the secret's hint
		longest = max(longest, g)
	}
	fmt.Fprintf(s.w, "\nConverged (Ready, no longer Stalled) %v after the secret was created, through the secret → app mapping (promise: within %v).\n",
		took.Round(time.Microsecond), convergeWithin)
	fmt.Fprintf(s.w, "Longest wait between failed retries: %v (cap %v; anything over it is timer latency).\n",
		longest.Round(time.Millisecond), s.o.cap)
	var errs []string
	if took > convergeWithin {
		errs = append(errs, fmt.Sprintf("converged %v after the secret was created, more than %v", took, convergeWithin))
	}
	if longest > s.o.cap+s.tolerance {
		errs = append(errs, fmt.Sprintf("a retry waited %v, more than the cap %v", longest, s.o.cap))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func describe(err error) string {
	if err == nil {
		return "configured"
	}
	return err.Error()
}
