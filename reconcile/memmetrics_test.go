package reconcile

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/steady-go/steady/metrics"
	"github.com/steady-go/steady/queue"
	"github.com/steady-go/steady/reconcile/oscillation"
)

// MemMetrics is a Metrics that keeps everything in memory, for this
// package's tests. The
// zero value is not usable; create one with NewMemMetrics. It is safe for
// concurrent use; every accessor returns a copy.
type MemMetrics struct {
	mu          sync.Mutex
	results     map[[2]string]int // (controller, result) → count
	durations   map[string][]time.Duration
	errors      map[string]int
	terminal    map[string]int
	panics      map[string]int
	active      map[string]int
	maxActive   map[string]int
	maxConc     map[string]int
	converged   map[string][]time.Duration
	unconverged map[string]int
	oscillation map[string]map[oscillation.Kind]int
	stalled     map[[2]string]int
	fenced      map[string]int
	queues      map[string]*MemQueueMetrics
}

// NewMemMetrics returns an empty MemMetrics.
func NewMemMetrics() *MemMetrics {
	return &MemMetrics{
		results: map[[2]string]int{}, durations: map[string][]time.Duration{},
		errors: map[string]int{}, terminal: map[string]int{}, panics: map[string]int{},
		active: map[string]int{}, maxActive: map[string]int{}, maxConc: map[string]int{},
		converged: map[string][]time.Duration{}, unconverged: map[string]int{},
		oscillation: map[string]map[oscillation.Kind]int{}, stalled: map[[2]string]int{},
		fenced: map[string]int{},
		queues: map[string]*MemQueueMetrics{},
	}
}

// ReconcileDone implements metrics.Loop.
func (m *MemMetrics) ReconcileDone(c, result string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.results[[2]string{c, result}]++
	m.durations[c] = append(m.durations[c], d)
}

// ReconcileError implements metrics.Loop.
func (m *MemMetrics) ReconcileError(c string, terminal bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errors[c]++
	if terminal {
		m.terminal[c]++
	}
}

// ReconcilePanic implements metrics.Loop.
func (m *MemMetrics) ReconcilePanic(c string) { m.inc(m.panics, c) }

// ActiveWorkers implements metrics.Loop.
func (m *MemMetrics) ActiveWorkers(c string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active[c] = n
	m.maxActive[c] = max(m.maxActive[c], n)
}

// MaxConcurrency implements metrics.Loop.
func (m *MemMetrics) MaxConcurrency(c string, n int) { m.set(m.maxConc, c, n) }

// Converged implements metrics.Loop.
func (m *MemMetrics) Converged(c string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.converged[c] = append(m.converged[c], d)
}

// Unconverged implements metrics.Loop.
func (m *MemMetrics) Unconverged(c string, n int) { m.set(m.unconverged, c, n) }

// Oscillation implements metrics.Loop.
func (m *MemMetrics) Oscillation(c string, k oscillation.Kind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.oscillation[c] == nil {
		m.oscillation[c] = map[oscillation.Kind]int{}
	}
	m.oscillation[c][k]++
}

// FenceRejected implements metrics.Loop.
func (m *MemMetrics) FenceRejected(c string) { m.inc(m.fenced, c) }

// FenceRejections returns how many fence rejections c reported.
func (m *MemMetrics) FenceRejections(c string) int { return m.get(m.fenced, c) }

// Stalled implements metrics.Loop.
func (m *MemMetrics) Stalled(c, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stalled[[2]string{c, reason}]++
}

func (m *MemMetrics) inc(mp map[string]int, c string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mp[c]++
}

func (m *MemMetrics) set(mp map[string]int, c string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mp[c] = n
}

func (m *MemMetrics) get(mp map[string]int, c string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return mp[c]
}

// QueueMetrics implements Metrics: one MemQueueMetrics per controller.
func (m *MemMetrics) QueueMetrics(c string) queue.Metrics { return m.Queue(c) }

