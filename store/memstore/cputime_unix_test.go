//go:build unix

package memstore_test

import (
	"syscall"
	"testing"
	"time"
)

// processCPU returns the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-ns/op metric: process CPU time per iteration since
// start. On a shared machine wall-clock ns/op counts time spent waiting for
// a core; this counts only work (all goroutines, GC included).
func reportCPU(b *testing.B, start time.Duration, ops int) {
	if ops > 0 && start > 0 {
		b.ReportMetric(float64(processCPU()-start)/float64(ops), "cpu-ns/op")
	}
}
