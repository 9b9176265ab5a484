//go:build linux

// Command processes keeps a real fleet of OS processes in line with specs
// in a store: N copies of a command (sleep 3600 by default), with
// deterministic names, repaired when one is killed, swept when no longer
// wanted, and stopped through owner garbage collection when their spec is
// deleted. It runs on Linux without root.
//
// The desired state is a ProcessSet in steady's memstore. A set controller
// turns it into Instance objects (name-0 … name-(N-1)), each controlled by
// the set; an instance controller makes each Instance a process, marking
// the process with an environment variable it reads back from
// /proc/<pid>/environ; reconcile/gc deletes the Instances whose set is gone.
// No controller remembers a PID: every pass scans /proc, so a restarted
// controller adopts what is running and sweeps what nobody wants.
//
// The program plays a short script and prints its timeline: a leftover
// process from an "earlier run" is swept, 3 copies start, kill -9 of one is
// repaired, the controllers restart and adopt the running processes, a scale
// to 2 sweeps one, and deleting the spec stops the rest. It exits 0 when
// every step reached its state, and kills every process it started before
// it exits, whatever happens.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/memstore"

	"github.com/steady-go/steady/examples/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cli.Exit("processes", run(ctx, os.Args[1:], os.Stdout))
}

// options are the command-line flags.
type options struct {
	fleet    string        // marks this run's processes
	set      string        // the ProcessSet's name
	replicas int           // the copies started first
	timeout  time.Duration // the longest any step may take
	command  []string
}

var fleetRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("processes", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: processes [flags] [command [args...]]   (default command: sleep 3600)")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.fleet, "fleet", "demo", "fleet name written into each process's environment; processes of other fleets are left alone")
	fs.StringVar(&o.set, "set", "web", "name of the ProcessSet")
	fs.IntVar(&o.replicas, "replicas", 3, "copies to start (the script then kills one and scales down by one)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "the longest any step may take")
	if err := cli.Parse(fs, args, true); err != nil {
		return o, err
	}
	o.command = fs.Args()
	if len(o.command) == 0 {
		o.command = []string{"sleep", "3600"}
	}
	switch {
	case !fleetRE.MatchString(o.fleet):
		return o, cli.Usagef("-fleet %q: want 1 to 40 of a-z, 0-9 and -", o.fleet)
	case store.ValidateName(o.set) != nil || len(o.set) > 60 || strings.Contains(o.set, "."):
		return o, cli.Usagef("-set %q: want a short DNS label", o.set)
	case o.replicas < 2 || o.replicas > maxReplicas:
		return o, cli.Usagef("-replicas %d: want 2 to %d", o.replicas, maxReplicas)
	case o.timeout <= 0:
		return o, cli.Usagef("-timeout %v: want a positive duration", o.timeout)
	}
	if _, err := exec.LookPath(o.command[0]); err != nil {
		return o, cli.UsageError{Err: fmt.Errorf("command %q: %w", o.command, err)}
	}
	return o, nil
}

// run plays the script and prints its timeline to w. It returns nil when
// every step reached its state. Every process it started is dead when it
// returns.
func run(ctx context.Context, args []string, w io.Writer) (err error) {
	o, err := parseFlags(args, w)
	if err != nil {
		return err
	}
	tl := &timeline{w: w, start: time.Now()}
	procs := newOSProcs(o.fleet, tl.printf)
	if left, err := procs.scan(); err != nil {
		return err
	} else if len(left) > 0 {
		// Another run's, or one that crashed without its processes
		// (see README.md): either way not ours to touch.
		return fmt.Errorf("fleet %q already has processes %v: another run is going on; pick another -fleet", o.fleet, left)
	}
	defer func() {
		err = errors.Join(err, procs.shutdown(), tl.err)
	}()

	b := memstore.New()
	sets, err := store.New[ProcessSetSpec, ProcessSetStatus](b, setKind)
	if err != nil {
		return err
	}
	insts, err := store.New[InstanceSpec, InstanceStatus](b, instanceKind)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// Watch before the script writes. A watch from 0 replays every change
	// from revision 1 on: the store is new, so that is every write of the
	// script.
	events, err := insts.Watch(ctx, 0)
	if err != nil {
		return err
	}
	wg.Go(func() { _ = followInstances(events, tl.printf) })

	s := &script{o: o, tl: tl, os: procs, sets: sets, insts: insts}
	defer func() {
		if s.ctrl != nil {
			err = errors.Join(err, s.ctrl.stop())
		}
	}()
	return s.play(ctx)
}

// script is the demo's story, step by step.
type script struct {
	o     options
	tl    *timeline
	os    *osProcs
	sets  *store.Store[ProcessSetSpec, ProcessSetStatus]
	insts *store.Store[InstanceSpec, InstanceStatus]
	ctrl  *controllers
}

const user = "user" // the manager of the script's own writes

func (s *script) play(ctx context.Context) error {
	o, log := s.o, s.tl.printf
	names := func(n int) []string {
		out := make([]string, n)
		for i := range n {
			out[i] = instanceName(o.set, i)
		}
		return out
	}

	log("== a leftover from an earlier run, before any controller starts")
	stray := instanceName(o.set, o.replicas+6)
	pid, err := s.os.start(stray, "leftover-uid", o.command)
	if err != nil {
		return err
	}
	log("   %s (pid %d) is marked for fleet %q, but no Instance %s exists", stray, pid, o.fleet, stray)

	log("== start the controllers and create ProcessSet %s: %q × %d", o.set, o.command, o.replicas)
	if err := s.startControllers(ctx); err != nil {
		return err
	}
	set := &ProcessSet{Meta: store.Meta{Name: o.set}, Spec: ProcessSetSpec{Command: o.command, Replicas: o.replicas}}
	if _, err := s.sets.As(user).Create(ctx, set); err != nil {
		return err
	}
	running, err := s.await(ctx, names(o.replicas), nil)
	if err != nil {
		return err
	}
	s.check(running, "%d running, the leftover swept", o.replicas)

	victim := running[1]
	log("== kill -9 %s (pid %d), behind the controller's back", victim.Name, victim.PID)
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		return err
	}
	running, err = s.await(ctx, names(o.replicas), func(ps []proc) bool {
		return !slices.ContainsFunc(ps, func(p proc) bool { return p.PID == victim.PID })
	})
	if err != nil {
		return err
	}
	s.check(running, "repaired: %s has a new process", victim.Name)

	log("== restart the controllers: their memory is gone, the processes stay")
	if err := s.ctrl.stop(); err != nil {
		return err
	}
	s.ctrl = nil
	before := running
	if err := s.startControllers(ctx); err != nil {
		return err
	}
	if err := s.wait(ctx, "the new controllers adopt every process", func([]proc) bool { return s.ctrl.adopted() == o.replicas }); err != nil {
		return err
	}
	running, err = s.await(ctx, names(o.replicas), nil)
	if err != nil {
		return err
	}
	if !slices.EqualFunc(before, running, func(a, b proc) bool { return a.PID == b.PID && a.Name == b.Name }) {
		return fmt.Errorf("after the restart: processes %v, want the same as before, %v", running, before)
	}
	s.check(running, "adopted: the same PIDs, nothing started")

	log("== scale ProcessSet %s to %d", o.set, o.replicas-1)
	if err := s.updateSet(ctx, func(spec *ProcessSetSpec) { spec.Replicas = o.replicas - 1 }); err != nil {
		return err
	}
	running, err = s.await(ctx, names(o.replicas-1), nil)
	if err != nil {
		return err
	}
	if err := s.awaitInstances(ctx, o.replicas-1); err != nil {
		return err
	}
	s.check(running, "swept: %s stopped and its Instance gone", instanceName(o.set, o.replicas-1))

	log("== delete ProcessSet %s: the GC deletes its Instances, their processes stop", o.set)
	if _, err := s.sets.As(user).Delete(ctx, o.set); err != nil {
		return err
	}
	running, err = s.await(ctx, nil, nil)
	if err != nil {
		return err
	}
	if err := s.awaitInstances(ctx, 0); err != nil {
		return err
	}
	s.check(running, "all gone: no process, no Instance")

	if err := s.ctrl.stop(); err != nil {
		return err
	}
	s.ctrl = nil
	log("== done")
	return nil
}

