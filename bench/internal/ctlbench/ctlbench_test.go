package ctlbench

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// With more objects than updates, the objects the writer never touches
// already show their final state at the first pass; that pass must not
// count them as drained, or the run ends before the updates land.
func TestPlanDrainsOnlyUpdatedObjects(t *testing.T) {
	p := NewPlan(&Config{Objects: 4, Updates: 2, Workers: 1})
	for i := range 4 { // the first pass: every object at 0 replicas
		p.Wrote(Name(i), 0)
	}
	select {
	case <-p.Done():
		t.Fatalf("drained by the first pass; %d left", p.Left())
	default:
	}
	p.Wrote(Name(0), 1)
	p.Wrote(Name(1), 2)
	select {
	case <-p.Done():
	default:
		t.Fatalf("not drained after both updates landed; %d left", p.Left())
	}
}

// A warm-up's updates drain apart from the timed phase's: the warm-up is
// done once each object it touched shows the last value it gave, and an
// object only the warm-up touched does not hold up the timed phase.
func TestPlanDrainsTheWarmupApart(t *testing.T) {
	p := NewPlan(&Config{Objects: 4, Warmup: 3, Updates: 2, Workers: 1})
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	for i := range 4 { // the first pass
		p.Wrote(Name(i), 0)
	}
	for u := range 3 {
		if closed(p.warmDone) {
			t.Fatalf("warm-up drained before update %d landed", u)
		}
		reconcile(p, u)
	}
	if !closed(p.warmDone) || closed(p.Done()) {
		t.Fatalf("after the warm-up's updates landed: warm-up drained %v, timed phase drained %v; want true, false", closed(p.warmDone), closed(p.Done()))
	}
	reconcile(p, 3) // object 3
	reconcile(p, 4) // object 0 again
	if !closed(p.Done()) {
		t.Fatalf("timed phase not drained after its updates landed; %d left", p.Left())
	}
}

// Drive drains the warm-up before it starts the timed phase, which counts
// the timed phase's updates alone; the timed updates follow on from the
// warm-up's.
func TestWarmupDrainsBeforeTheTimedPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := &Config{Objects: 4, Warmup: 6, Updates: 5, Workers: 1, Timeout: time.Minute}
		p := NewPlan(cfg)
		var passes atomic.Int64
		passes.Store(4)
		var (
			mu       sync.Mutex
			issued   []int
			lastWarm time.Time
			timedAt  time.Time
		)
		var r Report
		if err := Drive(t.Context(), cfg, p, &passes, func(_ context.Context, u int) error {
			mu.Lock()
			issued = append(issued, u)
			if u == cfg.Warmup {
				timedAt = time.Now()
			}
			mu.Unlock()
			go func() { // a controller 50ms behind the writer, 400ms on the warm-up's last
				lag := 50 * time.Millisecond
				if u == cfg.Warmup-1 {
					lag = 8 * settle // passes stand still longer than settle
				}
				time.Sleep(lag)
				passes.Add(1)
				mu.Lock()
				if u < cfg.Warmup {
					lastWarm = time.Now()
				}
				mu.Unlock()
				reconcile(p, u)
			}()
			return nil
		}, &r); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !slices.Equal(issued, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
			t.Fatalf("updates issued %v: want 0 to 10 in order", issued)
		}
		if timedAt.Before(lastWarm.Add(settle)) {
			t.Fatalf("first timed update at %v, before the warm-up's last status at %v had settled", timedAt, lastWarm)
		}
		if r.Passes != 5 || r.Warmup != 6 {
			t.Fatalf("timed phase counted %d passes, warm-up %d: want 5 and 6", r.Passes, r.Warmup)
		}
	})
}

