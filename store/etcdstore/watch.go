package etcdstore

import (
	"context"
	"fmt"
	"time"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch implements kv.Backend on an etcd watch with previous values and
// progress notifications. The etcd client resumes a watch from its last
// revision after a lost connection, so a reconnect neither drops nor repeats
// events; a compaction past the watch's position ends it with
// store.ErrExpired. An idle watch asks etcd for a progress notification every
// progress interval.
//
// A watch from 0 replays the cluster's history under prefix from revision
// 1, as kv.Backend says (etcd's own watch from 0 would start from now): on
// a cluster never compacted, that is every write ever made under prefix,
// which etcd reads and sends before any new change; on a compacted one it
// ends with store.ErrExpired. Watch from the Revision of a List instead to
// follow the current state.
//
// A watch never lets its reader make it hold more than the Backend's watch
// limits (WithWatchLimits): when more than that many events, or bytes of
// keys and values, wait for the reader, the watch ends with store.ErrExpired
// and the reader relists. So a stalled reader costs at most the limits (and
// the 64 events of the channel), never what etcd goes on sending.
func (b *Backend) Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan kv.Event, error) {
	if fromRevision < 0 {
		return nil, fmt.Errorf("etcdstore: watch from negative revision %d: %w", fromRevision, store.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.cli.Ctx().Err() != nil {
		return nil, fmt.Errorf("etcdstore: watch %q: the etcd client is closed: %w", prefix, store.ErrClosed)
	}
	// The etcd client groups watches by ctx; a private ctx gives this watch
	// its own stream, so RequestProgress below speaks for it alone.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	// Always WithRev: etcd's own watch from revision 0 starts from now,
	// where kv.Backend's replays from revision 1.
	wch := b.cli.Watch(wctx, b.prefix+prefix, clientv3.WithPrefix(), clientv3.WithPrevKV(),
		clientv3.WithProgressNotify(), clientv3.WithRev(fromRevision+1))
	out := make(chan kv.Event, 64)
	go func() {
		defer close(out)
		defer cancel()
		b.pump(ctx, wctx, cancel, wch, out, fromRevision)
	}()
	return out, nil
}

// pump moves the etcd watch wch to out. wctx is the etcd watch's context
// and stopWatch cancels it; ctx is the caller's.
//
// The etcd client buffers without bound whatever its watch channel's reader
// has not taken, so pump always takes: events wait in queue, and a reader
// that lets more than the Backend's watch limits wait ends the watch with
// ErrExpired (the etcd watch is cancelled at once, so the client stops
// buffering too).
func (b *Backend) pump(ctx, wctx context.Context, stopWatch context.CancelFunc, wch clientv3.WatchChan, out chan<- kv.Event, last int64) {
	p := &pump{b: b, ctx: ctx, stopWatch: stopWatch, out: out, last: last}
	tick := time.NewTicker(b.progress)
	defer tick.Stop()
	idle := true
	for {
		var send chan<- kv.Event
		var next kv.Event
		if len(p.queue) > 0 {
			send, next = out, p.queue[0]
		}
		select {
		case <-wctx.Done():
			return
		case send <- next:
			p.queue[0] = kv.Event{}
			p.queue = p.queue[1:]
			p.queued -= eventBytes(next)
		case <-tick.C:
			if idle {
				// Best effort: a failed request just means no progress
				// event this round.
				_ = b.cli.RequestProgress(wctx)
			}
			idle = true
		case resp, ok := <-wch:
			idle = false
			if why := p.take(resp, ok); why != "" {
				if wctx.Err() == nil {
					p.expire(why)
				}
				return
			}
		}
	}
}

// pump is the state of a watch's pump: what waits for the reader.
type pump struct {
	b         *Backend
	ctx       context.Context
	stopWatch context.CancelFunc
	out       chan<- kv.Event
	queue     []kv.Event
	queued    int   // bytes of the keys and values in queue
	last      int64 // the revision of the last event or mark queued
}

// take queues what the etcd watch response resp brings (ok false when the
// watch channel closed). It returns why the watch must end, or "".
func (p *pump) take(resp clientv3.WatchResponse, ok bool) string {
	switch {
	case !ok:
		return "watch channel closed"
	case resp.CompactRevision != 0:
		return fmt.Sprintf("history compacted to %d", resp.CompactRevision)
	case resp.Err() != nil:
		return resp.Err().Error()
	case resp.IsProgressNotify():
		p.mark(resp.Header.Revision)
		return ""
	}
	for _, e := range resp.Events {
		ev := kv.Event{Revision: e.Kv.ModRevision, KV: p.b.keyValue(e.Kv)}
		if e.PrevKv != nil {
			ev.Prev = p.b.keyValue(e.PrevKv)
		}
		ev.Type = kv.EventPut
		if e.Type == clientv3.EventTypeDelete {
			ev.Type, ev.KV.Value = kv.EventDelete, nil
		}
		p.last = ev.Revision
		p.queue = append(p.queue, ev)
		p.queued += eventBytes(ev)
	}
	if len(p.queue) > p.b.watchEvents || p.queued > p.b.watchBytes {
		return fmt.Sprintf("the reader fell behind by %d events (%d bytes), over the limit of %d events or %d bytes",
			len(p.queue), p.queued, p.b.watchEvents, p.b.watchBytes)
	}
	return ""
}

// mark queues a progress mark at rev when it is past the last one, in
// place of a mark still waiting for the reader.
func (p *pump) mark(rev int64) {
	if rev <= p.last {
		return
	}
	p.last = rev
	if n := len(p.queue); n > 0 && p.queue[n-1].Progress {
		p.queue[n-1].Revision = rev
		return
	}
	p.queue = append(p.queue, kv.Event{Progress: true, Revision: rev})
}

// expire ends the watch with ErrExpired, once the reader takes it; or
// with store.ErrClosed when the etcd client is closed.
func (p *pump) expire(why string) {
	p.stopWatch() // before waiting for the reader: etcd stops sending now
	p.queue = nil
	ev := kv.Event{Err: fmt.Errorf("etcdstore: watch: %s: %w", why, store.ErrExpired), Revision: p.last}
	if p.b.cli.Ctx().Err() != nil {
		ev.Err = fmt.Errorf("etcdstore: watch: %s: the etcd client is closed: %w", why, store.ErrClosed)
	}
	select {
	case p.out <- ev:
	case <-p.ctx.Done():
	}
}

// eventBytes is what an event's keys and values weigh in a watch's queue.
func eventBytes(ev kv.Event) int {
	return len(ev.KV.Key) + len(ev.KV.Value) + len(ev.Prev.Key) + len(ev.Prev.Value)
}
