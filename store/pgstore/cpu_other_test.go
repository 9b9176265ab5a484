//go:build !linux

package pgstore_test

import "time"

// workCPU is the linux one's stand-in: no figure.
func workCPU(port int) (time.Duration, bool) { return 0, false }
