package cache_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/steady-go/steady/store"
)

// Test types shared by the cache tests.
type cacheSpec struct {
	Image    string `json:"image"`
	Replicas int    `json:"replicas"`
}

type cacheStatus struct {
	Ready int `json:"ready"`
}

type cobj = store.Object[cacheSpec, cacheStatus]

func mkObj(name, uid string, rev int64, labels map[string]string, owners ...string) *cobj {
	o := &cobj{Meta: store.Meta{Kind: "Widget", Name: name, UID: uid, Labels: labels, Revision: rev}}
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
	objs    []*cobj
	rev     int64
	listErr error
	lists   int
	streams chan *stream
	// onWatch, if set, runs inside Watch before it returns.
	onWatch func()
}

type stream struct {
	from int64
	ctx  context.Context
	ch   chan store.Event[cacheSpec, cacheStatus]
}

func newScripted(rev int64, objs ...*cobj) *scriptedSource {
	s := &scriptedSource{streams: make(chan *stream, 16)}
	s.set(rev, objs...)
	return s
}

func (s *scriptedSource) set(rev int64, objs ...*cobj) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs = slices.Clone(objs)
	slices.SortFunc(s.objs, func(a, b *cobj) int { return strings.Compare(a.Meta.Name, b.Meta.Name) })
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

func (s *scriptedSource) List(ctx context.Context, opts store.ListOptions) (*store.List[cacheSpec, cacheStatus], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.listErr != nil {
		return nil, s.listErr
	}
	start := 0
	if opts.Continue != "" {
		start = slices.IndexFunc(s.objs, func(o *cobj) bool { return o.Meta.Name > opts.Continue })
		if start < 0 {
			start = len(s.objs)
		}
	}
	end := len(s.objs)
	if opts.Limit > 0 && start+opts.Limit < end {
		end = start + opts.Limit
	}
	out := &store.List[cacheSpec, cacheStatus]{Revision: s.rev}
	for _, o := range s.objs[start:end] {
		cp := *o // a fresh decode, as the Store gives
		out.Items = append(out.Items, &cp)
	}
	if end < len(s.objs) {
		out.Continue = s.objs[end-1].Meta.Name
	}
	return out, nil
}

func (s *scriptedSource) Watch(ctx context.Context, from int64) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	st := &stream{from: from, ctx: ctx, ch: make(chan store.Event[cacheSpec, cacheStatus])}
	if s.onWatch != nil {
		s.onWatch()
	}
	select {
	case s.streams <- st:
	default:
		return nil, errors.New("scripted: too many unclaimed watches")
	}
	// Close the stream when the cache cancels it, as a Store does.
	out := make(chan store.Event[cacheSpec, cacheStatus])
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
func (st *stream) send(ev store.Event[cacheSpec, cacheStatus]) { st.ch <- ev }

func evAdded(o *cobj) store.Event[cacheSpec, cacheStatus] {
	return store.Event[cacheSpec, cacheStatus]{Type: store.Added, Object: o, Revision: o.Meta.Revision}
}

func evModified(prev, o *cobj) store.Event[cacheSpec, cacheStatus] {
	return store.Event[cacheSpec, cacheStatus]{Type: store.Modified, Object: o, Prev: prev, Revision: o.Meta.Revision}
}

func evDeleted(prev *cobj, rev int64) store.Event[cacheSpec, cacheStatus] {
	gone := *prev
	gone.Meta.Revision = rev
	return store.Event[cacheSpec, cacheStatus]{Type: store.Deleted, Object: &gone, Prev: prev, Revision: rev}
}

func evProgress(rev int64) store.Event[cacheSpec, cacheStatus] {
	return store.Event[cacheSpec, cacheStatus]{Progress: true, Revision: rev}
}

func evExpired(rev int64) store.Event[cacheSpec, cacheStatus] {
	return store.Event[cacheSpec, cacheStatus]{Revision: rev, Err: store.ErrExpired}
}
