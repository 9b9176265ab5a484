// Package ctlbench is what the two sides of the controller-shaped benchmark
// (cmd/ctl-steady, cmd/ctl-clientgo) share: the workload's parameters and
// data, the other writer's schedule, the meter, and the one-line report
// controller.sh parses. It imports neither steady nor client-go, so each
// side's process holds only its own library.
//
// The workload runs in one of two modes, and both are kept because each
// answers a question the other cannot:
//
//   - Flat out (the default, -rate 0): the other writer makes its updates as
//     fast as it can and the run ends when the controller has drained them.
//     It measures throughput under a backlog, the figures earlier tables
//     quote. Its CPU per event depends on how many updates of one key the
//     queue merged into one reconcile pass (passes_per_event below 1): a
//     side that keeps closer behind the writer merges fewer and spends more
//     per event while spending less per pass. So it compares two amounts of
//     work, not the cost of the same work.
//   - Paced (-rate N): the writer makes N updates per second, each object's
//     at least Objects/N seconds apart, below both sides' capacity, so that
//     every update is reconciled on its own (no update merged into a later
//     one: missed=0). CPU per event then compares the cost of handling the
//     same updates. A run that did not keep up says so (kept_up=0): one with
//     an update no pass ever saw (missed), a p99 lag from an update to the
//     status write that shows it above -max-lag, or a writer that fell
//     behind its schedule by more than -max-lag (slip_ms); its figures are
//     those of a saturated run, not of paced work.
//
// In both, CPU is the process's user+sys time over the timed phase only,
// from the first update to the drain: the set-up (the objects' creation,
// the cache's fill, the first pass over every object) is not counted, nor
// a warm-up's updates (-warmup, see Drive), nor the GC that Drive runs
// before the phase. It includes all the process
// spends meanwhile: the writer, the cache, the workers, the GC, and the
// meter's heap sampler, the same on both sides (every 5ms flat out, every
// 50ms paced: a sample wakes an idle process, ~90 µs of CPU, so that 3
// updates in 2s cost 44ms at 5ms and 7ms at 50ms; at 2000 updates/s, about
// 1 µs per event). A paced run's CPU per event is 2-3× a flat-out run's on
// both sides (2000/s, 2 cores shared with other work): no batch amortizes
// an update's wake-ups, and it likely meets cold caches. runs_per_event
// counts the goroutine runs per update, the hand-offs that wake threads.
// cpu_us_per_pass divides the same CPU by the reconcile passes, the
// writer's and the cache's work included, so it is per pass only in name:
// read it with passes_per_event. In a paced run passes_per_event is not the
// same on both sides: client-go's handler enqueues its own status write
// and reconciles once more to find nothing to do (2 passes per update),
// where steady's change judge drops the Loop's own status write (1).
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is the workload, the same on both sides.
type Config struct {
	Objects int // objects in the store and the cache
	Updates int // spec updates by the other writer in the timed phase
	// Warmup is the other writer's updates before the timed phase, at the
	// same pace, which Drive drains before it starts the phase: a
	// controller that has run a while, whose heap has grown to its working
	// size, rather than one whose heap first grows (see Drive).
	Warmup  int
	Workers int // reconcile workers
	// Rate paces the other writer at Rate updates per second; 0 lets it
	// run flat out (see the package doc).
	Rate int
	// MaxLag is, with a Rate, the most an update may wait for its status
	// write (at the 99th percentile), and the most the writer may fall
	// behind its schedule, for the run to count as kept up.
	MaxLag     time.Duration
	Timeout    time.Duration // longest wait for the drain before giving up
	Profile    string        // file for a CPU profile of the timed phase; "" for none
	MemProfile string        // file for an allocation profile at the drain, and file.setup for one before the timed phase; "" for none
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
	fs.IntVar(&c.Updates, "updates", 50_000, "spec updates by the other writer in the timed phase")
	fs.IntVar(&c.Warmup, "warmup", 0, "spec updates by the other writer before the timed phase, at its pace, drained before it starts: the timed phase then measures a controller whose heap has grown to its working size (at 1M objects, the timed phase of a run without one pays for the heap's first growth)")
	fs.IntVar(&c.Workers, "workers", 4, "reconcile workers")
	fs.IntVar(&c.Rate, "rate", 0, "pace the other writer at this many updates per second, below both sides' capacity (0: flat out, drain a backlog)")
	fs.DurationVar(&c.MaxLag, "max-lag", 100*time.Millisecond, "with -rate: the most the p99 lag from an update to its status write, and the writer's slip behind its schedule, may be for the run to count as kept up")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Minute, "give up if the drain takes longer")
	fs.StringVar(&c.Profile, "cpuprofile", "", "write a CPU profile of the timed phase (the updates and the drain, not the forced GCs before and after it) to this file")
	fs.StringVar(&c.MemProfile, "memprofile", "", "write an allocation profile to this file after the drain, set-up included, and one of the set-up alone to this file.setup: go tool pprof -sample_index=alloc_space -diff_base file.setup file shows the timed phase's")
	fs.StringVar(&c.HeapProfile, "heapprofile", "", "write a heap profile to this file, taken when the live heap was at its highest during the timed phase (costs time at each new high), and one of the heap before it to this file.setup")
	return c
}