// A paced warm-up is not judged with the timed phase: its merged updates
// are not missed ones, and the timed phase's schedule starts with it.
func TestPacedWarmupIsNotJudged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := &Config{Objects: 10, Warmup: 20, Updates: 30, Workers: 1, Timeout: time.Minute, Rate: 100, MaxLag: 100 * time.Millisecond}
		p := NewPlan(cfg)
		var passes atomic.Int64
		passes.Store(10)
		var timedStart time.Time
		var r Report
		if err := Drive(t.Context(), cfg, p, &passes, func(_ context.Context, u int) error {
			switch {
			case u < 10: // merged into the object's next update
				return nil
			case u == cfg.Warmup:
				timedStart = time.Now()
			case u > cfg.Warmup:
				if at, due := time.Since(timedStart), time.Duration(u-cfg.Warmup)*10*time.Millisecond; at < due || at > due+time.Millisecond {
					t.Errorf("update %d issued %v into the timed phase: want %v", u, at, due)
				}
			}
			reconcile(p, u)
			return nil
		}, &r); err != nil {
			t.Fatal(err)
		}
		if !r.KeptUp || r.Missed != 0 || r.Wall < 290*time.Millisecond || r.Wall > 310*time.Millisecond {
			t.Fatalf("a timed phase that kept up after a warm-up that merged updates: %+v", r)
		}
	})
}

// The meter reports the heap a GC found live apart from the heap's peak,
// which also counts garbage not yet swept: 32 MiB kept through a GC is
// live.
func TestMeterReportsTheLiveHeapApart(t *testing.T) {
	m := Start()
	keep := make([]byte, 32<<20)
	runtime.GC()
	var r Report
	m.Stop(&r)
	runtime.KeepAlive(keep)
	if r.PeakLive < 32<<20 {
		t.Fatalf("peak live heap %d: want at least the %d bytes kept", r.PeakLive, 32<<20)
	}
}

// The report says the GC's percent the run had, which sets the peak
// heap's slack over the live heap.
func TestReportSaysGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	m := Start()
	var r Report
	m.Stop(&r)
	var b strings.Builder
	r.Write(&b)
	if r.GOGC != 50 || !strings.Contains(b.String(), " gogc=50 ") {
		t.Fatalf("GOGC %d, line %s; want 50", r.GOGC, b.String())
	}
}

// pacedRun drives a paced run of 10 objects and 50 updates at 100 per
// second in a synctest bubble, where update(u) is the other writer's
// update u, and returns the report.
func pacedRun(t *testing.T, update func(p *Plan, u int)) Report {
	t.Helper()
	cfg := &Config{Objects: 10, Updates: 50, Workers: 1, Timeout: time.Minute, Rate: 100, MaxLag: 100 * time.Millisecond}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p := NewPlan(cfg)
	var passes atomic.Int64
	passes.Store(int64(cfg.Objects)) // the first pass is done
	var r Report
	if err := Drive(t.Context(), cfg, p, &passes, func(_ context.Context, u int) error {
		update(p, u)
		return nil
	}, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// reconcile is a reconciler that keeps up: it writes update u's status at
// once.
func reconcile(p *Plan, u int) {
	i, replicas := p.Update(u)
	p.Wrote(Name(i), replicas)
}

// A paced writer issues update u at u/rate seconds, not before and not in
// a burst; a run that keeps up is reported as kept up, with no lag.
func TestPacedWriterKeepsItsSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var issued []time.Duration
		start := time.Now()
		r := pacedRun(t, func(p *Plan, u int) {
			issued = append(issued, time.Since(start))
			reconcile(p, u)
		})
		for u, at := range issued {
			// The schedule starts once the first pass settled.
			if due := settle + time.Duration(u)*10*time.Millisecond; at < due || at > due+time.Millisecond {
				t.Fatalf("update %d issued at %v: want %v (1ms late at most)", u, at, due)
			}
		}
		if !r.KeptUp || r.Missed != 0 || r.LagMax != 0 || r.Rate != 100 || r.Wall < 490*time.Millisecond {
			t.Fatalf("a run that kept up reported %+v", r)
		}
	})
}

// A paced run whose reconciler falls behind (20ms per update at 10ms
// between updates) is flagged by its lag.
func TestPacedRunFallingBehindIsFlagged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		queue := make(chan func(), 50)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for pass := range queue {
				time.Sleep(20 * time.Millisecond)
				pass()
			}
		}()
		r := pacedRun(t, func(p *Plan, u int) { queue <- func() { reconcile(p, u) } })
		close(queue)
		<-done
		if r.KeptUp || r.LagP99 <= 100*time.Millisecond || r.Missed != 0 {
			t.Fatalf("a reconciler at half the rate reported %+v", r)
		}
	})
}

