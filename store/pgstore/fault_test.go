package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	"github.com/steady-go/steady/store/pgstore"
)

// proxy relays TCP connections to the test server, and can drop the
// server's replies and cut every connection, to lose a connection at a
// chosen point of a request.
type proxy struct {
	l       net.Listener
	target  string
	dropped atomic.Bool // server-to-client bytes are discarded

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{l: l, target: target}
	p.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(s, c); s.Close() })
			p.wg.Go(func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := s.Read(buf)
					if n > 0 && !p.dropped.Load() {
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				c.Close()
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) url() string {
	return fmt.Sprintf("postgres://steady@%s/postgres?sslmode=disable", p.l.Addr())
}

// cut closes every connection relayed so far.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// A write whose connection is lost after the server committed it, before
// its answer arrived, fails with store.ErrUnavailable: the caller is told
// that it may have committed, and it has. A read on a lost connection is
// ErrUnavailable too, and the next call works on a new connection.
func TestConnectionLostMidWriteIsUnavailable(t *testing.T) {
	direct := newBackend(t, newPool(t))
	p := newProxy(t, fmt.Sprintf("127.0.0.1:%d", server.Port()))
	b, err := pgstore.New(t.Context(), newPool(t, p.url()), pgstore.WithSchema(direct.Schema()))
	require.NoError(t, err)
	ctx := t.Context()
	// pgx prepares a statement on its first use, a round trip of its own:
	// with replies dropped, that would stop the write before it is sent.
	_, err = b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "warm", Value: []byte("v")})
	require.NoError(t, err)
	_, err = b.Get(ctx, "warm")
	require.NoError(t, err)

	p.dropped.Store(true)
	errc := make(chan error, 1)
	go func() {
		_, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "k", Value: []byte("v")})
		errc <- err
	}()
	require.Eventually(t, func() bool {
		_, err := direct.Get(ctx, "k")
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the server commits the write")
	p.cut()
	err = <-errc
	require.ErrorIs(t, err, store.ErrUnavailable, "a write whose answer was lost may have committed")
	require.Contains(t, err.Error(), "may have committed")

	// The same for a read, while replies are still lost.
	gotc := make(chan error, 1)
	go func() {
		_, err := b.Get(ctx, "k")
		gotc <- err
	}()
	require.Eventually(t, func() bool { // wait for the request to reach the server
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.conns) > 0
	}, 10*time.Second, 10*time.Millisecond)
	time.Sleep(50 * time.Millisecond) // let it send; the reply is dropped either way
	p.cut()
	require.ErrorIs(t, <-gotc, store.ErrUnavailable)

	p.dropped.Store(false)
	kvp, err := b.Get(ctx, "k")
	require.NoError(t, err, "the pool dials a new connection")
	require.Equal(t, "v", string(kvp.Value))
}

// storm runs writers that each create keys of their own, "w<i>/<n>", until
// stop is closed, retrying a create that failed with ErrUnavailable: when
// the retry finds the key there, the first attempt committed, and its
// revision is the key's ModRevision. It returns every acknowledged write.
func storm(ctx context.Context, t *testing.T, b *pgstore.Backend, writers int, stop <-chan struct{}, progress *atomic.Int64) []written {
	var (
		mu    sync.Mutex
		acked []written
		wg    sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				k, v := fmt.Sprintf("w%d/%d", w, n), fmt.Sprint(n)
				for {
					rev, err := b.Txn(ctx, []kv.Cond{{Key: k, Target: kv.CreateRevision}}, kv.Write{Kind: kv.WritePut, Key: k, Value: []byte(v)})
					if errors.Is(err, kv.ErrCondFailed) {
						// An earlier attempt committed; learn its revision.
						kvp, gerr := b.Get(ctx, k)
						if gerr != nil {
							time.Sleep(20 * time.Millisecond)
							continue
						}
						rev, err = kvp.ModRevision, nil
					}
					if errors.Is(err, store.ErrUnavailable) {
						time.Sleep(20 * time.Millisecond) // the server is away: pace the retries
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					acked = append(acked, written{rev, k, v})
					mu.Unlock()
					progress.Add(1)
					break
				}
			}
		})
	}
	wg.Wait()
	return acked
}

// endStorm writes the key "end" that collect stops at, retrying while the
// server is away.
func endStorm(t *testing.T, b *pgstore.Backend) {
	require.Eventually(t, func() bool {
		_, err := b.Txn(t.Context(), nil, kv.Write{Kind: kv.WritePut, Key: "end", Value: []byte("")})
		return err == nil
	}, 30*time.Second, 20*time.Millisecond)
}