// Validate reports a Config the workload cannot run. With a heap profile
// asked for, it also samples an allocation every 4 KiB instead of every
// 512 KiB, from here on, so that the profile resolves the call sites that
// hold a few hundred KiB: each side calls it before it builds anything.
func (c *Config) Validate() error {
	if c.Objects < 1 || c.Updates < 0 || c.Warmup < 0 || c.Workers < 1 || c.Timeout <= 0 {
		return fmt.Errorf("ctlbench: need objects ≥ 1, updates ≥ 0, warmup ≥ 0, workers ≥ 1, timeout > 0; got %+v", *c)
	}
	if c.Rate < 0 || (c.Rate > 0 && c.MaxLag <= 0) {
		return fmt.Errorf("ctlbench: need rate ≥ 0, and max-lag > 0 with a rate; got rate %d, max-lag %v", c.Rate, c.MaxLag)
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
// With a Warmup, updates 0 to Warmup-1 are the warm-up's and the timed
// phase's follow on from Warmup; the Plan drains each phase apart. With a
// Rate, the Plan also times each update from its issue to the first status
// write that shows it (its lag).
type Plan struct {
	final   []int64       // the last replica count each object is given; 0 if none
	reached []atomic.Bool // the reconciler wrote the status of the final count
	left    atomic.Int64  // objects the timed phase updates still to reach their final count
	done    chan struct{}
	warmup  int
	updates int // the timed phase's
	rate    int

	// The warm-up's own: the last replica count it gives each object (0
	// if none), whether the reconciler wrote its status, the objects left
	// and a channel closed once none is; nil slices without a warm-up.
	warmFinal   []int64
	warmReached []atomic.Bool
	warmLeft    atomic.Int64
	warmDone    chan struct{}

	// With a rate: per update, when it was issued and its lag, both in
	// nanoseconds (+1, so that 0 means not yet) since t0.
	t0     time.Time
	issued []atomic.Int64
	lag    []atomic.Int64
	slip   atomic.Int64 // how far the writer's last update was behind its phase's schedule
}

// NewPlan returns the plan of c.
func NewPlan(c *Config) *Plan {
	total := c.Warmup + c.Updates
	p := &Plan{final: make([]int64, c.Objects), reached: make([]atomic.Bool, c.Objects), done: make(chan struct{}),
		warmup: c.Warmup, updates: c.Updates, rate: c.Rate, t0: time.Now(), warmDone: make(chan struct{})}
	if c.Rate > 0 {
		p.issued, p.lag = make([]atomic.Int64, total), make([]atomic.Int64, total)
	}
	if c.Warmup > 0 {
		p.warmFinal, p.warmReached = make([]int64, c.Objects), make([]atomic.Bool, c.Objects)
	}
	touched, warmTouched := 0, 0
	for u := range total {
		i := u % c.Objects
		switch {
		case u < c.Warmup:
			if p.warmFinal[i] == 0 {
				warmTouched++
			}
			p.warmFinal[i] = int64(u + 1)
		case p.final[i] <= int64(c.Warmup): // none, or the warm-up's
			touched++
		}
		p.final[i] = int64(u + 1)
	}
	p.left.Store(int64(touched))
	if touched == 0 {
		close(p.done)
	}
	p.warmLeft.Store(int64(warmTouched))
	if warmTouched == 0 {
		close(p.warmDone)
	}
	return p
}

// Update returns the object and replica count of update u.
func (p *Plan) Update(u int) (obj int, replicas int64) {
	return u % len(p.final), int64(u + 1)
}

// Wrote records that the status of object name now shows replicas.
func (p *Plan) Wrote(name string, replicas int64) {
	if p.lag != nil {
		p.timeLag(replicas)
	}
	i := Index(name)
	if i < 0 || i >= len(p.final) || replicas == 0 {
		return
	}
	if p.warmFinal != nil && p.warmFinal[i] == replicas && p.warmReached[i].CompareAndSwap(false, true) {
		if p.warmLeft.Add(-1) == 0 {
			close(p.warmDone)
		}
	}
	// An object the writer never touches has final 0, which its first
	// pass also shows; one only the warm-up touches drained with it.
	// Neither has anything to drain.
	if p.final[i] <= int64(p.warmup) || p.final[i] != replicas || !p.reached[i].CompareAndSwap(false, true) {
		return
	}
	if p.left.Add(-1) == 0 {
		close(p.done)
	}
}

// timeLag records, the first time a status shows replicas, the lag of the
// update that set them.
func (p *Plan) timeLag(replicas int64) {
	u := replicas - 1
	if u < 0 || u >= int64(len(p.lag)) || p.lag[u].Load() != 0 {
		return
	}
	if at := p.issued[u].Load(); at != 0 {
		p.lag[u].CompareAndSwap(0, int64(time.Since(p.t0))-at+2)
	}
}

// write makes updates from to to-1 in order, from the calling goroutine,
// each at its turn in a schedule that starts at the call with a rate, as
// fast as it can without.
func (p *Plan) write(ctx context.Context, from, to int, update func(context.Context, int) error) error {
	var pause *time.Timer
	start := time.Now()
	for u := from; u < to; u++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p.rate > 0 {
			due := time.Duration(int64(u-from) * int64(time.Second) / int64(p.rate))
			if wait := due - time.Since(start); wait > 0 {
				// Not below a millisecond: a wake-up per update would add
				// its own CPU to every event on both sides.
				if err := sleep(ctx, &pause, max(wait, time.Millisecond)); err != nil {
					return err
				}
			}
			now := time.Now()
			p.issued[u].Store(int64(now.Sub(p.t0)) + 1)
			p.slip.Store(int64(now.Sub(start) - due))
		}
		if err := update(ctx, u); err != nil {
			return err
		}
	}
	return nil
}

// sleep waits d on *t (made on first use) or until ctx ends.
func sleep(ctx context.Context, t **time.Timer, d time.Duration) error {
	if *t == nil {
		*t = time.NewTimer(d)
	} else {
		(*t).Reset(d)
	}
	select {
	case <-ctx.Done():
		(*t).Stop()
		return ctx.Err()
	case <-(*t).C:
		return nil
	}
}

// paced fills r's figures of a paced run's timed phase, judged against
// maxLag.
func (p *Plan) paced(r *Report, maxLag time.Duration) {
	r.Rate = p.rate
	timed := p.lag[p.warmup:]
	lags := make([]time.Duration, 0, len(timed))
	for u := range timed {
		if l := timed[u].Load(); l != 0 {
			lags = append(lags, time.Duration(l-1))
		}
	}
	r.Missed = int64(len(timed) - len(lags))
	slices.Sort(lags)
	if n := len(lags); n > 0 {
		r.LagP50, r.LagP99, r.LagMax = lags[n/2], lags[min(n-1, n*99/100)], lags[n-1]
	}
	r.Slip = time.Duration(p.slip.Load())
	r.KeptUp = r.Missed == 0 && r.LagP99 <= maxLag && r.Slip <= maxLag
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
	sys0       time.Duration
	faults0    int64
	allocs0    uint64
	runs0      uint64
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
	// atStart is the GC's count when the phase began, right after a
	// cycle's end; lastEnd is the count a sample last saw a cycle end at
	// (the sampler's goroutine's until Stop). The GC's price per byte
	// allocated is read between the two (see Report.GCPerMiB).
	atStart, lastEnd gcCount
}

// gcCount is, at one moment, the GC cycles completed, the bytes allocated
// and the CPU seconds the runtime estimates it spent on the GC (marking,
// assists, pauses; /cpu/classes/gc/total) in those cycles: it adds a
// cycle's time at the cycle's end.
type gcCount struct {
	cycles, bytes uint64
	cpu           float64
}

// seconds is s seconds as a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// readGCCount returns the gcCount so far.
func readGCCount() gcCount {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/allocs:bytes"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return gcCount{s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Float64()}
}

var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/gc/heap/allocs:objects", "/gc/heap/allocs:bytes", "/gc/heap/live:bytes"}

// gcPercent returns the GC's percent (GOGC; -1 when off).
func gcPercent() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(s[0].Value.Uint64())
}

