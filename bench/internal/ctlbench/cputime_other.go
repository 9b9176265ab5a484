//go:build !unix

package ctlbench

import "time"

// cpuTime is 0 where getrusage is missing: CPU figures read 0 there.
func cpuTime() time.Duration { return 0 }
