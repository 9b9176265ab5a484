//go:build !unix

package etcdstore_test

import "time"

// processCPU returns 0 where the process CPU time is not measured; the
// benchmarks then report no cpu-ns/op.
func processCPU() time.Duration { return 0 }
