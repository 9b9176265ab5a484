//go:build !linux

package pgstore_test

import "time"

// selfCPU, serverCPU and backendCPU are the linux ones' stand-ins: no figure.
func selfCPU() (time.Duration, bool) { return 0, false }

func serverCPU(port int) (time.Duration, bool) { return 0, false }

func backendCPU(pid int) (time.Duration, bool) { return 0, false }
