package boltstore_test

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
)

var soak = flag.Int("soak", 0, "TestKill9: kill the writer this many times instead of 20 (a long soak: -soak 500)")

// The child writer of TestKill9 runs TestKill9Child with these set.
const (
	envKillFile  = "BOLTSTORE_KILL_FILE"
	envKillRound = "BOLTSTORE_KILL_ROUND"
)

// ack is one write the child reported after its Txn returned.
type ack struct {
	rev   int64
	del   bool
	key   string
	value string
}

// TestKill9 proves that an acknowledged write survives kill -9. It runs a
// writer in a child process (this test binary, running TestKill9Child): four
// goroutines doing compare-and-swap puts and deletes, each reporting a write
// on stdout only after its Txn returned. After a random number of reports
// it kills the child with SIGKILL, mid-storm, and reopens the file: Open
// must accept it; every acknowledged write must be in the history at its
// revision with its value; the live keys must be exactly the replay of the
// whole history (nothing half-applied); and revisions must continue upwards
// in the next round. While the child runs, opening the file from this
// process must fail with ErrLocked. 20 kills by default; -soak N for more.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	kills := 20
	if *soak > 0 {
		kills = *soak
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	path := filepath.Join(t.TempDir(), "steady.db")

	s, err := boltstore.Open(path, boltstore.WithHistorySize(1<<30))
	require.NoError(t, err)
	head := put(t, s, "init", "") // revision 1, so a Watch from 1 replays every child write
	require.NoError(t, s.Close())

	var acks []ack
	for round := range kills {
		got := runAndKill(t, path, round, 1+rng.IntN(250))
		require.NotEmpty(t, got, "round %d: the child acknowledged nothing", round)
		require.Greater(t, got[0].rev, head, "round %d: revisions continue upwards after a restart", round)
		acks = append(acks, got...)
		head = checkAfterKill(t, path, acks)
	}
	t.Logf("%d kills, %d acknowledged writes, file at revision %d", kills, len(acks), head)
}

// runAndKill starts the child writer on path, checks that the file is
// locked against this process, kills the child with SIGKILL once it has
// acknowledged n writes, and returns every write it acknowledged.
func runAndKill(t *testing.T, path string, round, n int) []ack {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9Child$", "-test.count=1")
	cmd.Env = append(os.Environ(), envKillFile+"="+path, envKillRound+"="+strconv.Itoa(round))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(out)
	var acks []ack
	killed := false
	for {
		line, err := r.ReadString('\n')
		if err != nil { // EOF; a line without its newline was cut by the kill
			break
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "ready":
			_, err := boltstore.Open(path, boltstore.WithLockTimeout(0))
			require.ErrorIs(t, err, boltstore.ErrLocked, "a second process cannot open the file")
		case strings.HasPrefix(line, "ack "):
			acks = append(acks, parseAck(t, line))
			if len(acks) == n && !killed {
				require.NoError(t, cmd.Process.Kill()) // SIGKILL
				killed = true
			}
		}
	}
	err = cmd.Wait()
	require.True(t, killed, "the child exited by itself: %v", err)
	return acks
}

func parseAck(t *testing.T, line string) ack {
	t.Helper()
	f := strings.Fields(line)
	require.Len(t, f, 6, "ack line %q", line) // ack REV put|del KEY TAG SIZE
	rev, err := strconv.ParseInt(f[1], 10, 64)
	require.NoError(t, err)
	size, err := strconv.Atoi(f[5])
	require.NoError(t, err)
	a := ack{rev: rev, del: f[2] == "del", key: f[3]}
	if !a.del {
		a.value = childValue(f[4], size)
	}
	return a
}

// childValue is the value the child writes: a tag naming the writer and its
// write, padded with x to size bytes.
func childValue(tag string, size int) string {
	return tag + strings.Repeat("x", max(size-len(tag), 0))
}

