package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Watch implements kv.Backend. A watch reads the log by revision: at
// most WithWatchBuffer events at a time, after the last revision it read,
// in one query that also reads the head revision. Every Txn NOTIFYs the
// schema's channel on commit, and a notification only wakes the watches to
// read again: one lost while the listening connection was down costs
// nothing, since the listener wakes every watch once it listens again, and
// the watch polls the head every poll interval (WithPollInterval) anyway.
// So a watch resumes with no gap across a lost connection or a restart of
// the server; while the database cannot be reached (store.ErrUnavailable),
// the watch waits for it and retries, without an error event. Any other
// error of its reads ends it with an event wrapping that error and
// store.ErrExpired, so the reader relists.
//
// The watch is kvwatch's: it reads its next batch only once the last one is
// in its channel:
// a receiver that stops reading holds at most two batches in memory, and
// costs writers nothing. A watch whose next revision is compacted away
// (fromRevision below the floor of the last Compact, or a receiver so far
// behind that Compact passed it) ends with an event wrapping
// store.ErrExpired; so does a watch from 0 (which replays the log from
// revision 1, as kv.Backend says) once the log no longer starts there. Once
// it has sent every change under prefix, a watch sends a Progress event
// whenever the head moved past its last event.
func (b *Backend) Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan kv.Event, error) {
	if fromRevision < 0 {
		return nil, fmt.Errorf("pgstore: watch %q from negative revision %d: %w", prefix, fromRevision, store.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.closing.Err() != nil {
		return nil, closedErr("watch " + prefix)
	}
	// The watch's reads end with ctx or with Close.
	wctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(b.closing, cancel)
	w := &watch{
		b:      b,
		ctx:    wctx,
		start:  []byte(prefix),
		end:    prefixEnd(prefix),
		prefix: prefix,
	}
	b.mu.Lock()
	if b.closing.Err() != nil {
		b.mu.Unlock()
		unhook()
		cancel()
		return nil, closedErr("watch " + prefix)
	}
	b.watches.Add(1)
	b.mu.Unlock()
	out := make(chan kv.Event, b.cfg.watchBuffer)
	b.hub.join()
	go func() {
		defer b.watches.Done()
		defer b.hub.leave()
		defer cancel()
		defer unhook()
		kvwatch.Watch{Out: out, Stop: ctx.Done(), Closing: b.closing.Done(), Closed: w.closed, Poll: b.cfg.poll, Clock: b.cfg.clk}.Run(w, fromRevision)
		b.held.Add(-int64(w.held))
	}()
	return out, nil
}

// closed is the error of the last event of a watch that Close, or a closed
// pool, ended.
func (w *watch) closed() error {
	return fmt.Errorf("pgstore: watch %q: backend closed: %w", w.prefix, store.ErrClosed)
}

// watch is one watch's kvwatch.Reader of the log.
type watch struct {
	b          *Backend
	ctx        context.Context
	start, end []byte
	prefix     string
	held       int // the events of the last batch read, as counted in b.held
}

// Read implements kvwatch.Reader. While the database is unreachable it
// waits and reads again from the same cursor, so nothing is skipped; it
// returns when the watch's ctx ends or the Backend closes. A closed
// Backend or pool ends the watch with an error wrapping store.ErrClosed.
// Any other error than store.ErrUnavailable (the schema dropped, a
// permission revoked) ends the watch with an error wrapping
// store.ErrExpired, as etcdstore does, so the reader relists and meets the
// error there rather than wait here unseen.
func (w *watch) Read(q []kv.Event, cursor int64) ([]kv.Event, int64, <-chan struct{}, error) {
	// kvwatch reads again only once the last batch is sent.
	w.b.held.Add(-int64(w.held))
	w.held = 0
	var (
		retry      time.Duration
		next, head int64
		err        error
	)
	for {
		wake := w.b.hub.changed() // before the read: a commit after it wakes us
		q, next, head, err = w.read(q, cursor)
		switch {
		case err == nil:
			w.held = len(q)
			w.b.held.Add(int64(w.held))
			if len(q) > 0 || next < head {
				wake = nil // more to send or to read
			}
			return q, next, wake, nil
		case w.b.closing.Err() != nil, errors.Is(err, store.ErrClosed):
			return q, cursor, nil, w.closed()
		case w.ctx.Err() != nil, errors.Is(err, store.ErrExpired):
			return q, cursor, nil, err
		case !errors.Is(err, store.ErrUnavailable):
			return q, cursor, nil, fmt.Errorf("%w (%w)", err, store.ErrExpired)
		}
		retry = min(max(2*retry, 50*time.Millisecond), w.b.cfg.poll)
		t := w.b.cfg.clk.NewTimer(retry)
		select {
		case <-w.ctx.Done():
			t.Stop()
			if w.b.closing.Err() != nil {
				return q, cursor, nil, w.closed()
			}
			return q, cursor, nil, w.ctx.Err()
		case <-t.C():
		}
	}
}

// read appends the next batch of events after cursor to q and returns it,
// the revision it has read up to and the head revision, scanning at most 8
// batches of revisions so a watch on a quiet prefix of a busy store keeps
// its queries short.
func (w *watch) read(q []kv.Event, cursor int64) ([]kv.Event, int64, int64, error) {
	batch := w.b.cfg.watchBuffer
	rows, err := w.b.pool.Query(w.ctx, w.b.sql.watch, cursor, w.start, w.end, batch, int64(8*batch))
	if err != nil {
		return q, cursor, 0, mapErr(w.ctx, "watch "+w.prefix, err)
	}
	var head, low int64
	for rows.Next() {
		var (
			rev, create, prevCreate, prevRev *int64
			key, value, prevValue            []byte
		)
		if err := rows.Scan(&head, &low, &rev, &key, &value, &create, &prevValue, &prevCreate, &prevRev); err != nil {
			rows.Close()
			clear(q)
			return q[:0], cursor, 0, mapErr(w.ctx, "watch "+w.prefix, err)
		}
		if rev == nil {
			continue // no event: the row only carries the head
		}
		ev := kv.Event{Type: kv.EventPut, Revision: *rev, KV: kv.KeyValue{Key: string(key), Value: value, CreateRevision: *create, ModRevision: *rev}}
		if value == nil {
			ev.Type, ev.KV.CreateRevision = kv.EventDelete, 0
		}
		if prevRev != nil {
			ev.Prev = kv.KeyValue{Key: ev.KV.Key, Value: prevValue, CreateRevision: *prevCreate, ModRevision: *prevRev}
		}
		q = append(q, ev)
	}
	if err := rows.Err(); err != nil {
		clear(q)
		return q[:0], cursor, 0, mapErr(w.ctx, "watch "+w.prefix, err)
	}
	if cursor+1 < low {
		clear(q)
		return q[:0], cursor, 0, fmt.Errorf("pgstore: watch %q: history after revision %d is compacted (it starts at %d): %w", w.prefix, cursor, low, store.ErrExpired)
	}
	switch {
	case len(q) == batch:
		cursor = q[batch-1].Revision
	case head > cursor:
		cursor = min(head, cursor+int64(8*batch))
	}
	return q, cursor, head, nil
}

// hub holds the one listening connection of a Backend while it has
// watches: it LISTENs on the schema's channel and wakes every watch on each
// notification, and once more each time it (re)starts listening, since
// notifications sent while it was not are lost.
type hub struct {
	b *Backend

	mu   sync.Mutex
	wake chan struct{} // closed and replaced on each wake-up
	refs int
	stop context.CancelFunc
	done chan struct{}
}

func newHub(b *Backend) *hub { return &hub{b: b, wake: make(chan struct{})} }

// changed returns a channel that is closed at the next wake-up.
func (h *hub) changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wake
}

func (h *hub) wakeAll() {
	h.mu.Lock()
	close(h.wake)
	h.wake = make(chan struct{})
	h.mu.Unlock()
}

// join counts a watch in, starting the listener for the first.
func (h *hub) join() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refs++
	if h.refs > 1 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	h.stop, h.done = cancel, done
	go func() {
		defer close(done)
		h.listen(ctx)
	}()
}

// leave counts a watch out; the last one stops the listener and waits for
// it to close its connection.
func (h *hub) leave() {
	h.mu.Lock()
	h.refs--
	if h.refs > 0 {
		h.mu.Unlock()
		return
	}
	stop, done := h.stop, h.done
	h.stop, h.done = nil, nil
	h.mu.Unlock()
	stop()
	<-done
}

// listen keeps one connection LISTENing until ctx ends, reconnecting with
// a capped backoff.
func (h *hub) listen(ctx context.Context) {
	clk := h.b.cfg.clk
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		// An error is not reported: the watches go on reading by their
		// polls meanwhile, and their reads retry on errors of their own.
		_ = h.listenOnce(ctx, func() { backoff = 0 })
		if ctx.Err() != nil {
			return
		}
		h.wakeAll()
		backoff = min(max(2*backoff, 50*time.Millisecond), h.b.cfg.poll)
		t := clk.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

func (h *hub) listenOnce(ctx context.Context, listening func()) error {
	cc := h.b.pool.Config().ConnConfig
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+h.b.schema); err != nil {
		return err
	}
	listening()
	h.wakeAll() // what was sent before LISTEN took effect is in the log
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		h.wakeAll()
	}
}
