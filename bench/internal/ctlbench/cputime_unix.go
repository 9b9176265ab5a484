//go:build unix

package ctlbench

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+sys time so far.
func cpuTime() time.Duration {
	cpu, _ := usage()
	return cpu
}

// usage is the process's user+sys time and its minor page faults so far.
func usage() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), int64(ru.Minflt)
}
