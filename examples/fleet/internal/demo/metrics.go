package demo

import (
	"sync"
	"time"

	steadymetrics "github.com/steady-go/steady/metrics"
)

// metrics counts what the summary prints: reconciles, failed reconciles and
// Stalled reports by reason. It embeds steadymetrics.NopLoop for the hooks
// it does not need. The controller name is ignored: the demo runs one Loop.
type metrics struct {
	steadymetrics.NopLoop
	mu         sync.Mutex
	reconciles int
	errors     int
	stalled    map[string]int
}

func newMetrics() *metrics { return &metrics{stalled: map[string]int{}} }

// ReconcileDone counts a reconcile.
func (m *metrics) ReconcileDone(string, string, time.Duration) {
	m.mu.Lock()
	m.reconciles++
	m.mu.Unlock()
}

// ReconcileError counts a reconcile that returned an error.
func (m *metrics) ReconcileError(string, bool) {
	m.mu.Lock()
	m.errors++
	m.mu.Unlock()
}

// Stalled counts a Stalled report by reason.
func (m *metrics) Stalled(_, reason string) {
	m.mu.Lock()
	m.stalled[reason]++
	m.mu.Unlock()
}

// Reconciles returns the number of reconciles so far.
func (m *metrics) Reconciles() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reconciles
}

// Errors returns the number of failed reconciles so far.
func (m *metrics) Errors() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.errors
}

// StalledCount returns how many Stalled reports had the reason.
func (m *metrics) StalledCount(reason string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stalled[reason]
}

var _ steadymetrics.Loop = (*metrics)(nil)