// goroutineRuns estimates how many times a goroutine was put to run so
// far: the runtime times the wait before 1 run in 8 of each goroutine
// (gTrackingPeriod) into /sched/latencies, whose count is that sample.
func goroutineRuns() uint64 {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return 8 * n
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

// heapMarkWork returns the heap's objects (live, and dead ones not yet
// swept: none right after runtime.GC) and its scannable bytes as the last
// GC found them.
func heapMarkWork() (objects, scan uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// Start begins the timed phase. The peak heap is sampled every 5ms from
// here on (runtime/metrics, no stop-the-world); the process's peak RSS
// (VmHWM) covers the whole run, set-up included.
func Start() *Meter { return start(false, 5*time.Millisecond) }

// start is Start, sampling every pace; with heapProfile, the Meter also
// keeps the heap profile taken at the highest live heap (see
// Config.HeapProfile).
func start(heapProfile bool, pace time.Duration) *Meter {
	m := &Meter{stop: make(chan struct{}), samplePace: pace}
	heap, allocs, allocated, marked := readHeap()
	m.setupHeap, m.allocs0, m.bytes0 = heap, allocs, allocated
	m.peak.Store(heap)
	m.peakLive.Store(marked)
	if heapProfile {
		// The heap at the start is the first peak: at 1M objects a phase
		// may end no GC cycle, and its highest live heap is the start's.
		m.atPeak = &bytes.Buffer{}
		_ = pprof.Lookup("heap").WriteTo(m.atPeak, 0)
		m.profiled = marked
	}
	m.atStart = readGCCount()
	m.lastEnd = m.atStart
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
	m.runs0 = goroutineRuns()
	m.cpu0, m.sys0, m.faults0 = usage()
	m.start = time.Now()
	return m
}

func (m *Meter) sample() {
	if c := readGCCount(); c.cycles > m.lastEnd.cycles {
		m.lastEnd = c
	}
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

// settle is how long the first pass must count no pass more before Drive
// measures the set-up's heap.
const settle = 100 * time.Millisecond

// RestAfter is how long after the drain Drive measures the live heap at
// rest (Report.RestLive).
const RestAfter = time.Second

// Report is one side's figures for one run.
type Report struct {
	Side      string
	Objects   int
	Updates   int           // the timed phase's
	Warmup    int           // the updates before it (Config.Warmup)
	Wall      time.Duration // first update to drain
	CPU       time.Duration // process user+sys over the same span
	Sys       time.Duration // the sys part of CPU: the kernel's time for the process, its page faults' included (see Faults)
	Faults    int64         // the process's minor page faults over the same span: each a first touch of memory the heap took from the OS (or gave back and took again), paid in the kernel's CPU, counted in CPU
	Allocs    uint64        // heap allocations over the same span
	Bytes     uint64        // heap bytes allocated over the same span
	PeakHeap  uint64        // highest heap sampled (live objects and dead ones not yet swept), set-up included
	PeakLive  uint64        // highest heap a GC found live, set-up included: PeakHeap less the GC's slack (up to GOGC% more)
	SetupHeap uint64        // live heap when the timed phase began
	DrainLive uint64        // live heap after a GC at the drain: what the run keeps, its garbage gone
	RestLive  uint64        // live heap after a GC RestAfter past the drain: what the run keeps once the cache caught up
	HWM       uint64        // peak resident set of the process (VmHWM), bytes
	Conflicts int64         // status writes the store rejected as stale
	Retries   int64         // the writer's spec updates retried on a conflict
	Relists   int64         // full relists of the cache during the run (-1: not known)
	Expired   int64         // the cache's watches and listings that ended expired (ErrExpired: fell out of the backend's history), the usual cause of a relist (-1: not known)
	Passes    int64         // reconcile passes over the same span
	GCCycles  uint64        // GC cycles completed over the same span
	// GCCPU is the CPU the runtime estimates its GC spent in the cycles
	// that ended over the same span (/cpu/classes/gc/total: background
	// and idle marking, assists, pauses), a part of CPU. It is the
	// runtime's estimate from the time its workers ran, not the kernel's
	// count, and it leaves out what the GC makes the program spend
	// elsewhere (write barriers, sweeping as it allocates, the caches it
	// evicts): CPU less GCCPU is not the cost with no GC, only a bound.
	GCCPU time.Duration
	// GCPerMiB is the GC's CPU (as GCCPU) per MiB the program allocated,
	// over whole cycles: from the phase's start (Drive starts it right
	// after a GC) to the end of the last cycle the meter saw end (it looks every 5ms, or
	// 50ms paced); 0 when no cycle ended in the phase. With GOGC's pacing
	// a cycle comes once the program allocated about its live heap again,
	// so a phase's count of whole cycles depends on where it ends: at 1M
	// objects a phase of 300k updates holds one cycle or none. GCPerMiB
	// times the bytes allocated per event is the GC's cost per event
	// spread over many cycles, as a controller that runs for long pays it.
	GCPerMiB time.Duration
	GOGC     int64  // the GC's percent (GOGC) at the drain: the peak heap's slack over the live heap scales with it, so two sides' peaks compare only at the same
	Runs     uint64 // times a goroutine was put to run over the same span (estimated from the runtime's 1-in-8 sample): hand-offs between goroutines, each a wake-up when the process idles
	// What the GC must mark after the set-up, read after Drive's GC
	// before the timed phase: the heap's objects (/gc/heap/objects) and
	// its scannable bytes (/gc/scan/heap). Unlike CPU figures they do not
	// vary from run to run, so a change to a side's per-object structures
	// shows in them without timing.
	SetupObjects uint64
	SetupScan    uint64

	// A paced run's figures (Config.Rate), zero in a flat-out one.
	Rate   int           // the writer's pace, updates per second
	LagP50 time.Duration // from an update's issue to the first status write that shows it: median,
	LagP99 time.Duration // 99th percentile,
	LagMax time.Duration // and the longest
	Slip   time.Duration // how far behind its schedule the writer issued its last update
	Missed int64         // updates no status write ever showed: merged into a later one, so not reconciled on their own
	KeptUp bool          // no update missed, LagP99 and Slip within Config.MaxLag
}

// Stop ends the timed phase and fills r's measured fields.
func (m *Meter) Stop(r *Report) {
	r.Wall = time.Since(m.start)
	cpu, sys, faults := usage()
	r.CPU, r.Sys, r.Faults = cpu-m.cpu0, sys-m.sys0, faults-m.faults0
	gc := readGCCount()
	r.GCCycles, r.GCCPU = gc.cycles-m.atStart.cycles, seconds(gc.cpu-m.atStart.cpu)
	r.GOGC = gcPercent()
	r.Runs = goroutineRuns() - m.runs0
	_, allocs, bytes, _ := readHeap()
	close(m.stop)
	m.wg.Wait()
	m.sample()
	r.Allocs, r.Bytes = allocs-m.allocs0, bytes-m.bytes0
	r.PeakHeap, r.PeakLive, r.SetupHeap = m.peak.Load(), m.peakLive.Load(), m.setupHeap
	if alloc := m.lastEnd.bytes - m.atStart.bytes; m.lastEnd.cycles > m.atStart.cycles && alloc > 0 {
		r.GCPerMiB = seconds((m.lastEnd.cpu - m.atStart.cpu) * (1 << 20) / float64(alloc))
	}
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
// the mark of a ~2 GB heap and a large part of the CPU; gc_cpu_us_per_event:
// their CPU as the runtime estimates it, see Report.GCCPU). heap_growth_mib is
// the peak heap less the heap at rest before the updates (the objects, held
// by the store and by the cache): what the run itself added.
// peak_live_mib is the most a GC found live; peak_heap_mib exceeds it by
// the collector's slack, up to as much again with GOGC=100, and more while
// a long mark (on a loaded machine) lets allocation run on. drain_live_mib
// is what a GC finds live once the run drained: what the library keeps
// at rest, without the run's transient state (a relist's listing, events
// in flight); rest_live_mib is the same RestAfter later, once the cache
// caught up with the writes. cpu_us_per_pass is the same CPU per reconcile pass (see the
// package doc). runs_per_event is how many times a goroutine was put to run
// per update (Report.Runs): in a paced run each is likely a wake-up of an
// idle thread, a large part of the CPU per event. gogc is the GC's percent
// (GOGC, -1 off): peak heaps compare only between runs at the same.
// setup_objs_per_obj and setup_scan_bytes_per_obj are the heap's objects
// and its scannable bytes after the set-up, per stored object
// (Report.SetupObjects, Report.SetupScan): the GC's mark work grows with
// both. faults_per_event is the minor page faults per update (Report.Faults):
// a heap that grows past what the process already holds touches fresh
// pages, each a fault whose kernel time the CPU figures include, and
// sys_us_per_event is that kernel time per update (Report.Sys).
// gc_us_per_mib is the GC's CPU per MiB allocated over whole cycles
// (Report.GCPerMiB), and cpu_amortized_us_per_event the CPU per event with
// the GC's cycles in the phase replaced by that price of its allocations:
// what a controller that runs for long pays per event, where the phase's
// own figure holds whole cycles, one or none at 1M objects (both -1 when
// no cycle ended in the phase). It subtracts the runtime's estimate of
// the GC's CPU from the kernel's count of the process's, and leaves a
// cycle still running at the drain in the rest. A paced run adds its rate,
// lag_{p50,p99,max}_ms, slip_ms, missed and kept_up (1 or 0; see Report
// and the package doc).
func (r *Report) Write(w io.Writer) {
	ev := float64(max(r.Updates, 1))
	fmt.Fprintf(w, "side=%s objects=%d updates=%d warmup=%d cpu_us_per_event=%.2f sys_us_per_event=%.2f wall_s=%.3f peak_heap_mib=%.1f peak_live_mib=%.1f drain_live_mib=%.1f rest_live_mib=%.1f setup_heap_mib=%.1f heap_growth_mib=%.1f hwm_mib=%.1f allocs_per_event=%.1f bytes_per_event=%.0f conflicts=%d writer_retries=%d relists=%d expired=%d passes_per_event=%.2f gc_cycles=%d gc_cpu_us_per_event=%.2f gomaxprocs=%d gogc=%d cpu_us_per_pass=%.2f runs_per_event=%.1f setup_objs_per_obj=%.2f setup_scan_bytes_per_obj=%.1f faults_per_event=%.3f",
		r.Side, r.Objects, r.Updates, r.Warmup,
		float64(r.CPU.Microseconds())/ev, float64(r.Sys.Microseconds())/ev, r.Wall.Seconds(),
		float64(r.PeakHeap)/(1<<20), float64(r.PeakLive)/(1<<20), float64(r.DrainLive)/(1<<20), float64(r.RestLive)/(1<<20), float64(r.SetupHeap)/(1<<20), float64(r.PeakHeap-min(r.SetupHeap, r.PeakHeap))/(1<<20), float64(r.HWM)/(1<<20),
		float64(r.Allocs)/ev, float64(r.Bytes)/ev,
		r.Conflicts, r.Retries, r.Relists, r.Expired, float64(r.Passes)/ev, r.GCCycles, float64(r.GCCPU.Microseconds())/ev, runtime.GOMAXPROCS(0), r.GOGC,
		float64(r.CPU.Microseconds())/float64(max(r.Passes, 1)), float64(r.Runs)/ev,
		float64(r.SetupObjects)/float64(max(r.Objects, 1)), float64(r.SetupScan)/float64(max(r.Objects, 1)), float64(r.Faults)/ev)
	perMiB, amortized := -1.0, -1.0 // unknown: no cycle ended in the phase
	if r.GCPerMiB > 0 {
		perMiB = float64(r.GCPerMiB.Nanoseconds()) / 1e3
		amortized = float64((r.CPU-r.GCCPU).Microseconds())/ev + perMiB*float64(r.Bytes)/ev/(1<<20)
	}
	fmt.Fprintf(w, " gc_us_per_mib=%.1f cpu_amortized_us_per_event=%.2f", perMiB, amortized)
	if r.Rate > 0 {
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		kept := 0
		if r.KeptUp {
			kept = 1
		}
		fmt.Fprintf(w, " rate=%d lag_p50_ms=%.3f lag_p99_ms=%.3f lag_max_ms=%.3f slip_ms=%.3f missed=%d kept_up=%d",
			r.Rate, ms(r.LagP50), ms(r.LagP99), ms(r.LagMax), ms(r.Slip), r.Missed, kept)
	}
	fmt.Fprintln(w)
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
// every object (passes counts reconciles), runs the warm-up's updates
// (cfg.Warmup, if any) and waits for them to drain, collects the heap
// (neither the figures nor a CPU profile include that cycle), starts the meter,
// makes the timed phase's updates from one goroutine, update(ctx, u) for u
// in order, paced at cfg.Rate if set (see the package doc), and returns
// when the plan has drained, with r's measured fields filled. It gives up
// after cfg.Timeout.
//
// The warm-up is what a controller that ran a while has behind it. Without
// one, at 1M objects the timed phase is the heap's first growth past the
// set-up's: the pages it takes from the OS fault in (faults_per_event, in
// sys_us_per_event), where a controller that ran a while reuses those its
// heap grew into before. A GC cycle ends right before the timed phase,
// after the warm-up too, so that a phase of one cycle's allocation holds
// one cycle: after the warm-up, one that the allocation of garbage
// triggered, not a forced one (see endOnNaturalCycle).
func Drive(ctx context.Context, cfg *Config, plan *Plan, passes *atomic.Int64, update func(ctx context.Context, u int) error, r *Report) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	for passes.Load() < int64(cfg.Objects) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("first pass not done after %v: %d of %d objects", cfg.Timeout, passes.Load(), cfg.Objects)
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The set-up's heap is measured once the first pass has settled: its
	// last keys' bookkeeping (a queue's, after the pass counted) and any
	// pass more than one per object done, so that what a side lets go
	// once its queue drains is gone in every run, not in some.
	if err := settled(ctx, passes); err != nil {
		return fmt.Errorf("first pass not settled: %w", err)
	}
	if cfg.Warmup > 0 {
		if err := plan.write(ctx, 0, cfg.Warmup, update); err != nil {
			return fmt.Errorf("warm-up writer: %w", err)
		}
		select {
		case <-plan.warmDone:
		case <-ctx.Done():
			return fmt.Errorf("warm-up not drained after %v: %d objects left", cfg.Timeout, plan.warmLeft.Load())
		}
		if err := settled(ctx, passes); err != nil {
			return fmt.Errorf("warm-up not settled: %w", err)
		}
	}
	r.Warmup = cfg.Warmup
	var cpuProfile *os.File
	if cfg.Profile != "" {
		f, err := os.Create(cfg.Profile)
		if err != nil {
			return err
		}
		defer f.Close()
		cpuProfile = f
	}
	// The timed phase starts on a collected heap: else whether the GC the
	// set-up owes falls into it decides a run at 1M objects (the mark of a
	// ~2 GB heap, 2-3s of CPU, 40-60us per event of 50k), one run in two.
	// After a warm-up, at the end of a cycle the allocation triggered, as
	// a controller's heap goes on (see endOnNaturalCycle); without one, a
	// controller that just started, after a forced cycle.
	if cfg.Warmup > 0 {
		if err := endOnNaturalCycle(ctx); err != nil {
			return err
		}
	} else {
		runtime.GC()
	}
	r.SetupObjects, r.SetupScan = heapMarkWork()
	if err := writeProfile("heap", cfg.HeapProfile, ".setup"); err != nil {
		return err
	}
	if err := writeProfile("allocs", cfg.MemProfile, ".setup"); err != nil {
		return err
	}
	// A paced run's heap grows slowly, and its CPU per event would count a
	// sample every 5ms (a wake-up of an idle process, ~10 µs per event at
	// 2000 updates/s on both sides): it samples every 50ms.
	pace := 5 * time.Millisecond
	if cfg.Rate > 0 {
		pace = 50 * time.Millisecond
	}
	// The CPU profile covers the timed phase alone, as the CPU figure
	// does: not the GC before it or the one RestAfter past the drain,
	// which at 1M objects mark the whole heap twice (2-3s of CPU each,
	// where the phase's own cycles come to about as much).
	stopProfile := func() {}
	if cpuProfile != nil {
		if err := pprof.StartCPUProfile(cpuProfile); err != nil {
			return err
		}
		stopProfile = sync.OnceFunc(pprof.StopCPUProfile)
		defer stopProfile()
	}
	m := start(cfg.HeapProfile != "", pace)
	passes0 := passes.Load()
	errc := make(chan error, 1)
	go func() { errc <- plan.write(ctx, plan.warmup, plan.warmup+plan.updates, update) }()
	for {
		select {
		case <-plan.Done():
			m.Stop(r)
			stopProfile()
			r.Passes = passes.Load() - passes0
			if cfg.Rate > 0 {
				plan.paced(r, cfg.MaxLag)
			}
			// The drain is the last status write that shows every update;
			// the cache may lag the writes then (flat out, by thousands),
			// and a backend's window grown for it shrinks only once it
			// caught up: what a library keeps at rest is measured later.
			time.Sleep(RestAfter)
			runtime.GC()
			_, _, _, r.RestLive = readHeap()
			if err := writeProfile("allocs", cfg.MemProfile, ""); err != nil {
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

// endOnNaturalCycle allocates garbage until the runtime starts a GC cycle
// of its own, waits for the cycle to end and for its sweep to free the
// garbage, and returns: after a warm-up the timed phase then starts at a
// cycle's end, on a collected heap, with the runtime's scavenger as a
// controller that ran a while has it. A forced cycle (runtime.GC) would
// not: the scavenger keeps, of the memory the heap grew into, about 1.1
// times the heap in use when the last cycle ended, what it had still to
// sweep included (runtime/mgcscavenge.go). A cycle the allocation
// triggers ends at about the heap goal, and the scavenger gives back
// nothing (GODEBUG=scavtrace=1: 0 KiB in each cycle of a 1M-object
// warm-up); a forced one ends at whatever the heap held when it was
// called, at 1M objects 1.1 to 1.5 times the live heap, and the scavenger
// then gave back 771 MiB during one timed phase (0.30 page faults an
// event to take them again, against 0.007; 31.3 µs an event against
// 22.6). Garbage allocated after a forced cycle pays the same, since the
// heap's growth past that cycle's low goal is given back at once (1 GiB
// of "eager" scavenging); the garbage is small objects, which fill the
// pages the heap holds before it grows. With the GC off it does nothing;
// it gives up when ctx ends.
func endOnNaturalCycle(ctx context.Context) error {
	if gcPercent() < 0 {
		return nil
	}
	cycles0, pauses0, _ := gcState()
	// Stop once the cycle stops the world to start its mark: what is
	// allocated during the mark is kept until the next cycle.
	var garbage *[32]int64
	for {
		if cycles, pauses, _ := gcState(); cycles != cycles0 || pauses != pauses0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("ctlbench: allocating until a GC cycle starts: %w", err)
		}
		for range 1024 {
			garbage = new([32]int64)
		}
	}
	runtime.KeepAlive(garbage)
	const poll = time.Millisecond
	for cycles, _, _ := gcState(); cycles == cycles0; cycles, _, _ = gcState() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("ctlbench: waiting for a GC cycle to end: %w", ctx.Err())
		case <-time.After(poll):
		}
	}
	// The sweep runs in the background; the phase measures the heap from
	// its start, so it starts on the heap without the garbage.
	_, _, _, live := readHeap()
	for {
		_, _, heap := gcState()
		if heap <= live+live/16+4<<20 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ctlbench: waiting for a GC cycle's sweep: %d MiB of heap objects, %d MiB live: %w", heap>>20, live>>20, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// gcState returns the automatic GC cycles ended so far, the GC's
// stop-the-world pauses (two a cycle: its mark's start and end), and the
// heap's objects, live or not yet swept.
func gcState() (cycles, pauses, heap uint64) {
	s := []metrics.Sample{{Name: "/gc/cycles/automatic:gc-cycles"}, {Name: "/sched/pauses/total/gc:seconds"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	for _, c := range s[1].Value.Float64Histogram().Counts {
		pauses += c
	}
	return s[0].Value.Uint64(), pauses, s[2].Value.Uint64()
}

// settled returns once passes stays the same for settle, or ctx's error.
func settled(ctx context.Context, passes *atomic.Int64) error {
	for p := passes.Load(); ; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settle):
		}
		if q := passes.Load(); q != p {
			p = q
			continue
		}
		return nil
	}
}

// writeProfile writes, unless file is "", the runtime profile name
// ("heap" or "allocs") to file+suffix. A profile's counts are those as of
// the last GC cycle: Drive writes the ".setup" ones right after its GC
// before the timed phase, and the allocations after its GC past the
// drain, so that the allocation pair brackets the timed phase (go tool
// pprof -diff_base file.setup file). The heap pair differs only by the
// cycles run in between: at 1M objects, one or none.
func writeProfile(name, file, suffix string) error {
	if file == "" {
		return nil
	}
	f, err := os.Create(file + suffix)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CPUTime is the process's user+sys time so far, or 0 where getrusage is
// missing. Benchmarks whose wall time depends on how much of a shared
// machine they get report it per op next to ns/op.
func CPUTime() time.Duration { return cpuTime() }