// Queue returns the queue hooks of controller c.
func (m *MemMetrics) Queue(c string) *MemQueueMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[c]
	if q == nil {
		q = &MemQueueMetrics{}
		m.queues[c] = q
	}
	return q
}

// MemQueueMetrics records a queue's hooks in memory. It is safe for
// concurrent use.
type MemQueueMetrics struct {
	mu                  sync.Mutex
	depth, adds, retry  int
	latencies, durs     int
	unfinished, longest time.Duration
}

// Depth implements queue.Metrics.
func (q *MemQueueMetrics) Depth(n int) { q.mu.Lock(); q.depth = n; q.mu.Unlock() }

// Added implements queue.Metrics.
func (q *MemQueueMetrics) Added() { q.mu.Lock(); q.adds++; q.mu.Unlock() }

// QueueLatency implements queue.Metrics.
func (q *MemQueueMetrics) QueueLatency(time.Duration) { q.mu.Lock(); q.latencies++; q.mu.Unlock() }

// WorkDuration implements queue.Metrics.
func (q *MemQueueMetrics) WorkDuration(time.Duration) { q.mu.Lock(); q.durs++; q.mu.Unlock() }

// Unfinished implements queue.Metrics.
func (q *MemQueueMetrics) Unfinished(total, longest time.Duration) {
	q.mu.Lock()
	q.unfinished, q.longest = total, longest
	q.mu.Unlock()
}

// Retry implements queue.Metrics.
func (q *MemQueueMetrics) Retry() { q.mu.Lock(); q.retry++; q.mu.Unlock() }

// Counts returns the number of adds, queue-latency and work-duration
// observations, and the last depth.
func (q *MemQueueMetrics) Counts() (adds, latencies, workDurations, depth int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.adds, q.latencies, q.durs, q.depth
}

// Results returns how many reconciles of controller c ended with result.
func (m *MemMetrics) Results(c, result string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.results[[2]string{c, result}]
}

// Reconciles returns the total number of reconciles of c.
func (m *MemMetrics) Reconciles(c string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.durations[c])
}

// Durations returns the observed reconcile durations of c, in order.
func (m *MemMetrics) Durations(c string) []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.durations[c])
}

// Errors returns the number of reconciles of c that returned an error.
func (m *MemMetrics) Errors(c string) int { return m.get(m.errors, c) }

// TerminalErrors returns the number of Terminal errors of c.
func (m *MemMetrics) TerminalErrors(c string) int { return m.get(m.terminal, c) }

// Panics returns the number of reconciles of c that panicked.
func (m *MemMetrics) Panics(c string) int { return m.get(m.panics, c) }

// ActiveWorkersNow returns the last ActiveWorkers value of c.
func (m *MemMetrics) ActiveWorkersNow(c string) int { return m.get(m.active, c) }

// PeakActiveWorkers returns the highest ActiveWorkers value seen for c.
func (m *MemMetrics) PeakActiveWorkers(c string) int { return m.get(m.maxActive, c) }

// MaxConcurrencyValue returns the last MaxConcurrency value of c.
func (m *MemMetrics) MaxConcurrencyValue(c string) int { return m.get(m.maxConc, c) }

// ConvergeTimes returns the observed times to converge of c, in order.
func (m *MemMetrics) ConvergeTimes(c string) []time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.converged[c])
}

// UnconvergedNow returns the last Unconverged value of c.
func (m *MemMetrics) UnconvergedNow(c string) int { return m.get(m.unconverged, c) }

// Oscillations returns how many oscillations of kind k were detected for c.
func (m *MemMetrics) Oscillations(c string, k oscillation.Kind) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.oscillation[c][k]
}

// StalledCount returns how many times c set Stalled with reason.
func (m *MemMetrics) StalledCount(c, reason string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stalled[[2]string{c, reason}]
}

// Controllers returns the names of the controllers that reported a reconcile.
func (m *MemMetrics) Controllers() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.durations))
}

var _ metrics.Loop = (*MemMetrics)(nil)