// A paced run in which updates of one object were merged (only each
// object's last update reconciled) is flagged by its missed updates.
func TestPacedRunWithMergedUpdatesIsFlagged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := pacedRun(t, func(p *Plan, u int) {
			if u >= 40 { // the last update of each of the 10 objects
				reconcile(p, u)
			}
		})
		if r.KeptUp || r.Missed != 40 {
			t.Fatalf("a run that reconciled 10 of 50 updates reported %+v", r)
		}
	})
}

// A paced run whose writer cannot keep its schedule (20ms per update at
// 10ms between updates) is flagged by its slip, though every update is
// reconciled at once.
func TestPacedRunWithASlowWriterIsFlagged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := pacedRun(t, func(p *Plan, u int) {
			time.Sleep(20 * time.Millisecond)
			reconcile(p, u)
		})
		if r.KeptUp || r.Slip <= 100*time.Millisecond || r.LagP99 > 100*time.Millisecond {
			t.Fatalf("a writer at half the rate reported %+v", r)
		}
	})
}

// Without a rate the writer waits for nothing, and the report has no paced
// figures; with one, the report line carries them and the verdict.
func TestFlatOutRunIsNotPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := &Config{Objects: 10, Updates: 50, Workers: 1, Timeout: time.Minute}
		p := NewPlan(cfg)
		var passes atomic.Int64
		passes.Store(10)
		var r Report
		if err := Drive(t.Context(), cfg, p, &passes, func(_ context.Context, u int) error {
			reconcile(p, u)
			return nil
		}, &r); err != nil {
			t.Fatal(err)
		}
		if r.Wall != 0 || r.Rate != 0 || r.KeptUp {
			t.Fatalf("a flat-out run reported %+v", r)
		}
		var b strings.Builder
		r.Write(&b)
		if strings.Contains(b.String(), "rate=") || !strings.Contains(b.String(), " cpu_us_per_pass=") {
			t.Fatalf("a flat-out run's line: %s", b.String())
		}
		b.Reset()
		r.Rate, r.Missed = 100, 3
		r.Write(&b)
		if !strings.Contains(b.String(), " rate=100 ") || !strings.Contains(b.String(), " missed=3 kept_up=0\n") {
			t.Fatalf("a paced run's line: %s", b.String())
		}
	})
}

// A rate needs a lag bound to judge the run by.
func TestValidateRejectsARateWithoutALagBound(t *testing.T) {
	for _, c := range []Config{{Rate: -1}, {Rate: 100}} {
		c.Objects, c.Updates, c.Workers, c.Timeout = 1, 1, 1, time.Minute
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
}

// CPU counts the timed phase only: what the set-up burned before Drive is
// not in the report.
func TestCPUCountsOnlyTheTimedPhase(t *testing.T) {
	cfg := &Config{Objects: 1, Updates: 0, Workers: 1, Timeout: time.Minute}
	p := NewPlan(cfg)
	var passes atomic.Int64
	passes.Store(1)
	setup := CPUTime()
	for x := uint64(1); CPUTime()-setup < 100*time.Millisecond; x = x*6364136223846793005 + 1 {
		runtime.KeepAlive(x)
	}
	var r Report
	if err := Drive(t.Context(), cfg, p, &passes, func(context.Context, int) error { return nil }, &r); err != nil {
		t.Fatal(err)
	}
	if r.CPU >= 50*time.Millisecond {
		t.Fatalf("CPU %v for a timed phase with nothing to do, after a set-up of 100ms", r.CPU)
	}
}

// The meter counts goroutine runs: two goroutines that hand a token to each
// other 10,000 times are put to run about 20,000 times.
func TestMeterCountsGoroutineRuns(t *testing.T) {
	ping, pong := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ping {
			pong <- struct{}{}
		}
	}()
	m := Start()
	for range 10_000 {
		ping <- struct{}{}
		<-pong
	}
	var r Report
	m.Stop(&r)
	close(ping)
	<-done
	if r.Runs < 10_000 || r.Runs > 60_000 {
		t.Fatalf("%d goroutine runs for 10,000 round trips: want about 20,000", r.Runs)
	}
}

