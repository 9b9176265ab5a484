package pgstore_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/storetest"
)

// BenchmarkUpdate compares a typed Store Update of one object (encode,
// then one Txn: the Store remembers the value it wrote) with the floor a
// hand-written controller on PostgreSQL pays for the same optimistic write:
// a raw UPDATE ... WHERE rev = $1 of a row of the same size, on the same
// server and pool. backend-Txn is the Backend's part of the typed Update:
// the same conditional write without the typed Store's encoding.
// typed-Update-fenced is the typed Update as a leader writes it, carrying
// its term's fence (store.WithFence): one more cond, on the leader key's
// CreateRevision. The cases run in three ABBA rounds (raw, Txn, typed,
// fenced, fenced, typed, Txn, raw), so that a change of the machine's load
// falls on all of them. Besides wall-clock ns/op, each reports work-ns/op,
// the CPU time of the test process and of the server's backends per write,
// and client-ns/op, the test process's alone; reading the server's CPU
// from /proc costs milliseconds, so it is read outside the measured loop.
//
//	go test -run '^$' -bench Update -benchtime 2000x ./   (in store/pgstore)
func BenchmarkUpdate(b *testing.B) {
	pool := newPool(b)
	port := needServer(b).Port()
	ctx := b.Context()
	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_raw (k text PRIMARY KEY, rev bigint NOT NULL, v bytea NOT NULL);
		INSERT INTO bench_raw VALUES ('web', 1, '') ON CONFLICT (k) DO UPDATE SET rev = 1`)
	require.NoError(b, err)
	value := make([]byte, 200)
	rawRev := int64(1)
	raw := func() error {
		tag, err := pool.Exec(ctx, `UPDATE bench_raw SET v = $2, rev = rev + 1 WHERE k = $1 AND rev = $3`, "web", value, rawRev)
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("raw update: %v", tag)
		}
		rawRev++
		return err
	}
	be := newBackend(b, pool)
	rev, err := be.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "web", Value: value})
	require.NoError(b, err)
	txn := func() (err error) {
		rev, err = be.Txn(ctx, []kv.Cond{{Key: "web", Target: kv.ModRevision, Revision: rev}}, kv.Write{Kind: kv.WritePut, Key: "web", Value: value})
		return err
	}
	sb := newBackend(b, pool)
	st, err := store.New[storetest.WidgetSpec, storetest.WidgetStatus](sb, "Widget")
	require.NoError(b, err)
	leader, err := sb.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "leader", Value: []byte("a")})
	require.NoError(b, err)
	term := store.WithFence(ctx, store.Fence{Key: "leader", Revision: leader})
	w := st.As("bench")
	obj := &storetest.Widget{Meta: store.Meta{Name: "web"}, Spec: storetest.WidgetSpec{Replicas: 1, Image: "registry.example/app:1"}}
	_, err = w.Create(ctx, obj)
	require.NoError(b, err)
	typed := func() error {
		obj.Spec.Replicas++
		_, err := w.Update(ctx, obj)
		return err
	}
	fenced := func() error {
		obj.Spec.Replicas++
		_, err := w.Update(term, obj)
		return err
	}
	run := func(op func() error) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			server, serverOK := serverCPU(port)
			self, selfOK := selfCPU()
			for b.Loop() {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
			selfNow, _ := selfCPU()
			serverNow, _ := serverCPU(port)
			if client := selfNow - self; selfOK && b.N > 0 {
				b.ReportMetric(float64(client)/float64(b.N), "client-ns/op")
				if serverOK {
					b.ReportMetric(float64(client+serverNow-server)/float64(b.N), "work-ns/op")
				}
			}
		}
	}
	for range 3 {
		for _, c := range []struct {
			name string
			op   func() error
		}{{"raw-UPDATE-where-rev", raw}, {"backend-Txn", txn}, {"typed-Update", typed}, {"typed-Update-fenced", fenced},
			{"typed-Update-fenced", fenced}, {"typed-Update", typed}, {"backend-Txn", txn}, {"raw-UPDATE-where-rev", raw}} {
			b.Run(c.name, run(c.op))
		}
	}
}

// BenchmarkWatchLatency times a write from the Txn call to its event on a
// watch that was waiting (woken by NOTIFY), and reports the 50th and 99th
// percentiles.
//
//	go test -run '^$' -bench WatchLatency -benchtime 1000x ./   (in store/pgstore)
func BenchmarkWatchLatency(b *testing.B) {
	be := newBackend(b, newPool(b))
	ctx := b.Context()
	ch, err := be.Watch(ctx, "k/", 0)
	require.NoError(b, err)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := be.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: fmt.Sprintf("k/%d", i%10), Value: []byte("v")}); err != nil {
			b.Fatal(err)
		}
		for ev := range ch {
			if ev.Err != nil {
				b.Fatal(ev.Err)
			}
			if !ev.Progress {
				break
			}
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
