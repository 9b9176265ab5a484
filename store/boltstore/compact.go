package boltstore

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/steady-go/steady/store"
)

// compactChunk bounds the history records one compaction transaction
// removes, so a large compaction never holds the writer lock for long.
const compactChunk = 4096

// kickCompaction wakes the compaction goroutine once the history holds more
// than WithHistorySize writes plus an eighth, so it does not run after every
// write.
func (s *Store) kickCompaction(st state) {
	n := int64(s.cfg.historySize)
	if st.rev-st.floor+1 > n+n/8 {
		select {
		case s.compactKick <- struct{}{}:
		default:
		}
	}
}

// compactLoop is the background compaction goroutine: it trims the history
// to the last WithHistorySize writes whenever a commit finds it too long, and
// returns on Close.
func (s *Store) compactLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.compactKick:
		case <-s.bg.Done():
			return
		}
		// An error here is a disk error that the next commit reports too;
		// the compaction is retried after the next commit.
		_ = s.compact(s.bg, s.head.Load()-int64(s.cfg.historySize)+1)
	}
}

// Compact discards the history before rev: afterwards a List pinned to a
// revision below rev, or a Watch from a revision below rev-1, fails with an
// error wrapping store.ErrExpired, including a running watch that has not
// yet read that far. Compacting to a revision already compacted is a no-op;
// one above the current revision is an error wrapping store.ErrInvalid. The
// background compaction does the same to keep WithHistorySize writes; Compact
// implements storetest.Compactor and lets tests force ErrExpired.
func (s *Store) Compact(ctx context.Context, rev int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if head := s.head.Load(); rev < 0 || rev > head {
		return fmt.Errorf("boltstore: compact to %d: store is at %d: %w", rev, head, store.ErrInvalid)
	}
	return s.compact(ctx, rev)
}

// compact moves the history floor up to rev, removing records in chunks of
// compactChunk, one transaction each. If ctx ends before the last chunk, it
// returns ctx's error with the floor wherever the chunks got it.
func (s *Store) compact(ctx context.Context, rev int64) error {
	for {
		more := false
		err := s.db.Update(func(tx *bolt.Tx) error {
			st, err := readState(tx)
			if err != nil {
				return err
			}
			to := min(rev, st.rev+1, st.floor+compactChunk)
			if to <= st.floor {
				return nil
			}
			log := tx.Bucket(bucketLog)
			for r := st.floor; r < to; r++ {
				if err := log.Delete(revKey(r)); err != nil {
					return err
				}
			}
			st.floor = to
			more = to < rev
			return writeState(tx, st)
		})
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return fmt.Errorf("boltstore: compact %s to %d: %w", s.path, rev, ErrClosed)
		}
		if err != nil {
			return fmt.Errorf("boltstore: compact %s to %d: %w", s.path, rev, err)
		}
		s.notify()
		if !more {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
