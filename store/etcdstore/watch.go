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
		b.pump(wctx, wch, out, fromRevision)
	}()
	return out, nil
}

func (b *Backend) pump(ctx context.Context, wch clientv3.WatchChan, out chan<- store.KVEvent, last int64) {
	send := func(ev store.KVEvent) bool {
		select {
		case out <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	tick := time.NewTicker(b.progress)
	defer tick.Stop()
	idle := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if idle {
				// Best effort: a failed request just means no progress
				// event this round.
				_ = b.cli.RequestProgress(ctx)
			}
			idle = true
		case resp, ok := <-wch:
			if !ok {
				if ctx.Err() == nil {
					send(store.KVEvent{Err: fmt.Errorf("etcdstore: watch channel closed: %w", store.ErrExpired), Revision: last})
				}
				return
			}
			idle = false
			if resp.CompactRevision != 0 {
				send(store.KVEvent{Err: fmt.Errorf("etcdstore: watch from %d: history compacted to %d: %w", last, resp.CompactRevision, store.ErrExpired), Revision: last})
				return
			}
			if err := resp.Err(); err != nil {
				if ctx.Err() == nil {
					send(store.KVEvent{Err: fmt.Errorf("etcdstore: watch: %v: %w", err, store.ErrExpired), Revision: last})
				}
				return
			}
			if resp.IsProgressNotify() {
				if resp.Header.Revision > last {
					last = resp.Header.Revision
					if !send(store.KVEvent{Progress: true, Revision: last}) {
						return
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
				if !send(ev) {
					return
				}
			}
		}
	}
}
