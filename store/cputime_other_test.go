//go:build !unix

package store_test

import (
	"testing"
	"time"
)

func typedBenchCPU() time.Duration             { return 0 }
func reportTypedCPU(*testing.B, time.Duration) {}
