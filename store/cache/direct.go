package cache

import (
	"fmt"

	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// directSource is the part of a Store's lean view that offers its
// backend's watch to be read on Run's own goroutine (the Store's
// WatchDirect; memstore offers it): a write then wakes Run itself, not a
// watch goroutine that wakes Run, one goroutine hand-off per event instead
// of two. ok is false when the backend offers none.
type directSource[S, T any] interface {
	WatchDirect(fromRevision int64, keep func(name string) bool) (r kvwatch.Reader, stop func(), decode func(kv.Event) store.Event[S, T], ok bool, err error)
}

// directWatch is a watch follow reads itself, a batch at a time: it waits
// on ready, reads what the backend holds past cursor (at most the
// backend's batch), and applies it; once it has read everything (the
// batch that reaches the backend's revision comes with the channel to
// wait on) it waits for the backend's next change. What kvwatch.Run would send is what it
// applies: the events in order, a progress mark when caught up past the
// last event (writes under other prefixes), and Read's error as the
// watch's last event. The backend never waits for it: a Cache that falls
// behind the backend's history gets ErrExpired and relists, as over a
// channel.
type directWatch[S, T any] struct {
	r      kvwatch.Reader
	stop   func()
	decode func(kv.Event) store.Event[S, T]
	// cursor is the revision read up to, seen the last revision applied.
	cursor, seen int64
	batch        []kv.Event // Read's buffer, reused
	// ready is closed while there may be more to read, else the channel
	// Read returned, which receives after the backend's next change.
	ready <-chan struct{}
	// done is the watch's ctx.Done(): the watch ends with it, as a
	// channel watch closes.
	done <-chan struct{}
}

// readNow is a ready channel that is always ready: there may be more to
// read.
var readNow = func() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func newDirectWatch[S, T any](r kvwatch.Reader, stop func(), decode func(kv.Event) store.Event[S, T], from int64, done <-chan struct{}) *directWatch[S, T] {
	return &directWatch[S, T]{r: r, stop: stop, decode: decode, cursor: from, seen: from, ready: readNow, done: done}
}

// pull reads one batch of d and applies it (see directWatch). It reports
// whether it applied anything, and returns why the watch ended, or nil.
func (c *Cache[S, T]) pull(d *directWatch[S, T], r *relistState[S, T]) (applied bool, err error) {
	q, cursor, wake, err := d.r.Read(d.batch[:0], d.cursor)
	d.batch = q
	defer clear(q) // hold no values between batches
	if err != nil {
		return false, fmt.Errorf("cache: watch: %w", err)
	}
	d.cursor = cursor
	for _, kev := range q {
		if err := c.followEvent(d.decode(kev), true, r); err != nil {
			return applied, err
		}
		applied, d.seen = true, kev.Revision
	}
	if wake == nil {
		d.ready = readNow
		return applied, nil
	}
	d.ready = wake
	if cursor > d.seen {
		if err := c.followEvent(store.Event[S, T]{Progress: true, Revision: cursor}, true, r); err != nil {
			return applied, err
		}
		applied, d.seen = true, cursor
	}
	return applied, nil
}
