// Command shardproof is one replica of a sharded Loop on etcd, made to be
// measured: main_test.go starts three or more of them as real processes
// against an embedded etcd, kills one with SIGKILL, and checks from the
// store and from each process's record file that every object converged,
// that no two processes reconciled one key at once, and that the store
// accepted no write from a process that no longer held the key's shard.
//
// Usage:
//
//	shardproof -etcd host:port -replica NAME -record FILE [-mode items|keys] [-ttl 2s] [-workers 4] [-sleep 0] [-burn 0] [-keys 1000]
//
// In items mode the Loop reconciles the Item objects stored in etcd (a
// Cache over the whole kind, as every replica caches it): an Item whose
// status lags its generation gets its status written, fenced by the shard.
// In keys mode it reconciles the keys k00000.. that it Adds when a line
// "go" arrives on stdin, each by a wait of -sleep (an external call) or
// -burn of CPU, then an Apply of a Result object, fenced by the shard. A
// line "mem" prints the process's heap and RSS after a GC.
//
// The record file has one line per reconcile start ("S key unixnano") and
// end ("E key unixnano fence revision outcome"), written unbuffered so that
// a killed process leaves every line it began.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/shard"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/cache"
	"github.com/steady-go/steady/store/etcdstore"
)

// ItemSpec and ItemStatus are the objects of items mode.
type (
	ItemSpec   struct{ N int }
	ItemStatus struct {
		Gen int64  `json:"gen"`
		By  string `json:"by"`
	}
	// ResultSpec is the object keys mode writes per key.
	ResultSpec struct {
		By string `json:"by"`
	}
)

// loopName is the sharded Loop's name, the same in every replica.
const loopName = "proof"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "shardproof:", err)
		os.Exit(1)
	}
}

type options struct {
	etcd, prefix, replica, record, mode string
	ttl, retry, sleep, burn             time.Duration
	workers, keys                       int
	wholeKind                           bool
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("shardproof", flag.ContinueOnError)
	fs.StringVar(&o.etcd, "etcd", "", "etcd client endpoint host:port (required)")
	fs.StringVar(&o.prefix, "prefix", "/proof/", "etcd key prefix")
	fs.StringVar(&o.replica, "replica", "", "this replica's identity (required)")
	fs.StringVar(&o.record, "record", "", "the record file (required)")
	fs.StringVar(&o.mode, "mode", "items", "items or keys")
	fs.DurationVar(&o.ttl, "ttl", 2*time.Second, "membership lease TTL")
	fs.DurationVar(&o.retry, "retry", 250*time.Millisecond, "how often the replica looks at the members and shards")
	fs.DurationVar(&o.sleep, "sleep", 0, "per reconcile: wait this long (an external call)")
	fs.DurationVar(&o.burn, "burn", 0, "per reconcile: burn this much CPU")
	fs.IntVar(&o.workers, "workers", 4, "reconcile workers")
	fs.IntVar(&o.keys, "keys", 1000, "keys mode: the keys added on \"go\"")
	fs.BoolVar(&o.wholeKind, "whole-kind", false, "cache every Item, not only those of the shards held")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.etcd == "" || o.replica == "" || o.record == "" || (o.mode != "items" && o.mode != "keys") {
		return errors.New("-etcd, -replica, -record are required and -mode is items or keys")
	}
	rec, err := os.OpenFile(o.record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer rec.Close()

	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{o.etcd}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	b, err := etcdstore.New(cli, etcdstore.WithPrefix(o.prefix))
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sh, err := shard.New(b, loopName, o.replica, shard.WithTTL(o.ttl), shard.WithRetryPeriod(o.retry), shard.WithLogger(log))
	if err != nil {
		return err
	}
	r := &recorder{f: rec}
	work := func() {
		if o.sleep > 0 {
			time.Sleep(o.sleep)
		}
		if o.burn > 0 {
			burn(o.burn)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var src reconcile.Source[string]
	var rf reconcile.Func[string]
	var cached func() int
	switch o.mode {
	case "items":
		st, err := store.New[ItemSpec, ItemStatus](b, "Item")
		if err != nil {
			return err
		}
		var copts []cache.Option
		if !o.wholeKind {
			copts = append(copts, cache.WithKeep(sh.Caches)) // only the shards held
		}
		c := cache.New[ItemSpec, ItemStatus](st, copts...)
		cached = c.Len
		go func() { _ = c.Run(ctx) }()
		src = reconcile.FromStore(c, st)
		w := st.As(loopName) // the controller is one field manager, whichever replica writes
		rf = func(ctx context.Context, name string) (reconcile.Result, error) {
			defer r.start(name)()
			obj, ok := c.Get(name)
			if !ok || obj.Status.Gen == obj.Meta.Generation {
				return reconcile.Result{}, nil
			}
			work()
			res, err := w.ApplyStatus(ctx, name, ItemStatus{Gen: obj.Meta.Generation, By: o.replica}, nil, store.WithGeneration(obj.Meta.Generation))
			r.wrote(ctx, name, res.Revision, err)
			return reconcile.Result{}, err
		}
	case "keys":
		st, err := store.New[ResultSpec, struct{}](b, "Result")
		if err != nil {
			return err
		}
		cached = func() int { return 0 }
		w := st.As(loopName) // the controller is one field manager, whichever replica writes
		rf = func(ctx context.Context, name string) (reconcile.Result, error) {
			defer r.start(name)()
			work()
			res, err := w.Apply(ctx, name, ResultSpec{By: o.replica})
			r.wrote(ctx, name, res.Revision, err)
			return reconcile.Result{}, err
		}
	}
	loop, err := reconcile.New(loopName, rf, src, reconcile.WithSharding(sh), reconcile.WithWorkers(o.workers), reconcile.WithLogger(log))
	if err != nil {
		return err
	}
	go func() { // commands; EOF on stdin stops the replica
		defer cancel()
		in := bufio.NewScanner(stdin)
		for in.Scan() {
			switch in.Text() {
			case "go":
				for i := range o.keys {
					loop.Add(fmt.Sprintf("k%05d", i))
				}
			case "mem":
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				fmt.Fprintf(stdout, "mem heap=%d rss=%d cached=%d\n", m.HeapInuse, rss(), cached())
			}
		}
	}()
	fmt.Fprintf(stdout, "started %s\n", o.replica)
	err = loop.Run(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// recorder writes the record file, one write(2) per line.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func (r *recorder) line(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = fmt.Fprintf(r.f, format+"\n", args...)
}

// start records a reconcile's start and returns what records its end.
func (r *recorder) start(key string) func() {
	r.line("S %s %d", key, time.Now().UnixNano())
	return func() { r.line("X %s %d", key, time.Now().UnixNano()) }
}

// wrote records a write's fence, revision and outcome.
func (r *recorder) wrote(ctx context.Context, key string, rev int64, err error) {
	f, _ := store.FenceFrom(ctx)
	outcome := "ok"
	switch {
	case errors.Is(err, store.ErrFenced):
		outcome = "fenced"
	case err != nil:
		outcome = "error:" + strings.ReplaceAll(err.Error(), " ", "_")
	}
	r.line("W %s %d %d %d %s", key, time.Now().UnixNano(), f.Revision, rev, outcome)
}

// burn spends about d of CPU.
func burn(d time.Duration) {
	var h [32]byte
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 100 {
			h = sha256.Sum256(h[:])
		}
	}
}

// rss reads VmRSS from /proc/self/status, in bytes (0 where there is none).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
