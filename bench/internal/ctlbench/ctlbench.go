// Package ctlbench is what the two sides of the controller-shaped benchmark
// (cmd/ctl-steady, cmd/ctl-clientgo) share: the workload's parameters and
// data, the meter, and the one-line report controller.sh parses. It imports
// neither steady nor client-go, so each side's process holds only its own
// library.
package ctlbench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is the workload, the same on both sides.
type Config struct {
	Objects    int           // objects in the store and the cache
	Updates    int           // spec updates by the other writer
	Workers    int           // reconcile workers
	Timeout    time.Duration // longest wait for the drain before giving up
	Profile    string        // file for a CPU profile of the timed phase; "" for none
	MemProfile string        // file for an allocation profile at the drain; "" for none
	// HeapProfile is the file for a heap profile taken when the heap a GC
	// found live was at its highest during the timed phase (what the
	// process kept alive at its peak, by call site); "" for none.
	HeapProfile string
}

// Flags registers the workload's flags on fs and returns the Config they
// fill once fs is parsed.
func Flags(fs *flag.FlagSet) *Config {
	c := &Config{}
	fs.IntVar(&c.Objects, "objects", 10_000, "objects in the store (10k, 100k, 1M)")
	fs.IntVar(&c.Updates, "updates", 50_000, "spec updates by the other writer")
	fs.IntVar(&c.Workers, "workers", 4, "reconcile workers")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Minute, "give up if the drain takes longer")
	fs.StringVar(&c.Profile, "cpuprofile", "", "write a CPU profile of the timed phase (the updates and the drain) to this file")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write an allocation profile (set-up included) to this file at the drain")
	fs.StringVar(&c.HeapProfile, "heapprofile", "", "write a heap profile to this file, taken when the live heap was at its highest during the timed phase (costs time at each new high), and one of the heap before it to this file.setup")
	return c
}

// Validate reports a Config the workload cannot run. With a heap profile
// asked for, it also samples an allocation every 4 KiB instead of every
// 512 KiB, from here on, so that the profile resolves the call sites that
// hold a few hundred KiB: each side calls it before it builds anything.
func (c *Config) Validate() error {
	if c.Objects < 1 || c.Updates < 0 || c.Workers < 1 || c.Timeout <= 0 {
		return fmt.Errorf("ctlbench: need objects ≥ 1, updates ≥ 0, workers ≥ 1, timeout > 0; got %+v", *c)
	}
	if c.HeapProfile != "" {
		runtime.MemProfileRate = 4096
	}
	return nil
}

// Name is the name of object i on both sides.
func Name(i int) string { return "app-" + strconv.Itoa(i) }

// Index is the inverse of Name: -1 for a name Name never returns.
func Index(name string) int {
	s, ok := strings.CutPrefix(name, "app-")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return i
}

// The spec's content, the same on both sides: with the replica count and
// the selector it encodes to about 200 bytes of JSON as steady stores it,
// and to the same fields in kubefake.App, a custom resource, on
// client-go's side.
const (
	Image = "registry.example.com/platform/web-frontend:v1.27.3"
)

// Args are the container's arguments.
func Args() []string {
	return []string{"--listen=:8080", "--log-level=info", "--config=/etc/web/config.yaml"}
}

// Labels are the selector's labels of object i.
func Labels(i int) map[string]string {
	return map[string]string{"app": "web", "shard": strconv.Itoa(i % 64)}
}

// Plan is the writer's schedule: update u (0-based) sets the replica count
// of object u mod Objects to u+1, so every update changes the spec and the
// last value each object gets is known in advance. Objects start at 0
// replicas with a status that matches, so the first pass writes nothing.
type Plan struct {
	final   []int64       // the last replica count each object is given; 0 if none
	reached []atomic.Bool // the reconciler wrote the status of the final count
	left    atomic.Int64  // objects still to reach their final count
	done    chan struct{}
}

// NewPlan returns the plan of c.
func NewPlan(c *Config) *Plan {
	p := &Plan{final: make([]int64, c.Objects), reached: make([]atomic.Bool, c.Objects), done: make(chan struct{})}
	touched := 0
	for u := range c.Updates {
		i := u % c.Objects
		if p.final[i] == 0 {
			touched++
		}
		p.final[i] = int64(u + 1)
	}
	p.left.Store(int64(touched))
	if touched == 0 {
		close(p.done)
	}
	return p
}

// Update returns the object and replica count of update u.
func (p *Plan) Update(u int) (obj int, replicas int64) {
	return u % len(p.final), int64(u + 1)
}

// Wrote records that the status of object name now shows replicas.
func (p *Plan) Wrote(name string, replicas int64) {
	i := Index(name)
	// An object the writer never touches has final 0, which its first
	// pass also shows; it has nothing to drain.
	if i < 0 || i >= len(p.final) || p.final[i] == 0 || p.final[i] != replicas || !p.reached[i].CompareAndSwap(false, true) {
		return
	}
	if p.left.Add(-1) == 0 {
		close(p.done)
	}
}