// checkAfterKill opens the file the child was killed on, checks it against
// the acknowledged writes, and returns its revision.
func checkAfterKill(t *testing.T, path string, acks []ack) int64 {
	t.Helper()
	s, err := boltstore.Open(path, boltstore.WithHistorySize(1<<30))
	require.NoError(t, err, "the file opens after kill -9")
	defer s.Close()
	head := s.Revision()
	require.GreaterOrEqual(t, head, acks[len(acks)-1].rev, "the revision covers every acknowledged write")

	// The whole history, revision 2 to head.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	history := map[int64]kv.Event{}
	if head > 1 {
		ch, err := s.Watch(ctx, "", 1)
		require.NoError(t, err)
		for want := int64(2); want <= head; {
			ev := recv(t, ch)
			require.NoError(t, ev.Err)
			if ev.Progress {
				continue
			}
			require.Equal(t, want, ev.Revision, "the history is contiguous")
			history[ev.Revision] = ev
			want++
		}
	}
	for _, a := range acks {
		ev, ok := history[a.rev]
		require.True(t, ok, "acknowledged write at %d is in the history", a.rev)
		require.Equal(t, a.key, ev.KV.Key, "acknowledged write at %d", a.rev)
		if a.del {
			require.Equal(t, kv.EventDelete, ev.Type, "acknowledged delete at %d", a.rev)
		} else {
			require.Equal(t, kv.EventPut, ev.Type, "acknowledged put at %d", a.rev)
			require.Equal(t, a.value, string(ev.KV.Value), "acknowledged put at %d", a.rev)
		}
	}

	// Replaying the history gives exactly the live keys.
	want := map[string]kv.KeyValue{"init": {Key: "init", CreateRevision: 1, ModRevision: 1}}
	for r := int64(2); r <= head; r++ {
		ev := history[r]
		if ev.Type == kv.EventDelete {
			delete(want, ev.KV.Key)
			continue
		}
		want[ev.KV.Key] = ev.KV
	}
	live, err := s.List(t.Context(), "", kv.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, head, live.Revision)
	require.Len(t, live.KVs, len(want), "live keys = the replay of the history")
	for _, kvp := range live.KVs {
		w := want[kvp.Key]
		require.Equal(t, w.ModRevision, kvp.ModRevision, "key %q", kvp.Key)
		require.Equal(t, w.CreateRevision, kvp.CreateRevision, "key %q", kvp.Key)
		require.Equal(t, string(w.Value), string(kvp.Value), "key %q", kvp.Key)
	}
	return head
}

// TestKill9Child is the writer TestKill9 runs in a child process and kills.
// It does nothing in a normal test run.
func TestKill9Child(t *testing.T) {
	path := os.Getenv(envKillFile)
	if path == "" {
		t.Skip("the child writer of TestKill9")
	}
	round, err := strconv.Atoi(os.Getenv(envKillRound))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	s, err := boltstore.Open(path, boltstore.WithHistorySize(1<<30))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(os.Stdout, format, args...); err != nil {
			os.Exit(3)
		}
	}
	report("ready\n")
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), uint64(round)))
			for i := 0; ; i++ {
				key := fmt.Sprintf("k/%d/%02d", g, rng.IntN(20))
				cond := kv.Cond{Key: key, Target: kv.CreateRevision} // absent
				kvp, err := s.Get(ctx, key)
				if err == nil {
					cond = kv.Cond{Key: key, Target: kv.ModRevision, Revision: kvp.ModRevision}
				} else if !errors.Is(err, store.ErrNotFound) {
					fmt.Fprintln(os.Stderr, "child:", err)
					os.Exit(2)
				}
				if err == nil && rng.IntN(5) == 0 {
					rev, err := s.Txn(ctx, []kv.Cond{cond}, kv.Write{Kind: kv.WriteDelete, Key: key})
					if errors.Is(err, kv.ErrCondFailed) {
						continue // not acknowledged; the parent expects nothing of it
					}
					if err != nil {
						fmt.Fprintln(os.Stderr, "child:", err)
						os.Exit(2)
					}
					report("ack %d del %s - 0\n", rev, key)
					continue
				}
				tag := fmt.Sprintf("r%d.g%d.%d.", round, g, i)
				size := rng.IntN(6000) // some values overflow a 4 KiB page
				rev, err := s.Txn(ctx, []kv.Cond{cond}, kv.Write{Kind: kv.WritePut, Key: key, Value: []byte(childValue(tag, size))})
				if errors.Is(err, kv.ErrCondFailed) {
					continue
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "child:", err)
					os.Exit(2)
				}
				report("ack %d put %s %s %d\n", rev, key, tag, size)
			}
		})
	}
	wg.Wait() // never: the writers run until the parent kills the process
}
