//go:build linux

package pgstore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// selfCPU returns the CPU time this process has used.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// backendCPU returns the CPU time server backend pid has used, from its
// schedstat (nanoseconds); ok is false when the kernel keeps none.
func backendCPU(pid int) (time.Duration, bool) {
	ss, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(ss))
	if len(f) == 0 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns), err == nil
}

// serverCPU returns the CPU time the server's client backends (its
// connections' processes) have used: the server's side of a round trip,
// which a loaded machine distorts less than wall time. It reads each
// backend's schedstat (nanoseconds), or its stat (ticks of 10ms, too coarse
// for a short run) where the kernel keeps no schedstat. Reading /proc costs
// milliseconds: the caller reads it outside the window it measures. ok is
// false without /proc or without the server's postmaster.
func serverCPU(port int) (d time.Duration, ok bool) {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	type proc struct {
		ppid, cmd string
		ticks     int64 // utime + stime
	}
	procs := map[string]proc{}
	master := ""
	flag := "\x00-p\x00" + strconv.Itoa(port) + "\x00"
	for _, dir := range dirs {
		st, err := os.ReadFile(dir + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 > len(s) {
			continue
		}
		f := strings.Fields(s[i+2:]) // state, ppid, ..., utime (11), stime (12)
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		cmd, _ := os.ReadFile(dir + "/cmdline")
		procs[dir] = proc{ppid: f[1], cmd: string(cmd), ticks: u + k}
		if strings.Contains(string(cmd), "postgres") && strings.Contains(string(cmd), flag) {
			master = filepath.Base(dir)
		}
	}
	if master == "" {
		return 0, false
	}
	for dir, p := range procs {
		// A client backend's title names its client's address.
		if p.ppid != master || !strings.Contains(p.cmd, "127.0.0.1(") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		if ns, ok := backendCPU(pid); ok {
			d += ns
			continue
		}
		d += time.Duration(p.ticks) * (time.Second / 100) // USER_HZ
	}
	return d, true
}
