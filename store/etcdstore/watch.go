package etcdstore

import (
	"context"
	"fmt"
	"time"

	"github.com/steady-go/steady/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch implements store.Backend on an etcd watch with previous values and
// progress notifications. The etcd client resumes a watch from its last
// revision after a lost connection, so a reconnect neither drops nor repeats
// events; a compaction past the watch's position ends it with
// store.ErrExpired. An idle watch asks etcd for a progress notification every
// progress interval.
//
// A watch never lets its reader make it hold more than the Backend's watch
// limits (WithWatchLimits): when more than that many events, or bytes of
// keys and values, wait for the reader, the watch ends with store.ErrExpired
// and the reader relists. So a stalled reader costs at most the limits (and
// the 64 events of the channel), never what etcd goes on sending.
func (b *Backend) Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan store.KVEvent, error) {
	if fromRevision < 0 {
		return nil, fmt.Errorf("etcdstore: watch from negative revision %d: %w", fromRevision, store.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The etcd client groups watches by ctx; a private ctx gives this watch
	// its own stream, so RequestProgress below speaks for it alone.
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	opts := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithProgressNotify()}
	if fromRevision > 0 {
		opts = append(opts, clientv3.WithRev(fromRevision+1))
	}
	wch := b.cli.Watch(wctx, b.prefix+prefix, opts...)
	out := make(chan store.KVEvent, 64)
	go func() {
		defer close(out)
		defer cancel()
		b.pump(ctx, wctx, cancel, wch, out, fromRevision)
	}()
	return out, nil
}

// pump moves the etcd watch wch to out. wctx is the etcd watch's context
// and stopWatch cancels it; ctx is the caller's.
func (b *Backend) pump(ctx, wctx context.Context, stopWatch context.CancelFunc, wch clientv3.WatchChan, out chan<- store.KVEvent, last int64) {
	// The etcd client buffers without bound whatever its watch channel's
	// reader has not taken, so pump always takes: events wait in queue, and
	// a reader that lets more than the Backend's watch limits wait ends the
	// watch with ErrExpired (the etcd watch is cancelled at once, so the
	// client stops buffering too).
	var queue []store.KVEvent
	queued := 0 // bytes of the keys and values in queue
	expire := func(why string) {
		stopWatch() // before waiting for the reader: etcd stops sending now
		queue = nil
		ev := store.KVEvent{Err: fmt.Errorf("etcdstore: watch: %s: %w", why, store.ErrExpired), Revision: last}
		select {
		case out <- ev:
		case <-ctx.Done():
		}
	}
	tick := time.NewTicker(b.progress)
	defer tick.Stop()
	idle := true
	for {
		var send chan<- store.KVEvent
		var next store.KVEvent
		if len(queue) > 0 {
			send, next = out, queue[0]
		}
		select {
		case <-wctx.Done():
			return
		case send <- next:
			queue[0] = store.KVEvent{}
			queue = queue[1:]
			queued -= eventBytes(next)
		case <-tick.C:
			if idle {
				// Best effort: a failed request just means no progress
				// event this round.
				_ = b.cli.RequestProgress(wctx)
			}
			idle = true
		case resp, ok := <-wch:
			if !ok {
				if wctx.Err() == nil {
					expire("watch channel closed")
				}
				return
			}
			idle = false
			if resp.CompactRevision != 0 {
				expire(fmt.Sprintf("history compacted to %d", resp.CompactRevision))
				return
			}
			if err := resp.Err(); err != nil {
				if wctx.Err() == nil {
					expire(err.Error())
				}
				return
			}
			if resp.IsProgressNotify() {
				if resp.Header.Revision > last {
					last = resp.Header.Revision
					if n := len(queue); n > 0 && queue[n-1].Progress {
						queue[n-1].Revision = last // coalesce marks
					} else {
						queue = append(queue, store.KVEvent{Progress: true, Revision: last})
					}
				}
				continue
			}
			for _, e := range resp.Events {
				ev := store.KVEvent{Revision: e.Kv.ModRevision, KV: b.kv(e.Kv)}
				if e.PrevKv != nil {
					ev.Prev = b.kv(e.PrevKv)
				}
				switch e.Type {
				case clientv3.EventTypePut:
					ev.Type = store.KVPut
				case clientv3.EventTypeDelete:
					ev.Type = store.KVDelete
					ev.KV.Value = nil
				}
				last = ev.Revision
				queue = append(queue, ev)
				queued += eventBytes(ev)
			}
			if len(queue) > b.watchEvents || queued > b.watchBytes {
				expire(fmt.Sprintf("the reader fell behind by %d events (%d bytes), over the limit of %d events or %d bytes",
					len(queue), queued, b.watchEvents, b.watchBytes))
				return
			}
		}
	}
}

// eventBytes is what an event's keys and values weigh in a watch's queue.
func eventBytes(ev store.KVEvent) int {
	return len(ev.KV.Key) + len(ev.KV.Value) + len(ev.Prev.Key) + len(ev.Prev.Value)
}
