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

// workCPU returns the CPU time this process and the server's client
// backends (its connections' processes) have used: the work of a round
// trip on both ends, which a loaded machine distorts less than wall time.
// Reading the server's processes needs /proc; ok is false without it.
func workCPU(port int) (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	d = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	type proc struct{ ppid, cmd string }
	procs := map[string]proc{}
	stats := map[string][]string{}
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
		cmd, _ := os.ReadFile(dir + "/cmdline")
		pid := filepath.Base(dir)
		procs[pid], stats[pid] = proc{ppid: f[1], cmd: string(cmd)}, f
		if strings.Contains(string(cmd), "postgres") && strings.Contains(string(cmd), flag) {
			master = pid
		}
	}
	if master == "" {
		return d, false
	}
	for pid, p := range procs {
		// A client backend's title names its client's address.
		if p.ppid == master && strings.Contains(p.cmd, "127.0.0.1(") {
			u, _ := strconv.ParseInt(stats[pid][11], 10, 64)
			s, _ := strconv.ParseInt(stats[pid][12], 10, 64)
			d += time.Duration(u+s) * (time.Second / 100) // USER_HZ
		}
	}
	return d, true
}
