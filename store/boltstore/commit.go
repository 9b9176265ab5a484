package boltstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// Group commit. A Txn queues a request and waits; the committer goroutine
// takes every request queued so far, applies them in queue order in one
// bbolt transaction (each request sees the ones before it, and gets the next
// revision if its conds hold), commits it with one fsync, and then answers
// them all. Requests that arrive during a commit form the next batch. A
// lone writer pays one fsync per write and no added delay; n concurrent
// writers share one.

// maxBatch bounds the requests of one commit, and maxBatchBytes their
// values, so one transaction stays a bounded amount of dirty memory.
const (
	maxBatch      = 1024
	maxBatchBytes = 16 << 20
)

// bboltMaxKeySize is bbolt's limit on the length of a key.
const bboltMaxKeySize = 32768

type request struct {
	ctx   context.Context
	conds []kv.Cond
	w     kv.Write
	rev   int64
	err   error
	done  chan struct{}
}

// Txn applies w if every cond holds, as kv.Backend describes, and returns
// the new revision once the write is on disk. A Txn whose ctx ends while it
// waits for the committer is not applied; once the committer has taken it,
// Txn waits for the commit (one fsync) and reports its outcome whatever ctx
// does, so an error never hides a write that happened. Keys over 32 KiB
// (bbolt's limit) give an error wrapping store.ErrInvalid. If the commit
// itself fails (a disk error), every Txn of its batch gets the error and
// none is applied.
func (s *Store) Txn(ctx context.Context, conds []kv.Cond, w kv.Write) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := validate(conds, w); err != nil {
		return 0, err
	}
	r := &request{ctx: ctx, conds: conds, w: w, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, fmt.Errorf("boltstore: txn on %s: %w", s.path, ErrClosed)
	}
	s.pending = append(s.pending, r)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	<-r.done
	return r.rev, r.err
}

// validate adds bbolt's key size limit to kv.CheckTxn.
func validate(conds []kv.Cond, w kv.Write) error {
	if err := kv.CheckTxn(conds, w); err != nil {
		return fmt.Errorf("boltstore: %w", err)
	}
	if len(w.Key) > bboltMaxKeySize {
		return fmt.Errorf("boltstore: txn: key of %d bytes, over the %d-byte limit: %w", len(w.Key), bboltMaxKeySize, store.ErrInvalid)
	}
	return nil
}

// commitLoop is the committer goroutine. On Close it commits what was
// queued before Close and returns.
//
// Writers released by one commit come back one by one, and the first to
// come back would otherwise start the next commit alone, leaving the rest
// for the one after: batches would alternate between large and small. So
// when fewer writers are queued than the last batch held, the committer
// waits for the rest, at most an eighth of the last commit's duration. A
// lone writer never waits (its last batch was itself).
func (s *Store) commitLoop() {
	defer s.wg.Done()
	var (
		batch      []*request
		lastSize   int
		lastCommit time.Duration
	)
	gather := time.NewTimer(time.Hour)
	gather.Stop()
	for {
		if s.queued() == 0 {
			select {
			case <-s.kick:
			case <-s.bg.Done():
				if s.queued() == 0 { // Close lets no Txn in after bg ends
					return
				}
			}
			continue
		}
		if lastSize > 1 && s.queued() < lastSize && s.bg.Err() == nil {
			gather.Reset(lastCommit / 8)
		wait:
			for s.queued() < lastSize {
				select {
				case <-s.kick:
				case <-gather.C:
					break wait
				case <-s.bg.Done():
					break wait
				}
			}
			gather.Stop()
		}
		s.mu.Lock()
		batch = append(batch[:0], s.pending[:batchLen(s.pending)]...)
		s.pending = append(s.pending[:0], s.pending[len(batch):]...)
		s.mu.Unlock()
		start := time.Now()
		s.commit(batch)
		lastSize, lastCommit = len(batch), time.Since(start)
		clear(batch)
	}
}

// queued returns the number of Txns waiting for the committer.
func (s *Store) queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// batchLen returns how many of the pending requests go into the next
// commit.
func batchLen(pending []*request) int {
	n, size := 0, 0
	for n < len(pending) && n < maxBatch && (n == 0 || size+len(pending[n].w.Value) <= maxBatchBytes) {
		size += len(pending[n].w.Value)
		n++
	}
	return n
}

// commit applies a batch in one transaction and answers its requests.
func (s *Store) commit(batch []*request) {
	var st state
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		if st, err = readState(tx); err != nil {
			return err
		}
		start := st.rev
		kvs, log := tx.Bucket(bucketKVs), tx.Bucket(bucketLog)
		for _, r := range batch {
			r.rev, r.err = 0, nil
			if r.err = r.ctx.Err(); r.err != nil {
				continue
			}
			var fatal error
			if r.err, fatal = apply(kvs, log, r.conds, r.w, st.rev+1); fatal != nil {
				return fatal
			}
			if r.err == nil {
				st.rev++
				r.rev = st.rev
			}
		}
		if st.rev == start {
			return errNothingWritten
		}
		return writeState(tx, st)
	})
	switch {
	case errors.Is(err, errNothingWritten):
	case err != nil:
		err = fmt.Errorf("boltstore: commit to %s: %w", s.path, err)
		for _, r := range batch {
			r.rev, r.err = 0, err
		}
	default:
		s.head.Store(st.rev)
		s.notify()
		s.kickCompaction(st)
	}
	for _, r := range batch {
		close(r.done)
	}
}

// errNothingWritten rolls back a batch in which every request failed, so it
// costs no fsync.
var errNothingWritten = errors.New("nothing written")

// apply checks conds and makes w at revision rev. res is the request's
// outcome (nil, a *kv.CondFailedError, ErrNotFound for the delete of an
// absent key, or a damaged record); fatal is an error of bbolt that aborts
// the whole batch.
func apply(kvs, log *bolt.Bucket, conds []kv.Cond, w kv.Write, rev int64) (res, fatal error) {
	for i, c := range conds {
		actual := int64(0)
		if rec := kvs.Get([]byte(c.Key)); rec != nil {
			kvp, err := decodeKV([]byte(c.Key), rec)
			if err != nil {
				return err, nil
			}
			actual = kvp.ModRevision
			if c.Target == kv.CreateRevision {
				actual = kvp.CreateRevision
			}
		}
		if actual != c.Revision {
			return &kv.CondFailedError{Index: i, Cond: c, Actual: actual}, nil
		}
	}
	key := []byte(w.Key)
	var prev kv.KeyValue
	if rec := kvs.Get(key); rec != nil {
		var err error
		if prev, err = decodeKV(key, rec); err != nil {
			return err, nil
		}
	}
	if w.Kind == kv.WriteDelete {
		if prev.ModRevision == 0 {
			return fmt.Errorf("boltstore: delete %q: %w", w.Key, store.ErrNotFound), nil
		}
		ev := encodeEvent(rev, true, w.Key, 0, nil, prev) // copies prev's value before the page changes
		if err := kvs.Delete(key); err != nil {
			return nil, err
		}
		return nil, log.Put(revKey(rev), ev)
	}
	create := prev.CreateRevision
	if create == 0 {
		create = rev
	}
	ev := encodeEvent(rev, false, w.Key, create, w.Value, prev)
	if err := kvs.Put(key, encodeKV(key, create, rev, w.Value)); err != nil {
		return nil, err
	}
	return nil, log.Put(revKey(rev), ev)
}