// The live heap at rest is measured RestAfter past the drain: what a
// library holds only until its cache catches up (32 MiB let go 100ms
// after the drain) counts in the drain's live heap, not at rest.
func TestRestLiveIsMeasuredOnceCaughtUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var held atomic.Pointer[[]byte]
		var wg sync.WaitGroup
		r := pacedRun(t, func(p *Plan, u int) {
			if u == 0 {
				b := make([]byte, 32<<20)
				held.Store(&b)
				wg.Go(func() {
					<-p.Done()
					time.Sleep(100 * time.Millisecond)
					held.Store(nil)
				})
			}
			reconcile(p, u)
		})
		wg.Wait()
		if r.DrainLive < 32<<20 || r.RestLive > r.DrainLive-16<<20 {
			t.Fatalf("live heap at the drain %d, at rest %d: want the 32 MiB let go after the drain in the first only", r.DrainLive, r.RestLive)
		}
	})
}

// The set-up's mark work is read after the set-up: a list of 100,000
// nodes, each a heap object with a pointer, kept alive across the run,
// counts in both the heap's objects and its scannable bytes, and the line
// reports them per stored object.
func TestSetupMarkWorkCountsWhatTheSetUpKeeps(t *testing.T) {
	type node struct {
		next *node
		pad  [3]int64
	}
	var head *node
	for range 100_000 {
		head = &node{next: head}
	}
	var r Report
	synctest.Test(t, func(t *testing.T) { r = pacedRun(t, reconcile) })
	runtime.KeepAlive(head)
	if r.SetupObjects < 100_000 || r.SetupScan < 100_000*8 {
		t.Fatalf("set-up heap objects %d, scannable bytes %d: want at least the 100,000 nodes kept, 8 pointer bytes each", r.SetupObjects, r.SetupScan)
	}
	r.Objects = 10 // the side fills it: pacedRun's objects
	var b strings.Builder
	r.Write(&b)
	want := " setup_objs_per_obj=" + strconv.FormatFloat(float64(r.SetupObjects)/10, 'f', 2, 64) + " "
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), " setup_scan_bytes_per_obj=") {
		t.Fatalf("line %s: want%sand setup_scan_bytes_per_obj", b.String(), want)
	}
}

// The set-up is measured, and the updates begin, only once the first
// pass settled: passes still counted after every object had one (a key
// reconciled twice, a queue's last bookkeeping) delay them until none
// is counted for settle.
func TestTimedPhaseWaitsForTheFirstPassToSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := &Config{Objects: 10, Updates: 1, Workers: 1, Timeout: time.Minute}
		p := NewPlan(cfg)
		var passes atomic.Int64
		passes.Store(int64(cfg.Objects))
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 10 { // a pass more every 50ms, for 500ms
				time.Sleep(50 * time.Millisecond)
				passes.Add(1)
			}
		})
		start := time.Now()
		var first time.Duration
		var r Report
		if err := Drive(t.Context(), cfg, p, &passes, func(_ context.Context, u int) error {
			first = time.Since(start)
			p.Wrote(Name(0), 1)
			return nil
		}, &r); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if want := 500*time.Millisecond + settle; first < want {
			t.Fatalf("first update at %v: want it after the passes stopped and settle, %v", first, want)
		}
	})
}

// The meter counts the timed phase's page faults: touching 16 MiB the
// process does not hold faults about once a 4 KiB page.
func TestMeterCountsPageFaults(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("minor faults are counted on Linux")
	}
	// Another test's freed heap, still resident, would serve the
	// allocation without a fault: give it all back first.
	debug.FreeOSMemory()
	m := Start()
	b := make([]byte, 16<<20) // a large object: fresh pages from the OS
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	runtime.KeepAlive(b)
	var r Report
	m.Stop(&r)
	if r.Faults < 1024 {
		t.Fatalf("%d page faults for 16 MiB first touched: want about 4,096", r.Faults)
	}
}

