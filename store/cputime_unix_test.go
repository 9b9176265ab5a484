//go:build unix

package store_test

import (
	"syscall"
	"testing"
	"time"
)

// typedBenchCPU returns the CPU time the process has used, user and system.
func typedBenchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportTypedCPU adds a cpu-ns/op metric: process CPU time per iteration
// since start. On a loaded machine wall-clock ns/op also counts time spent
// waiting for a core; this counts only work (GC included).
func reportTypedCPU(b *testing.B, start time.Duration) {
	if b.N > 0 && start > 0 {
		b.ReportMetric(float64(typedBenchCPU()-start)/float64(b.N), "cpu-ns/op")
	}
}