// Every connection of the test user is killed (pg_terminate_backend) three
// times while 4 writers write and a watch follows: the watch's reads and
// its listening connection die, and it resumes from its last revision with
// no gap and no repeat.
func TestWatchResumesAfterConnectionsAreKilled(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	from, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "start", Value: []byte("")})
	require.NoError(t, err)
	ch, err := b.Watch(ctx, "", from)
	require.NoError(t, err)

	admin, err := pgx.Connect(ctx, server.URL())
	require.NoError(t, err)
	defer admin.Close(context.Background())

	stop := make(chan struct{})
	var progress atomic.Int64
	var acked []written
	done := make(chan struct{})
	go func() {
		defer close(done)
		acked = storm(ctx, t, b, 4, stop, &progress)
	}()
	stopped := false
	defer func() { // a failed require must not leave the writers running past the test
		if !stopped {
			close(stop)
			<-done
		}
	}()
	for round := 1; round <= 3; round++ {
		require.Eventually(t, func() bool { return progress.Load() >= int64(100*round) }, 30*time.Second, 5*time.Millisecond)
		// The pool may be between connections at any one instant (CI once
		// found none to kill), so kill until some connection died.
		require.Eventually(t, func() bool {
			var killed int
			err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE usename = 'steady' AND pid <> pg_backend_pid()`).Scan(&killed)
			return err == nil && killed > 0
		}, 10*time.Second, 5*time.Millisecond, "round %d: no connection of the test user killed", round)
	}
	close(stop)
	<-done
	stopped = true
	endStorm(t, b)
	requireEveryRevision(t, from, acked, collect(t, ch, "end"), "the watch")
}

// The server is killed (pg_ctl stop -m immediate: no shutdown, crash
// recovery at the next start) and started again while 8 writers write and
// a watch follows: no acknowledged write is lost, and the watch resumes
// with every revision, in order.
func TestServerRestartMidWriteStormLosesNoAckedWrite(t *testing.T) {
	b := newBackend(t, newPool(t))
	ctx := t.Context()
	from, err := b.Txn(ctx, nil, kv.Write{Kind: kv.WritePut, Key: "start", Value: []byte("")})
	require.NoError(t, err)
	ch, err := b.Watch(ctx, "", from)
	require.NoError(t, err)

	stop := make(chan struct{})
	var progress atomic.Int64
	var acked []written
	done := make(chan struct{})
	go func() {
		defer close(done)
		acked = storm(ctx, t, b, 8, stop, &progress)
	}()
	require.Eventually(t, func() bool { return progress.Load() >= 200 }, 30*time.Second, 5*time.Millisecond)
	require.NoError(t, server.Stop("immediate"))
	atStop := progress.Load()
	require.NoError(t, server.Start())
	require.Eventually(t, func() bool { return progress.Load() >= atStop+200 }, 30*time.Second, 5*time.Millisecond, "writes go on after the restart")
	close(stop)
	<-done

	for _, w := range acked {
		kvp, err := b.Get(ctx, w.key)
		require.NoError(t, err, "acknowledged write of %q at %d", w.key, w.rev)
		require.Equal(t, w.rev, kvp.ModRevision, "%q", w.key)
		require.Equal(t, w.value, string(kvp.Value), "%q", w.key)
	}
	endStorm(t, b)
	requireEveryRevision(t, from, acked, collect(t, ch, "end"), "the watch across the restart")
}

// A watch whose reads fail for a reason that waiting does not cure (here
// its schema was dropped) ends with an error event wrapping ErrExpired,
// so the reader relists and meets the error, instead of retrying unseen.
func TestWatchEndsOnAnErrorThatIsNotUnavailability(t *testing.T) {
	pool := newPool(t)
	b := newBackend(t, pool, pgstore.WithPollInterval(50*time.Millisecond))
	ch, err := b.Watch(t.Context(), "", 0)
	require.NoError(t, err)
	_, err = pool.Exec(t.Context(), "DROP SCHEMA "+b.Schema()+" CASCADE")
	require.NoError(t, err)
	select {
	case ev := <-ch:
		require.ErrorIs(t, ev.Err, store.ErrExpired)
		require.NotErrorIs(t, ev.Err, store.ErrUnavailable)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the watch goes on retrying a dropped schema")
	}
}
