//go:build !unix

package ctlbench

import "time"

// cpuTime is 0 where getrusage is missing: CPU figures read 0 there.
func cpuTime() time.Duration { return 0 }

// usage is zero where getrusage is missing: CPU and fault figures read 0 there.
func usage() (cpu, sys time.Duration, faults int64) { return 0, 0, 0 }
