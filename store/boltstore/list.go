package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// List returns a page of the keys under prefix, as kv.Backend describes.
//
// A page at the current revision is a scan of the keys in one read
// transaction. A page pinned to an older revision R is the current keys with
// the writes after R undone, read from the history in the same transaction
// (each record holds the key's state before its write), so it costs one
// pass over the writes since R plus the page. A revision below the history
// floor (compacted, or more than WithHistorySize writes old) gives an error
// wrapping store.ErrExpired.
func (s *Store) List(ctx context.Context, prefix string, opts kv.ListOptions) (kv.List, error) {
	if err := ctx.Err(); err != nil {
		return kv.List{}, err
	}
	if opts.Limit < 0 || opts.Revision < 0 {
		return kv.List{}, fmt.Errorf("boltstore: list %q: negative limit %d or revision %d: %w",
			prefix, opts.Limit, opts.Revision, store.ErrInvalid)
	}
	if opts.Continue != "" && !strings.HasPrefix(opts.Continue, prefix) {
		return kv.List{}, fmt.Errorf("boltstore: list %q: continue key %q is not under the prefix: %w",
			prefix, opts.Continue, store.ErrInvalid)
	}
	var res kv.List
	err := s.view(func(tx *bolt.Tx) error {
		st, err := readState(tx)
		if err != nil {
			return err
		}
		rev := opts.Revision
		switch {
		case rev == 0:
			rev = st.rev
		case rev > st.rev:
			return fmt.Errorf("boltstore: list %q at revision %d: store is at %d: %w", prefix, rev, st.rev, store.ErrInvalid)
		case rev < st.rev && rev < st.floor:
			return fmt.Errorf("boltstore: list %q at revision %d: history starts at %d: %w", prefix, rev, st.floor, store.ErrExpired)
		}
		p := page{prefix: prefix, after: opts.Continue, limit: opts.Limit, cur: tx.Bucket(bucketKVs).Cursor()}
		if rev < st.rev {
			if err := p.undo(tx.Bucket(bucketKVs), tx.Bucket(bucketLog), rev); err != nil {
				return err
			}
		}
		res, err = p.collect(rev)
		return err
	})
	return res, err
}

// page assembles one List page from a cursor over the current keys merged
// with the keys as they were at the page's revision.
type page struct {
	prefix, after string
	limit         int
	cur           *bolt.Cursor
	k, rec        []byte // the cursor's current key and record; k is nil at the end
	// old holds, for each key in range written after the page's revision,
	// its state then (the zero KV if it did not exist).
	old map[string]kv.KeyValue
	// gone lists, in key order, the keys that existed at the page's
	// revision but do not exist now.
	gone []kv.KeyValue
}

func (p *page) inRange(key string) bool {
	return strings.HasPrefix(key, p.prefix) && (p.after == "" || key > p.after)
}

// undo records the state at rev of the keys written after it, from the
// history records rev+1 onwards. Their values alias the transaction's pages.
func (p *page) undo(kvs, log *bolt.Bucket, rev int64) error {
	p.old = make(map[string]kv.KeyValue)
	c := log.Cursor()
	for k, rec := c.Seek(revKey(rev + 1)); k != nil; k, rec = c.Next() {
		key, ok := eventKey(rec)
		switch {
		case !ok:
			return fmt.Errorf("%w: malformed history record %x", ErrCorrupt, k)
		case !p.inRange(string(key)):
			continue
		}
		if _, seen := p.old[string(key)]; seen {
			continue
		}
		ev, err := decodeEvent(revOf(k), rec)
		if err != nil {
			return err
		}
		p.old[ev.KV.Key] = ev.Prev
		if ev.Prev.ModRevision != 0 && kvs.Get(key) == nil {
			p.gone = append(p.gone, ev.Prev)
		}
	}
	slices.SortFunc(p.gone, func(a, b kv.KeyValue) int { return strings.Compare(a.Key, b.Key) })
	return nil
}

// seek places the cursor on the page's first candidate key.
func (p *page) seek() {
	p.k, p.rec = p.cur.Seek([]byte(max(p.prefix, p.after)))
	if p.after != "" && p.k != nil && string(p.k) == p.after {
		p.k, p.rec = p.cur.Next()
	}
}

// next returns the next key of the page in key order; ok is false at the
// end. Its value aliases the transaction's pages.
func (p *page) next() (kvp kv.KeyValue, ok bool, err error) {
	for {
		k := p.k
		if k != nil && !bytes.HasPrefix(k, []byte(p.prefix)) {
			k = nil
		}
		if len(p.gone) > 0 && (k == nil || p.gone[0].Key < string(k)) {
			kvp, p.gone = p.gone[0], p.gone[1:]
			return kvp, true, nil
		}
		if k == nil {
			return kv.KeyValue{}, false, nil
		}
		rec := p.rec
		p.k, p.rec = p.cur.Next()
		if old, changed := p.old[string(k)]; changed {
			if old.ModRevision == 0 {
				continue // created after the page's revision
			}
			return old, true, nil
		}
		kvp, err := decodeKV(k, rec)
		return kvp, err == nil, err
	}
}

// collect reads the page, copying the values out of the transaction.
func (p *page) collect(rev int64) (kv.List, error) {
	res := kv.List{Revision: rev}
	if p.limit > 0 {
		res.KVs = make([]kv.KeyValue, 0, min(p.limit, 1024))
	}
	p.seek()
	for {
		kvp, ok, err := p.next()
		if err != nil || !ok {
			return res, err
		}
		if p.limit > 0 && len(res.KVs) == p.limit {
			res.Continue = res.KVs[len(res.KVs)-1].Key
			return res, nil
		}
		kvp.Value = bytes.Clone(kvp.Value)
		res.KVs = append(res.KVs, kvp)
	}
}

// revOf returns the revision of a history key.
func revOf(k []byte) int64 { return int64(binary.BigEndian.Uint64(k)) }