func (s *script) startControllers(ctx context.Context) error {
	c, err := startControllers(ctx, s.sets, s.insts, s.os, s.tl.printf)
	if err != nil {
		return err
	}
	s.ctrl = c
	return nil
}

// check prints a checkpoint: the fleet's processes as /proc shows them.
// Its format is what main_test.go verifies against the OS.
func (s *script) check(running []proc, format string, args ...any) {
	list := "none"
	if len(running) > 0 {
		parts := make([]string, len(running))
		for i, p := range running {
			parts[i] = p.String()
		}
		list = strings.Join(parts, " ")
	}
	s.tl.printf("✓ %s | running: %s", fmt.Sprintf(format, args...), list)
}

// await waits until the fleet's processes are exactly one for each of
// names (in that order) and extra, if not nil, holds too; it returns them.
func (s *script) await(ctx context.Context, names []string, extra func([]proc) bool) ([]proc, error) {
	var got []proc
	desc := fmt.Sprintf("exactly one process for each of %v", names)
	err := s.wait(ctx, desc, func(ps []proc) bool {
		got = ps
		if len(ps) != len(names) {
			return false
		}
		slices.SortFunc(ps, func(a, b proc) int { return strings.Compare(a.Name, b.Name) })
		for i, p := range ps {
			if p.Name != names[i] {
				return false
			}
		}
		return extra == nil || extra(ps)
	})
	return got, err
}

// awaitInstances waits until the store holds n Instances.
func (s *script) awaitInstances(ctx context.Context, n int) error {
	return s.wait(ctx, fmt.Sprintf("%d Instances in the store", n), func([]proc) bool {
		l, err := s.insts.List(ctx, store.ListOptions{})
		return err == nil && len(l.Items) == n
	})
}

// wait polls /proc until cond holds, for at most the step timeout.
func (s *script) wait(ctx context.Context, desc string, cond func([]proc) bool) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var last []proc
	for {
		ps, err := s.os.scan()
		if err != nil {
			return err
		}
		last = ps
		if cond(ps) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (running: %v)", desc, context.Cause(ctx), last)
		case <-tick.C:
		}
	}
}

// updateSet changes the ProcessSet's spec, re-reading on a conflict.
func (s *script) updateSet(ctx context.Context, change func(*ProcessSetSpec)) error {
	for {
		set, err := s.sets.Get(ctx, s.o.set)
		if err != nil {
			return err
		}
		change(&set.Spec)
		_, err = s.sets.As(user).Update(ctx, set)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
}
