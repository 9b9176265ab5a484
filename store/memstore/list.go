package memstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// List returns a page of the keys under prefix, as kv.Backend describes.
//
// A page at the current revision is a scan of the key index. A page pinned
// to an older revision R is the current index with the writes after R
// undone: the history ring holds each of those writes with the key's value
// before it, so the page costs one pass over the writes since R plus the
// page itself, and needs no copy of the data set per listing. The Store
// keeps that pass for the next page pinned to R, which reads only the
// writes since, so a listing's pages together cost one pass. A revision that
// has left the ring, or was compacted, gives ErrExpired.
func (s *Store) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	s.count.lists.Add(1)
	if err := ctx.Err(); err != nil {
		return kv.List{}, err
	}
	if opts.Limit < 0 || opts.Revision < 0 {
		return kv.List{}, fmt.Errorf("memstore: list %q: negative limit %d or revision %d: %w",
			prefix, opts.Limit, opts.Revision, store.ErrInvalid)
	}
	if opts.Continue != "" && !strings.HasPrefix(opts.Continue, prefix) {
		return kv.List{}, fmt.Errorf("memstore: list %q: continue key %q is not under the prefix: %w",
			prefix, opts.Continue, store.ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	head := s.hist.last
	rev := opts.Revision
	switch {
	case rev == 0:
		rev = head
	case rev > head:
		return kv.List{}, fmt.Errorf("memstore: list %q at revision %d: store is at %d: %w",
			prefix, rev, head, store.ErrInvalid)
	case rev < head && (rev < s.compacted || !s.hist.covers(rev)):
		s.dropExpiredUndo()
		return kv.List{}, fmt.Errorf("memstore: list %q at revision %d: %w", prefix, rev, store.ErrExpired)
	}
	p := page{s: s, prefix: prefix, after: opts.Continue, limit: opts.Limit}
	p.cur = s.idx.seek(max(prefix, p.after), p.after != "")
	var l kv.List
	if rev == head {
		l = p.collect(rev)
	} else {
		u := s.takeUndo(prefix, rev)
		p.undo(u)
		l = p.collect(rev)
		if l.Continue != "" {
			// The listing's last page needs it no more: kept, it would hold
			// every key written since rev until the next pinned listing.
			s.keepUndo(u)
		}
	}
	s.pin(rev, opts.Continue == "", l.Continue != "")
	return l, nil
}

// undone is the state at revision rev of the keys under prefix written
// after it, as far as the history has been read (up to upto). The pages of
// one listing are all pinned to the revision of its first, so the Store
// keeps the last one for the next page, which reads only the writes since:
// a listing costs one pass over the writes since its revision, not one per
// page. The last page of a listing drops it.
type undone struct {
	prefix    string
	rev, upto int64
	// old holds, for each key written since rev, the revision of its first
	// event after rev, whose Prev is its state at rev (the zero KV if it
	// did not exist then).
	old map[string]int64
	// existed lists, in key order once sorted, the keys of old that
	// existed at rev: those that do not exist now are the page's gone keys.
	existed  []undoneKey
	unsorted bool
}

// undoneKey is a key of undone.old with the revision it maps to.
type undoneKey struct {
	key string
	rev int64
}

// takeUndo returns the Store's undone state of prefix at rev, read up to
// the store revision, taking it from the Store (a listing pinned elsewhere
// meanwhile builds its own). Callers hold s.mu for reading.
func (s *Store) takeUndo(prefix string, rev int64) *undone {
	s.undoMu.Lock()
	u := s.undo
	s.undo = nil
	s.undoMu.Unlock()
	if u == nil || u.prefix != prefix || u.rev != rev {
		u = &undone{prefix: prefix, rev: rev, upto: rev, old: make(map[string]int64)}
	}
	for r := u.upto + 1; r <= s.hist.last; r++ {
		ev := s.hist.at(r)
		if !strings.HasPrefix(ev.key, prefix) {
			continue
		}
		if _, seen := u.old[ev.key]; seen {
			continue
		}
		u.old[ev.key] = r
		if ev.prev {
			u.existed = append(u.existed, undoneKey{ev.key, r})
			u.unsorted = true
		}
	}
	u.upto = s.hist.last
	if u.unsorted {
		slices.SortFunc(u.existed, func(a, b undoneKey) int { return strings.Compare(a.key, b.key) })
		u.unsorted = false
	}
	return u
}

// dropExpiredUndo drops the undone state the Store keeps if its revision
// has left the history: every page pinned to it ends with ErrExpired, and
// a listing that expires (a Cache's relist then lists in one unpinned page)
// never reaches its last page, which would drop it. Callers hold s.mu for
// reading.
func (s *Store) dropExpiredUndo() {
	s.undoMu.Lock()
	if u := s.undo; u != nil && (u.rev < s.compacted || !s.hist.covers(u.rev)) {
		s.undo = nil
	}
	s.undoMu.Unlock()
}

// keepUndo keeps u for the next page of its listing.
func (s *Store) keepUndo(u *undone) {
	s.undoMu.Lock()
	s.undo = u
	s.undoMu.Unlock()
}

// page assembles one List page from the index cursor merged with the keys as
// they were at the page's revision.
type page struct {
	s             *Store
	prefix, after string
	limit         int
	cur           cursor
	// old holds, for each key under prefix written after the page's
	// revision, the event whose Prev is its state at that revision (see
	// undone); nil for a page at the store revision.
	old map[string]int64
	// gone lists, in key order, the keys from the page's start on that
	// existed at the page's revision; those that still exist are skipped.
	gone []undoneKey
}

// undo takes the state at the page's revision from u.
func (p *page) undo(u *undone) {
	p.old = u.old
	from := max(p.prefix, p.after)
	i, _ := slices.BinarySearchFunc(u.existed, from, func(k undoneKey, key string) int { return strings.Compare(k.key, key) })
	if i < len(u.existed) && p.after != "" && u.existed[i].key == p.after {
		i++
	}
	p.gone = u.existed[i:]
}

// nextGone returns the first key of gone that no longer exists, dropping
// those before it, or false.
func (p *page) nextGone() (kv.KeyValue, bool) {
	for len(p.gone) > 0 {
		k := p.gone[0]
		if !strings.HasPrefix(k.key, p.prefix) {
			p.gone = nil
			break
		}
		if p.s.kvs.get(k.key) == nil {
			return p.s.hist.prevKV(k.rev), true
		}
		p.gone = p.gone[1:]
	}
	return kv.KeyValue{}, false
}

// next returns the next key of the page in key order.
func (p *page) next() (kv.KeyValue, bool) {
	for {
		e := p.cur.peek()
		if e != nil && !strings.HasPrefix(e.Key, p.prefix) {
			e = nil
		}
		if kv, ok := p.nextGone(); ok && (e == nil || kv.Key < e.Key) {
			p.gone = p.gone[1:]
			return kv, true
		}
		if e == nil {
			return kv.KeyValue{}, false
		}
		p.cur.advance()
		if p.old == nil {
			return *e, true
		}
		if r, ok := p.old[e.Key]; ok {
			if !p.s.hist.at(r).prev {
				continue // created after the page's revision
			}
			return p.s.hist.prevKV(r), true
		}
		return *e, true
	}
}

func (p *page) collect(rev int64) kv.List {
	res := kv.List{Revision: rev}
	if p.limit > 0 {
		res.KVs = make([]kv.KeyValue, 0, min(p.limit, 1024))
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