// The meter's GC CPU is that of the cycles the timed phase ran: some for
// cycles marking a heap of pointers, none when no cycle ran, however much
// the phase otherwise spent, and not that of a cycle before it.
func TestMeterCountsTheTimedPhasesGCCPU(t *testing.T) {
	heap := make([]*[4]int, 1<<20) // a heap the mark must walk
	for i := range heap {
		heap[i] = new([4]int)
	}
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	m := Start()
	busy := 0
	for i := range 50_000_000 {
		busy += i & 7
	}
	var idle Report
	m.Stop(&idle)
	if idle.GCCycles != 0 || idle.GCCPU != 0 {
		t.Fatalf("no GC cycle in the timed phase, yet %d cycles and %v of GC CPU (busy %d)", idle.GCCycles, idle.GCCPU, busy)
	}
	m = Start()
	for range 3 {
		runtime.GC()
	}
	var r Report
	m.Stop(&r)
	runtime.KeepAlive(heap)
	if r.GCCycles < 3 || r.GCCPU <= 0 {
		t.Fatalf("3 cycles over %d pointers: %d cycles, %v of GC CPU; want some", len(heap), r.GCCycles, r.GCCPU)
	}
	var b strings.Builder
	r.Updates = 1
	r.Write(&b)
	if want := fmt.Sprintf(" gc_cpu_us_per_event=%.2f ", float64(r.GCCPU.Microseconds())); !strings.Contains(b.String(), want) {
		t.Fatalf("report line %q lacks %q", b.String(), want)
	}
}

// The meter's sys time is the kernel's part of the CPU: little of a phase
// that only computes, some of one that makes system calls, and never more
// than the CPU it is part of.
func TestMeterCountsSysTime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("getrusage's split is read on Linux")
	}
	phase := func(work func()) Report {
		m := Start()
		work()
		var r Report
		m.Stop(&r)
		return r
	}
	sum := 0
	user := phase(func() { // ~50ms
		for i := range 100_000_000 {
			sum += i & 7
		}
	})
	calls := phase(func() { // ~50ms
		for range 200_000 {
			syscall.Getppid()
		}
	})
	if user.Sys > user.CPU/2 {
		t.Errorf("a phase of arithmetic (sum %d): sys %v of CPU %v; want little", sum, user.Sys, user.CPU)
	}
	if calls.Sys <= 0 || calls.Sys > calls.CPU {
		t.Errorf("a phase of 200,000 system calls: sys %v of CPU %v; want some, within it", calls.Sys, calls.CPU)
	}
}

// With a MemProfile, Drive writes the set-up's allocation profile to
// file.setup before the timed phase starts and the whole run's to file
// after the drain: the pair brackets the timed phase.
func TestMemProfileBracketsTheTimedPhase(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		file := filepath.Join(dir, "allocs.prof")
		cfg := &Config{Objects: 10, Updates: 20, Workers: 1, Timeout: time.Minute, MemProfile: file}
		var setupSize int64 = -1
		driveSettled(t, cfg, func() {
			fi, err := os.Stat(file + ".setup")
			if err != nil {
				t.Errorf("at the first update: %v", err)
			} else {
				setupSize = fi.Size()
			}
			if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("at the first update, the run's profile: %v, want not written yet", err)
			}
		})
		if setupSize <= 0 {
			t.Fatalf("set-up profile of %d bytes at the first update", setupSize)
		}
		fi, err := os.Stat(file)
		if err != nil || fi.Size() == 0 {
			t.Fatalf("the run's profile after the drain: %v, %v", fi, err)
		}
	})
}

// A phase in which the live heap never rises past the start's (at 1M
// objects, one that ends no GC cycle) still writes a heap profile: the
// start's, its highest.
func TestHeapProfileIsWrittenWhenTheHeapNeverRises(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		file := filepath.Join(dir, "heap.prof")
		cfg := &Config{Objects: 10, Updates: 20, Workers: 1, Timeout: time.Minute, HeapProfile: file}
		driveSettled(t, cfg, nil) // allocates next to nothing: no higher live heap
		fi, err := os.Stat(file)
		if err != nil || fi.Size() == 0 {
			t.Fatalf("the heap profile after the drain: %v, %v; want the start's", fi, err)
		}
	})
}

