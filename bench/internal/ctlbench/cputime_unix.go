//go:build unix

package ctlbench

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+sys time so far.
func cpuTime() time.Duration {
	cpu, _, _ := usage()
	return cpu
}

// usage is the process's user+sys time, its sys time alone and its minor
// page faults so far.
func usage() (cpu, sys time.Duration, faults int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano()), int64(ru.Minflt)
}
