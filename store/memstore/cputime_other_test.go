//go:build !unix

package memstore_test

import (
	"testing"
	"time"
)

func processCPU() time.Duration                { return 0 }
func reportCPU(*testing.B, time.Duration, int) {}