// The CPU profile covers the timed phase, as the CPU figure does: it
// stops at the drain, not after the wait of RestAfter and the GC that
// measure the heap at rest. It runs in real time, not in a synctest
// bubble: runtime/pprof's profile writer is no bubble's.
func TestCPUProfileEndsAtTheDrain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpu.prof")
	cfg := &Config{Objects: 10, Updates: 20, Workers: 1, Timeout: time.Minute, Profile: file}
	driveSettled(t, cfg, nil)
	if d := profileDuration(t, file); d <= 0 || d >= RestAfter {
		t.Fatalf("the CPU profile spans %v; want the phase of 20 updates, well under RestAfter (%v), which Drive waits after the drain", d, RestAfter)
	}
}

// profileDuration returns the duration a pprof profile file records
// (profile.proto's duration_nanos, field 10; absent when 0).
func profileDuration(t *testing.T, file string) time.Duration {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatal("a malformed profile: bad field key")
		}
		b = b[n:]
		switch key & 7 {
		case 0: // varint
			v, n := binary.Uvarint(b)
			if n <= 0 {
				t.Fatal("a malformed profile: bad varint")
			}
			if key>>3 == 10 {
				return time.Duration(v)
			}
			b = b[n:]
		case 1:
			b = b[min(8, len(b)):]
		case 5:
			b = b[min(4, len(b)):]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				t.Fatal("a malformed profile: bad length")
			}
			b = b[n+int(l):]
		default:
			t.Fatalf("a malformed profile: wire type %d", key&7)
		}
	}
	return 0
}

// driveSettled runs Drive on cfg with the first pass over its objects
// done, each update reconciled at once, and calls atFirst, if not nil,
// before the first update of the timed phase.
func driveSettled(t *testing.T, cfg *Config, atFirst func()) {
	t.Helper()
	p := NewPlan(cfg)
	var passes atomic.Int64
	passes.Store(int64(cfg.Objects))
	var r Report
	if err := Drive(t.Context(), cfg, p, &passes, func(_ context.Context, u int) error {
		if atFirst != nil {
			atFirst()
			atFirst = nil
		}
		reconcile(p, u)
		return nil
	}, &r); err != nil {
		t.Fatal(err)
	}
}

// After a warm-up the timed phase starts after a GC cycle that allocation
// triggered, not after a forced one, with that cycle's garbage swept:
// endOnNaturalCycle returns after an automatic cycle and no forced one,
// on a heap as small as the one it was called with.
func TestTheTimedPhaseStartsAfterANaturalCycle(t *testing.T) {
	live := make([]*[8]int64, 1<<18) // 16 MiB of objects the cycles keep
	for i := range live {
		live[i] = new([8]int64)
	}
	runtime.GC()
	auto0, _, heap0 := gcState()
	forced0 := forcedCycles()
	if err := endOnNaturalCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	auto, _, heap := gcState()
	runtime.KeepAlive(live)
	if auto == auto0 {
		t.Fatalf("no automatic GC cycle ended (%d before and after)", auto0)
	}
	if forced := forcedCycles(); forced != forced0 {
		t.Fatalf("%d forced GC cycles during the wait, want none", forced-forced0)
	}
	if heap > heap0+heap0/16+4<<20 {
		t.Fatalf("heap %d MiB on return, %d MiB before: want the garbage swept", heap>>20, heap0>>20)
	}
}

// With the GC off no cycle would come: endOnNaturalCycle returns at once.
func TestNoNaturalCycleIsAwaitedWithTheGCOff(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	auto0, pauses0, _ := gcState()
	if err := endOnNaturalCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if auto, pauses, _ := gcState(); auto != auto0 || pauses != pauses0 {
		t.Fatalf("GC off: %d automatic cycles and %d pauses since the call, want none", auto-auto0, pauses-pauses0)
	}
}

// A cancelled context ends the wait with its error.
func TestNaturalCycleWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := endOnNaturalCycle(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("endOnNaturalCycle with a cancelled context: %v, want context.Canceled", err)
	}
}

func forcedCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
