package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/steady-go/steady/examples/internal/embedetcd"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/steady-go/steady/examples/internal/cli"
	"github.com/steady-go/steady/store/cache"
)

func TestMain(m *testing.M) {
	os.Setenv(cache.MutationDetectorEnv, "1") // every Cache checks that nobody modifies what it serves
	goleak.VerifyTestMain(m,
		// Process-wide goroutines that the embedded etcd server and gRPC
		// start once and never stop; not per-test leaks.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/pkg/v3/schedule.(*fifo).run"),
		goleak.IgnoreAnyFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
	)
}

// The etcd mode against a real etcd member, embedded in the test process on
// a loopback port (as store/etcdstore's tests start theirs). These tests
// run on real time: etcd cannot live in a synctest bubble.

// output is a writer for run that a test can wait on.
type output struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func newOutput() *output { return &output{changed: make(chan struct{}, 1)} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	o.b.Write(p)
	o.mu.Unlock()
	select {
	case o.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// waitFor waits until the output contains s, and fails the test if it does
// not within d.
func (o *output) waitFor(t *testing.T, s string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for !strings.Contains(o.String(), s) {
		select {
		case <-o.changed:
		case <-deadline:
			t.Fatalf("no %q within %v in:\n%s", s, d, o.String())
		}
	}
}

// replica runs the demo as one replica until stop is called, which
// returns run's error.
func replica(t *testing.T, args []string) (out *output, stop func() error) {
	t.Helper()
	out = newOutput()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, args, out) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-errc })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return out, stop
}

func etcdClient(t *testing.T, addr string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestEtcdConvergesDespiteEveryFault(t *testing.T) {
	addr := embedetcd.Start(t, fastElections)
	out, stop := replica(t, []string{"-etcd", addr, "-replica=a", "-ttl=2s", "-objects=10", "-chaos=1s", "-seed=2"})
	out.waitFor(t, "converged: all 10 groups match the store", 30*time.Second)
	require.NoError(t, stop(), "interrupted after converging: exit 0")

	text := out.String()
	require.Contains(t, text, fmt.Sprintf(`fleet: replica a on etcd %s, keys under "/steady-fleet/", lease TTL 2s`, addr))
	require.Contains(t, text, "! replica a leads: term fenced at etcd revision ")
	require.Regexp(t, `! controller crashed mid-reconcile, right after write #\d+`, text)
	require.Contains(t, text, "! faults stopped")
	require.Regexp(t, `! replica a converged the fleet [\d.]+s into its term \d`, text)

	// The groups, and the election key, are in etcd under the prefix.
	resp, err := etcdClient(t, addr).Get(t.Context(), "/steady-fleet/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	var groups int
	for _, kv := range resp.Kvs {
		if strings.Contains(string(kv.Key), "web-00") {
			groups++
		}
	}
	require.Equal(t, 1, groups, "group web-00 is stored once: %d keys under the prefix", len(resp.Kvs))
}

// Two replicas: one leads and converges, the other stands by; when the
// leader stops, the standby takes over and converges its own fleet from the
// stored state alone. A second start reuses the groups the first created.
func TestEtcdFailoverToStandby(t *testing.T) {
	addr := embedetcd.Start(t, fastElections)
	common := []string{"-etcd", addr, "-ttl=2s", "-objects=10", "-faults=off"}
	outA, stopA := replica(t, append([]string{"-replica=a"}, common...))
	outA.waitFor(t, "converged: all 10 groups match the store", 30*time.Second)

	outB, stopB := replica(t, append([]string{"-replica=b"}, common...))
	outB.waitFor(t, "! standby: replica a leads; this one takes over when that lease lapses (TTL 2s)", 10*time.Second)
	require.NotContains(t, outB.String(), "replica b leads")

	stopped := time.Now()
	require.NoError(t, stopA(), "the leader stops cleanly after converging")
	// A stopping leader revokes its lease; a killed one's lapses within
	// the TTL (store/etcdstore tests that case). Either way: TTL + 2s.
	outB.waitFor(t, "! replica b leads: term fenced at etcd revision ", 2*time.Second+2*time.Second)
	require.Less(t, time.Since(stopped), 4*time.Second)
	outB.waitFor(t, "converged: all 10 groups match the store", 30*time.Second)
	require.NoError(t, stopB())

	// b created every instance in its own (empty) fleet: the rollout was
	// redone from the store, with nothing handed over but the groups.
	textB := outB.String()
	wanted := number(t, textB, `(\d+) instances wanted`)
	require.Equal(t, number(t, outA.String(), `(\d+) instances wanted`), wanted, "b reused a's groups")
	require.Contains(t, textB, fmt.Sprintf("fleet writes (%d creates, 0 deletes)", wanted))
}

func TestEtcdBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-etcd is required"}, {[]string{"-etcd=,"}, "empty endpoint"},
		{[]string{"-etcd=127.0.0.1:1", "-ttl=1s"}, "-ttl 1s"}, {[]string{"-etcd=127.0.0.1:1", "-replica="}, "-replica"},
		{[]string{"-etcd=127.0.0.1:1", "-prefix="}, "-prefix"},
		{[]string{"-etcd=127.0.0.1:1", "-data=x"}, "-data"}, // the groups live in etcd, not in a file
		{[]string{"-etcd=127.0.0.1:1", "-objects=0"}, "-objects 0"},
	} {
		err := run(t.Context(), tc.args, &strings.Builder{})
		require.Equal(t, 2, cli.ExitCode(err), "args %q: %v", tc.args, err)
		require.ErrorContains(t, err, tc.want, "args %q", tc.args)
	}
	var out strings.Builder
	require.Equal(t, 0, cli.ExitCode(run(t.Context(), []string{"-h"}, &out)))
	require.Contains(t, out.String(), "-replica")
}

func TestEtcdUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	err = run(t.Context(), []string{"-etcd", addr, "-objects=1"}, &strings.Builder{})
	require.ErrorContains(t, err, "etcd "+addr+" does not answer")
}

// A replica that dies without a word (kill -9, or cut off from etcd) stops
// renewing its lease: its own term ends at 2/3 of the TTL, and the standby
// takes over within the TTL plus 2s. Replica a reaches etcd through a proxy
// that the test cuts; to etcd that is a dead process.
func TestEtcdFailoverWhenTheLeaderIsCutOff(t *testing.T) {
	addr := embedetcd.Start(t, fastElections)
	p := startProxy(t, addr)
	common := []string{"-ttl=2s", "-objects=10", "-faults=off"}
	outA, stopA := replica(t, append([]string{"-etcd", p.addr(), "-replica=a"}, common...))
	outA.waitFor(t, "converged: all 10 groups match the store", 30*time.Second)
	outB, stopB := replica(t, append([]string{"-etcd", addr, "-replica=b"}, common...))
	outB.waitFor(t, "! standby: replica a leads", 10*time.Second)

	cut := time.Now()
	p.cut()
	outA.waitFor(t, "! replica a's term ended (etcdstore: leadership term ended: lease not renewed)", 2*time.Second)
	outB.waitFor(t, "! replica b leads: term fenced at etcd revision ", 2*time.Second+2*time.Second)
	require.Less(t, time.Since(cut), 4*time.Second, "takeover within TTL + 2s")
	outB.waitFor(t, "converged: all 10 groups match the store", 30*time.Second)
	require.NoError(t, stopB())
	require.NoError(t, stopA(), "a cut-off replica that no longer leads exits 0")
}

// proxy forwards TCP connections to an address until cut.
type proxy struct {
	l     net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
	done  bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{l: l}
	p.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.pipe(c, target) })
		}
	})
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) pipe(c net.Conn, target string) {
	u, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		c.Close()
		u.Close()
		return
	}
	p.conns = append(p.conns, c, u)
	p.mu.Unlock()
	p.wg.Go(func() { _, _ = io.Copy(u, c); u.Close(); c.Close() })
	_, _ = io.Copy(c, u)
	c.Close()
	u.Close()
}

// cut closes the listener and every connection, and waits for the copies.
func (p *proxy) cut() {
	p.mu.Lock()
	p.done = true
	conns := p.conns
	p.mu.Unlock()
	p.l.Close()
	for _, c := range conns {
		c.Close()
	}
	p.wg.Wait()
}

func number(t *testing.T, text, pattern string) int {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	require.NotNil(t, m, "no %s in\n%s", pattern, text)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// fastElections gives the member a 10ms tick and a 100ms election timeout,
// so a test that cuts a replica off does not wait on etcd's defaults.
func fastElections(cfg *embed.Config) { cfg.TickMs, cfg.ElectionMs = 10, 100 }
