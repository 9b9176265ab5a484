package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/steady-go/steady/store"
)

// Test types shared by the cache tests.
type spec struct {
	Image    string `json:"image"`
	Replicas int    `json:"replicas"`
}

type status struct {
	Ready int `json:"ready"`
}

type obj = store.Object[spec, status]

func mkObj(name, uid string, rev int64, labels map[string]string, owners ...string) *obj {
	o := &obj{Meta: store.Meta{Kind: "Widget", Name: name, UID: uid, Labels: labels, Revision: rev}}
	for _, u := range owners {
		o.Meta.Owners = append(o.Meta.Owners, store.OwnerRef{Kind: "Owner", Name: "o-" + u, UID: u})
	}
	return o
}

// scriptedSource is a ListWatcher the test drives by hand: List serves the
// snapshot set with set (paginated like Store.List), and each Watch hands
// the test a stream on which it sends the events it wants. It is not a
// store: it knows nothing of revisions beyond what the test gives it.
type scriptedSource struct {
	mu      sync.Mutex
	objs    []*obj
	rev     int64
	listErr error
	lists   int
	streams chan *stream
}

type stream struct {
	from int64
	ctx  context.Context
	ch   chan store.WatchEvent[spec, status]
}

func newScripted(rev int64, objs ...*obj) *scriptedSource {
	s := &scriptedSource{streams: make(chan *stream, 16)}
	s.set(rev, objs...)
	return s
}

func (s *scriptedSource) set(rev int64, objs ...*obj) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs = slices.Clone(objs)
	slices.SortFunc(s.objs, func(a, b *obj) int { return strings.Compare(a.Meta.Name, b.Meta.Name) })
	s.rev = rev
}

func (s *scriptedSource) failLists(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listErr = err
}

func (s *scriptedSource) listCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

func (s *scriptedSource) List(ctx context.Context, opts store.ListOpts) (*store.List[spec, status], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.listErr != nil {
		return nil, s.listErr
	}
	start := 0
	if opts.Continue != "" {
		start = slices.IndexFunc(s.objs, func(o *obj) bool { return o.Meta.Name > opts.Continue })
		if start < 0 {
			start = len(s.objs)
		}
	}
	end := len(s.objs)
	if opts.Limit > 0 && start+opts.Limit < end {
		end = start + opts.Limit
	}
	out := &store.List[spec, status]{Revision: s.rev}
	for _, o := range s.objs[start:end] {
		cp := *o // a fresh decode, as the Store gives
		out.Items = append(out.Items, &cp)
	}
	if end < len(s.objs) {
		out.Continue = s.objs[end-1].Meta.Name
	}
	return out, nil
}

func (s *scriptedSource) Watch(ctx context.Context, from int64) (<-chan store.WatchEvent[spec, status], error) {
	st := &stream{from: from, ctx: ctx, ch: make(chan store.WatchEvent[spec, status])}
	select {
	case s.streams <- st:
	default:
		return nil, errors.New("scripted: too many unclaimed watches")
	}
	// Close the stream when the cache cancels it, as a Store does.
	out := make(chan store.WatchEvent[spec, status])
	go func() {
		defer close(out)
		for {
			select {
			case ev, ok := <-st.ch:
				if !ok {
					return
				}
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// send delivers ev to the cache; it blocks until the cache took it.
func (st *stream) send(ev store.WatchEvent[spec, status]) { st.ch <- ev }

func added(o *obj) store.WatchEvent[spec, status] {
	return store.WatchEvent[spec, status]{Type: store.Added, Object: o, Revision: o.Meta.Revision}
}

func modified(prev, o *obj) store.WatchEvent[spec, status] {
	return store.WatchEvent[spec, status]{Type: store.Modified, Object: o, Prev: prev, Revision: o.Meta.Revision}
}

func deleted(prev *obj, rev int64) store.WatchEvent[spec, status] {
	gone := *prev
	gone.Meta.Revision = rev
	return store.WatchEvent[spec, status]{Type: store.Deleted, Object: &gone, Prev: prev, Revision: rev}
}

func progress(rev int64) store.WatchEvent[spec, status] {
	return store.WatchEvent[spec, status]{Progress: true, Revision: rev}
}

func expired(rev int64) store.WatchEvent[spec, status] {
	return store.WatchEvent[spec, status]{Revision: rev, Err: store.ErrExpired}
}
