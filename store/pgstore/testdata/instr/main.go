// Command instr counts the server instructions of one conditional update
// of a key, for pgstore's put3 and for the layouts it was measured against
// (variants.sql): each runs on a connection of its own to a server run
// under callgrind, which writes each backend's count when it exits; the
// count of n writes less that of none, over n, is a write's. run.sh starts
// such a server and runs this; the figures are in the schema's comment in
// backend.go. Each write also reports the write-ahead log it added.
//
//	./testdata/instr/run.sh   (in store/pgstore; needs valgrind and PostgreSQL)
package main

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/pgstore"
)

//go:embed variants.sql
var variantsSQL string

const schema = "steady"

var (
	value  = make([]byte, 200)
	leader int64 // the CreateRevision of the key "leader", the fence of "fenced"
)

// A variant writes key at krev on pool (of one connection, be's) and
// returns the key's new revision.
type variant struct {
	name, note string
	write      func(ctx context.Context, pool *pgxpool.Pool, be *pgstore.Backend, key string, krev int64) (int64, error)
}

func sqlVariant(name, note, call string) variant {
	return variant{name, note, func(ctx context.Context, pool *pgxpool.Pool, _ *pgstore.Backend, key string, krev int64) (int64, error) {
		var rev int64
		if err := pool.QueryRow(ctx, call, key, value, krev).Scan(&rev); err != nil {
			return 0, err
		}
		if rev <= 0 {
			return 0, fmt.Errorf("%s: cond failed (%d)", name, rev)
		}
		return rev, nil
	}}
}

var variants = []variant{
	{"raw", "UPDATE ... WHERE rev = $1 (BenchmarkUpdate's)", func(ctx context.Context, pool *pgxpool.Pool, _ *pgstore.Backend, key string, krev int64) (int64, error) {
		tag, err := pool.Exec(ctx, `UPDATE raw SET v = $2, rev = rev + 1 WHERE k = $1 AND rev = $3`, key, value, krev)
		if err == nil && tag.RowsAffected() != 1 {
			err = errors.New("raw: no row")
		}
		return krev + 1, err
	}},
	sqlVariant("rawfn", "that UPDATE in a PL/pgSQL function", `SELECT rawfn($1, $2, $3)`),
	sqlVariant("rawlog", "that and a log row, no revision order", `SELECT rawlog($1, $2, $3)`),
	{"put3", "pgstore's Txn (revision, kv, log, NOTIFY)", func(ctx context.Context, _ *pgxpool.Pool, be *pgstore.Backend, key string, krev int64) (int64, error) {
		return be.Txn(ctx, []kv.Cond{{Key: key, Target: kv.ModRevision, Revision: krev}}, kv.Write{Kind: kv.WritePut, Key: key, Value: value})
	}},
	{"fenced", "put3 with a Writer's fence (store.WithFence)", func(ctx context.Context, _ *pgxpool.Pool, be *pgstore.Backend, key string, krev int64) (int64, error) {
		return be.Txn(ctx, []kv.Cond{{Key: key, Target: kv.ModRevision, Revision: krev}, {Key: "leader", Target: kv.CreateRevision, Revision: leader}},
			kv.Write{Kind: kv.WritePut, Key: key, Value: value})
	}},
	sqlVariant("put3with", "put3, revision and kv in one WITH statement", `SELECT `+schema+`.put3with(convert_to($1, 'UTF8'), $2, $3)`),
	sqlVariant("kine", "the log alone, max(rev) + 1 ON CONFLICT", `SELECT kine(convert_to($1, 'UTF8'), $2, $3)`),
	sqlVariant("kvlog", "kv and the log, max(rev) + 1 ON CONFLICT", `SELECT kvlog(convert_to($1, 'UTF8'), $2, $3)`),
}

func main() {
	url := flag.String("url", "", "the server, run under callgrind with --callgrind-out-file=DIR/cg.%p")
	out := flag.String("out", "", "DIR")
	n := flag.Int("n", 1000, "writes per count")
	only := flag.String("only", "", "the variants to count, comma-separated (default all)")
	flag.Parse()
	if *only != "" {
		variants = slices.DeleteFunc(variants, func(v variant) bool { return !slices.Contains(strings.Split(*only, ","), v.name) })
	}
	if err := run(context.Background(), *url, *out, *n); err != nil {
		fmt.Fprintln(os.Stderr, "instr:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, out string, n int) error {
	admin, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer admin.Close()
	be, err := pgstore.New(ctx, admin, pgstore.WithSchema(schema), pgstore.WithHistorySize(0))
	if err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf(variantsSQL, schema)); err != nil {
		return err
	}
	krev := map[string]int64{"raw": 1, "rawfn": 1, "rawlog": 1, "kine": 1, "kvlog": 1}
	if leader, err = be.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "leader", Value: []byte("a")}); err != nil {
		return err
	}
	for _, key := range []string{"put3", "fenced", "put3with"} {
		if krev[key], err = be.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: key, Value: value}); err != nil {
			return err
		}
	}
	fmt.Printf("server instructions and WAL bytes per write (a 200-byte value), %d writes\n", n)
	for _, v := range variants {
		var counts [2]int64
		for i, writes := range []int{0, n} {
			pid, err := v.run(ctx, url, krev, 50+writes)
			if err != nil {
				return err
			}
			if counts[i], err = instructions(filepath.Join(out, "cg."+strconv.Itoa(pid))); err != nil {
				return err
			}
		}
		var before, after string
		if err := admin.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&before); err != nil {
			return err
		}
		if _, err := v.run(ctx, url, krev, n); err != nil {
			return err
		}
		var wal float64
		if err := admin.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&after); err != nil {
			return err
		}
		if err := admin.QueryRow(ctx, `SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)`, after, before).Scan(&wal); err != nil {
			return err
		}
		fmt.Printf("%-9s %6.1fk instructions %5.0f WAL bytes  %s\n", v.name, float64(counts[1]-counts[0])/float64(n)/1000, wal/float64(n), v.note)
	}
	return nil
}

// run makes writes of v's key on a new connection, closes it and returns
// its backend's pid.
func (v variant) run(ctx context.Context, url string, krev map[string]int64, writes int) (int, error) {
	pool, err := pgxpool.New(ctx, url+"?pool_max_conns=1")
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	var pid int
	if err := pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		return 0, err
	}
	// New's statements run in the count of no writes too.
	be, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema), pgstore.WithHistorySize(0))
	if err != nil {
		return 0, err
	}
	for range writes {
		if krev[v.name], err = v.write(ctx, pool, be, v.name, krev[v.name]); err != nil {
			return 0, err
		}
	}
	return pid, nil
}

// instructions reads the total of a callgrind output file, waiting for
// the backend to exit and write it.
func instructions(path string) (int64, error) {
	for range 600 {
		f, err := os.Open(path)
		if err == nil {
			s := bufio.NewScanner(f)
			for s.Scan() {
				if rest, ok := strings.CutPrefix(s.Text(), "summary: "); ok {
					f.Close()
					return strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				}
			}
			f.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, fmt.Errorf("no callgrind total in %s", path)
}
