package reconcile

// activeWorkersReader is a metrics.Loop that reads the number of busy workers
// when it is scraped instead of being told at every change: see metrics.Loop.ActiveWorkers.
type activeWorkersReader interface {
	ActiveWorkersFunc(controller string, busy func() int)
}