// Done is closed once every updated object's status shows its final spec:
// the workload has drained.
func (p *Plan) Done() <-chan struct{} { return p.done }

// Left is the number of objects not yet drained.
func (p *Plan) Left() int64 { return p.left.Load() }

// Meter measures the timed phase, from the first spec update to the drain.
type Meter struct {
	start      time.Time
	cpu0       time.Duration
	allocs0    uint64
	gc0        uint64
	bytes0     uint64
	peak       atomic.Uint64
	peakLive   atomic.Uint64
	stop       chan struct{}
	wg         sync.WaitGroup
	setupHeap  uint64
	samplePace time.Duration
	// atPeak, when not nil, holds the heap profile taken at the highest
	// live heap so far; only the sampler's goroutine writes it until Stop.
	atPeak   *bytes.Buffer
	profiled uint64 // the live heap atPeak was taken at
}

var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/gc/heap/allocs:objects", "/gc/heap/allocs:bytes", "/gc/heap/live:bytes"}

// gcCycles returns the GC cycles completed so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// readHeap returns the heap's objects (live, and dead ones not yet swept),
// the allocations so far, and the heap the last GC found live.
func readHeap() (heap, allocs, bytes, marked uint64) {
	s := make([]metrics.Sample, len(heapMetrics))
	for i, n := range heapMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64()
}

// Start begins the timed phase. The peak heap is sampled every 5ms from
// here on (runtime/metrics, no stop-the-world); the process's peak RSS
// (VmHWM) covers the whole run, set-up included.
func Start() *Meter { return start(false) }

// start is Start; with heapProfile, the Meter also keeps the heap profile
// taken at the highest live heap (see Config.HeapProfile).
func start(heapProfile bool) *Meter {
	m := &Meter{stop: make(chan struct{}), samplePace: 5 * time.Millisecond}
	if heapProfile {
		m.atPeak = &bytes.Buffer{}
	}
	heap, allocs, bytes, marked := readHeap()
	m.setupHeap, m.allocs0, m.bytes0 = heap, allocs, bytes
	m.peak.Store(heap)
	m.peakLive.Store(marked)
	m.wg.Go(func() {
		t := time.NewTicker(m.samplePace)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sample()
			}
		}
	})
	m.gc0 = gcCycles()
	m.cpu0 = cpuTime()
	m.start = time.Now()
	return m
}

func (m *Meter) sample() {
	heap, _, _, marked := readHeap()
	raise(&m.peak, heap)
	if raise(&m.peakLive, marked) && m.atPeak != nil && marked > m.profiled+m.profiled/32 {
		// The heap profile's in-use figures are those of the last
		// completed GC, the one that found marked live. Writing one takes
		// long enough to change the run: only a high 3% over the last
		// one's is profiled.
		m.atPeak.Reset()
		_ = pprof.Lookup("heap").WriteTo(m.atPeak, 0)
		m.profiled = marked
	}
}

// raise makes p at least v, and reports whether it rose.
func raise(p *atomic.Uint64, v uint64) bool {
	for {
		old := p.Load()
		if v <= old {
			return false
		}
		if p.CompareAndSwap(old, v) {
			return true
		}
	}
}

// Report is one side's figures for one run.
type Report struct {
	Side      string
	Objects   int
	Updates   int
	Wall      time.Duration // first update to drain
	CPU       time.Duration // process user+sys over the same span
	Allocs    uint64        // heap allocations over the same span
	Bytes     uint64        // heap bytes allocated over the same span
	PeakHeap  uint64        // highest heap sampled (live objects and dead ones not yet swept), set-up included
	PeakLive  uint64        // highest heap a GC found live, set-up included: PeakHeap less the GC's slack (up to GOGC% more)
	SetupHeap uint64        // live heap when the timed phase began
	DrainLive uint64        // live heap after a GC at the drain: what the run keeps, its garbage gone
	HWM       uint64        // peak resident set of the process (VmHWM), bytes
	Conflicts int64         // status writes the store rejected as stale
	Retries   int64         // the writer's spec updates retried on a conflict
	Relists   int64         // full relists of the cache during the run (-1: not known)
	Expired   int64         // the cache's watches and listings that ended expired (ErrExpired: fell out of the backend's history), the usual cause of a relist (-1: not known)
	Passes    int64         // reconcile passes over the same span
	GCCycles  uint64        // GC cycles completed over the same span
}

// Stop ends the timed phase and fills r's measured fields.
func (m *Meter) Stop(r *Report) {
	r.Wall = time.Since(m.start)
	r.CPU = cpuTime() - m.cpu0
	r.GCCycles = gcCycles() - m.gc0
	_, allocs, bytes, _ := readHeap()
	close(m.stop)
	m.wg.Wait()
	m.sample()
	r.Allocs, r.Bytes = allocs-m.allocs0, bytes-m.bytes0
	r.PeakHeap, r.PeakLive, r.SetupHeap = m.peak.Load(), m.peakLive.Load(), m.setupHeap
	r.HWM = vmHWM()
	runtime.GC()
	_, _, _, r.DrainLive = readHeap()
}

