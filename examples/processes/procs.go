//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// markerEnv is the environment variable that names the fleet, instance,
// instance UID and command a process was started for:
// STEADY_PROCESS=fleet/name/uid/hash, hash being commandHash of its argv.
// The controller finds its processes by reading it back from
// /proc/<pid>/environ, so it needs no memory of what it started: a
// restarted controller adopts its processes, and sweeps the ones nobody
// wants any more.
const markerEnv = "STEADY_PROCESS"

// proc is one running OS process of the fleet, as /proc shows it.
type proc struct {
	PID  int
	Name string // the instance it was started for
	UID  string // that instance's UID
	Hash string // commandHash of the argv it was started with
	Args []string
}

// commandHash identifies an argv in a marker, so a changed command is seen
// as a different process (/proc/<pid>/cmdline cannot tell: an interpreter
// rewrites it).
func commandHash(argv []string) string {
	h := fnv.New32a()
	for _, a := range argv {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

// osProcs is the observed side: it starts, kills and lists the fleet's OS
// processes. It stands for the operating system, so it outlives controller
// restarts; the controllers remember nothing about processes and ask it to
// scan /proc instead.
//
// Every process is started in its own process group and with the parent-death
// signal set to SIGKILL, so it dies with this program even on a crash;
// shutdown kills whatever is left of the fleet and reaps it.
type osProcs struct {
	fleet string
	// exits receives the instance name of every process started here that
	// exits (a hint; it is dropped when nobody reads it in time).
	exits chan string
	log   func(format string, args ...any)

	// spawn orders starts before scans: a scan never sees a process whose
	// start is not in the timeline yet.
	spawn sync.RWMutex

	wg   sync.WaitGroup // reapers
	mu   sync.Mutex
	live map[int]string // PIDs started here and not reaped yet, for shutdown only
}

func newOSProcs(fleet string, log func(string, ...any)) *osProcs {
	return &osProcs{fleet: fleet, exits: make(chan string, 256), log: log, live: map[int]string{}}
}

// start runs argv for the instance name (UID uid) and returns its PID.
// A reaper goroutine waits for it, so it never lingers as a zombie.
func (o *osProcs) start(name, uid string, argv []string) (int, error) {
	if len(argv) == 0 {
		return 0, errors.New("empty command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), markerEnv+"="+o.fleet+"/"+name+"/"+uid+"/"+commandHash(argv))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	o.spawn.Lock()
	defer o.spawn.Unlock()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	o.log("os: start %s pid %d: %q", name, pid, argv)
	o.mu.Lock()
	o.live[pid] = name
	o.mu.Unlock()
	o.wg.Go(func() {
		err := cmd.Wait()
		o.mu.Lock()
		delete(o.live, pid)
		o.mu.Unlock()
		why := "exited"
		if err != nil {
			why = err.Error()
		}
		o.log("os: pid %d (%s) ended: %s", pid, name, why)
		select {
		case o.exits <- name:
		default:
		}
	})
	return pid, nil
}

// kill sends SIGKILL to the process group of pid (the process and anything
// it started). A process that is already gone is not an error.
func (o *osProcs) kill(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		err = syscall.Kill(pid, syscall.SIGKILL)
	}
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// scan lists the fleet's live processes by reading /proc/<pid>/environ
// of every process this user may read; zombies (whose environ is empty)
// and other users' processes are skipped. The result is in PID order.
func (o *osProcs) scan() ([]proc, error) {
	o.spawn.RLock()
	defer o.spawn.RUnlock()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	prefix := []byte(markerEnv + "=" + o.fleet + "/")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ESRCH) {
				continue // gone, or not ours
			}
			return nil, err
		}
		value, ok := envValue(env, prefix)
		if !ok {
			continue
		}
		parts := strings.Split(value, "/")
		if len(parts) != 3 || parts[0] == "" {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue // it ended between the two reads
		}
		out = append(out, proc{PID: pid, Name: parts[0], UID: parts[1], Hash: parts[2], Args: splitNUL(cmdline)})
	}
	return out, nil
}

// shutdown kills every process of the fleet still running, those /proc
// shows and those started here (even if their environment was rewritten),
// and waits until the ones started here are reaped.
func (o *osProcs) shutdown() error {
	procs, err := o.scan()
	errs := []error{err}
	pids := map[int]string{}
	for _, p := range procs {
		pids[p.PID] = p.Name
	}
	o.mu.Lock()
	for pid, name := range o.live {
		pids[pid] = name
	}
	o.mu.Unlock()
	for pid, name := range pids {
		o.log("os: shutdown kills pid %d (%s)", pid, name)
		errs = append(errs, o.kill(pid))
	}
	o.wg.Wait()
	return errors.Join(errs...)
}

// envValue finds the variable starting with prefix in a NUL-separated
// environment block and returns what follows the prefix.
func envValue(env, prefix []byte) (string, bool) {
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), true
		}
	}
	return "", false
}

func splitNUL(b []byte) []string {
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// String formats p for the timeline.
func (p proc) String() string { return fmt.Sprintf("%s=%d", p.Name, p.PID) }
