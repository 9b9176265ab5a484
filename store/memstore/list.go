package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/steady-go/steady/store"
)

// List returns a page of the keys under prefix, as store.Backend describes.
//
// A page at the current revision is a scan of the key index. A page pinned
// to an older revision R is the current index with the writes after R
// undone: the history ring holds each of those writes with the key's value
// before it, so the page costs one pass over the writes since R plus the
// page itself, and needs no copy of the data set per listing. A revision that
// has left the ring, or was compacted, gives ErrExpired.
func (s *Store) List(ctx context.Context, prefix string, opts store.KVListOptions) (store.KVList, error) {
	s.count.lists.Add(1)
	if err := ctx.Err(); err != nil {
		return store.KVList{}, err
	}
	if opts.Limit < 0 || opts.Revision < 0 {
		return store.KVList{}, fmt.Errorf("memstore: list %q: negative limit %d or revision %d: %w",
			prefix, opts.Limit, opts.Revision, store.ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	head := s.hist.last
	rev := opts.Revision
	switch {
	case rev == 0:
		rev = head
	case rev > head:
		return store.KVList{}, fmt.Errorf("memstore: list %q at revision %d: store is at %d: %w",
			prefix, rev, head, store.ErrInvalid)
	case rev < head && (rev < s.compacted || !s.hist.covers(rev)):
		return store.KVList{}, fmt.Errorf("memstore: list %q at revision %d: %w", prefix, rev, store.ErrExpired)
	}
	p := page{prefix: prefix, after: opts.Continue, limit: opts.Limit}
	if p.after < prefix {
		p.after = ""
	}
	p.cur = s.idx.seek(max(prefix, p.after), p.after != "")
	if rev < head {
		p.undo(s, rev)
	}
	return p.collect(rev), nil
}

// page assembles one List page from the index cursor merged with the keys as
// they were at the page's revision.
type page struct {
	prefix, after string
	limit         int
	cur           cursor
	// old holds, for each key in range written after the page's revision,
	// its state at that revision (the zero KV if it did not exist).
	old map[string]store.KV
	// gone lists, in key order, the keys that existed at the page's
	// revision but do not exist now.
	gone []store.KV
}

func (p *page) inRange(key string) bool {
	return strings.HasPrefix(key, p.prefix) && (p.after == "" || key > p.after)
}

// undo records the state at rev of the keys written after it.
func (p *page) undo(s *Store, rev int64) {
	p.old = make(map[string]store.KV)
	for r := rev + 1; r <= s.hist.last; r++ {
		ev := s.hist.at(r)
		if _, seen := p.old[ev.KV.Key]; seen || !p.inRange(ev.KV.Key) {
			continue
		}
		p.old[ev.KV.Key] = ev.Prev
		if ev.Prev.ModRevision != 0 && s.kvs[ev.KV.Key] == nil {
			p.gone = append(p.gone, ev.Prev)
		}
	}
	slices.SortFunc(p.gone, func(a, b store.KV) int { return strings.Compare(a.Key, b.Key) })
}

// next returns the next key of the page in key order.
func (p *page) next() (store.KV, bool) {
	for {
		e := p.cur.peek()
		if e != nil && !strings.HasPrefix(e.Key, p.prefix) {
			e = nil
		}
		if len(p.gone) > 0 && (e == nil || p.gone[0].Key < e.Key) {
			kv := p.gone[0]
			p.gone = p.gone[1:]
			return kv, true
		}
		if e == nil {
			return store.KV{}, false
		}
		p.cur.advance()
		if p.old == nil {
			return *e, true
		}
		if old, ok := p.old[e.Key]; ok {
			if old.ModRevision == 0 {
				continue // created after the page's revision
			}
			return old, true
		}
		return *e, true
	}
}

func (p *page) collect(rev int64) store.KVList {
	res := store.KVList{Revision: rev}
	if p.limit > 0 {
		res.KVs = make([]store.KV, 0, min(p.limit, 1024))
	}
	for {
		kv, ok := p.next()
		if !ok {
			return res
		}
		if p.limit > 0 && len(res.KVs) == p.limit {
			res.Continue = res.KVs[len(res.KVs)-1].Key
			return res
		}
		res.KVs = append(res.KVs, kv)
	}
}