// Write prints r as one line of key=value pairs, the format controller.sh
// parses; per-event figures divide by the spec updates (expired: the
// cache's watches and listings that fell out of the backend's history, why
// it relisted; passes_per_event:
// reconcile passes per update, below 1 where the queue merged updates of one
// key; gc_cycles: the GC cycles completed, at 1M objects one or none, each
// the mark of a ~2 GB heap and a large part of the CPU). heap_growth_mib is
// the peak heap less the heap at rest before the updates (the objects, held
// by the store and by the cache): what the run itself added.
// peak_live_mib is the most a GC found live; peak_heap_mib exceeds it by
// the collector's slack, up to as much again with GOGC=100, and more while
// a long mark (on a loaded machine) lets allocation run on. drain_live_mib
// is what a GC finds live once the run drained: what the library keeps
// at rest, without the run's transient state (a relist's listing, events
// in flight).
func (r *Report) Write(w io.Writer) {
	ev := float64(max(r.Updates, 1))
	fmt.Fprintf(w, "side=%s objects=%d updates=%d cpu_us_per_event=%.2f wall_s=%.3f peak_heap_mib=%.1f peak_live_mib=%.1f drain_live_mib=%.1f setup_heap_mib=%.1f heap_growth_mib=%.1f hwm_mib=%.1f allocs_per_event=%.1f bytes_per_event=%.0f conflicts=%d writer_retries=%d relists=%d expired=%d passes_per_event=%.2f gc_cycles=%d gomaxprocs=%d\n",
		r.Side, r.Objects, r.Updates,
		float64(r.CPU.Microseconds())/ev, r.Wall.Seconds(),
		float64(r.PeakHeap)/(1<<20), float64(r.PeakLive)/(1<<20), float64(r.DrainLive)/(1<<20), float64(r.SetupHeap)/(1<<20), float64(r.PeakHeap-min(r.SetupHeap, r.PeakHeap))/(1<<20), float64(r.HWM)/(1<<20),
		float64(r.Allocs)/ev, float64(r.Bytes)/ev,
		r.Conflicts, r.Retries, r.Relists, r.Expired, float64(r.Passes)/ev, r.GCCycles, runtime.GOMAXPROCS(0))
}

// vmHWM is the process's peak resident set from /proc/self/status, 0 where
// there is none.
func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// Drive runs the timed phase: it waits for the first reconcile pass over
// every object (passes counts reconciles), collects the heap (a CPU
// profile includes that GC, the figures do not), starts the meter, runs write
// (the other writer) and returns when the plan has drained, with r's
// measured fields filled. It gives up after cfg.Timeout.
func Drive(ctx context.Context, cfg *Config, plan *Plan, passes *atomic.Int64, write func(context.Context) error, r *Report) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	for passes.Load() < int64(cfg.Objects) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("first pass not done after %v: %d of %d objects", cfg.Timeout, passes.Load(), cfg.Objects)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if cfg.Profile != "" {
		f, err := os.Create(cfg.Profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	// The timed phase starts on a collected heap: else whether the GC the
	// set-up owes falls into it decides a run at 1M objects (the mark of a
	// ~2 GB heap, 2-3s of CPU, 40-60us per event of 50k), one run in two.
	runtime.GC()
	if err := writeSetupHeap(cfg.HeapProfile); err != nil {
		return err
	}
	m := start(cfg.HeapProfile != "")
	passes0 := passes.Load()
	errc := make(chan error, 1)
	go func() { errc <- write(ctx) }()
	for {
		select {
		case <-plan.Done():
			m.Stop(r)
			r.Passes = passes.Load() - passes0
			if err := writeAllocs(cfg.MemProfile); err != nil {
				return err
			}
			if m.atPeak != nil {
				if err := os.WriteFile(cfg.HeapProfile, m.atPeak.Bytes(), 0o644); err != nil {
					return err
				}
			}
			if errc != nil {
				return <-errc
			}
			return nil
		case err := <-errc:
			if err != nil {
				return fmt.Errorf("writer: %w", err)
			}
			errc = nil
		case <-ctx.Done():
			return fmt.Errorf("not drained after %v: %d objects left", cfg.Timeout, plan.Left())
		}
	}
}

// writeSetupHeap writes, unless file is "", the heap profile of what is
// live before the timed phase to file.setup (after Drive's GC): the base
// to compare the peak's with (go tool pprof -diff_base file.setup).
func writeSetupHeap(file string) error {
	if file == "" {
		return nil
	}
	f, err := os.Create(file + ".setup")
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("heap").WriteTo(f, 0)
}

// writeAllocs writes the allocation profile to file, unless file is "".
func writeAllocs(file string) error {
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// CPUTime is the process's user+sys time so far, or 0 where getrusage is
// missing. Benchmarks whose wall time depends on how much of a shared
// machine they get report it per op next to ns/op.
func CPUTime() time.Duration { return cpuTime() }
