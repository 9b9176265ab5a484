package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/kv"
)

// ErrClosed is wrapped by the errors of calls on a Store after Close, and
// by the last event of a watch that Close ended. It wraps store.ErrClosed
// (kv.ErrClosed), which every backend that can be closed uses, so
// errors.Is(err, store.ErrClosed) is true of it too.
var ErrClosed error = closedError{}

type closedError struct{}

func (closedError) Error() string { return "boltstore: store is closed" }
func (closedError) Unwrap() error { return kv.ErrClosed }

// ErrLocked is wrapped by the error of Open when another process (or another
// Store in this process) has the file open.
var ErrLocked = errors.New("boltstore: file is locked by another process")

// Store is a kv.Backend on one bbolt file. Every acknowledged Txn is on
// disk (fsynced) before Txn returns; concurrent Txns share one commit and
// one fsync. Revisions continue across restarts from the file's last one.
//
// A Store owns its file (an exclusive lock) until Close; it runs one
// committer goroutine, one compaction goroutine and one goroutine per
// Watch, all of which end with Close. It is safe for concurrent use.
type Store struct {
	db   *bolt.DB
	path string
	cfg  config

	head atomic.Int64 // the revision of the last commit
	// wake is closed by the next commit (or compaction) when a watch is
	// waiting for one; see changed.
	wake atomic.Pointer[chan struct{}]

	mu      sync.Mutex
	closed  bool
	pending []*request // Txns waiting for the committer
	kick    chan struct{}

	compactKick chan struct{}
	// bg is the background goroutines' context, cancelled by Close.
	bg        context.Context
	stopBG    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

var _ kv.Backend = (*Store)(nil)

// Path returns the file the Store was opened on.
func (s *Store) Path() string { return s.path }

// Revision returns the current store revision: that of the last write, or 0
// for a file never written.
func (s *Store) Revision() int64 { return s.head.Load() }

// Close waits for the Txns already accepted to commit, ends every watch
// (its channel is closed after a final event wrapping ErrClosed, if the
// channel has room for it then), stops the background goroutines, and releases the
// file. Calls after Close fail with ErrClosed. Close is idempotent and
// returns the error of the first call.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.stopBG()
		s.wg.Wait()
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("boltstore: close %s: %w", s.path, err)
		}
	})
	return s.closeErr
}

// Get returns the current value of key, or an error wrapping
// store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (kv.KeyValue, error) {
	if err := ctx.Err(); err != nil {
		return kv.KeyValue{}, err
	}
	if key == "" {
		return kv.KeyValue{}, fmt.Errorf("boltstore: get of an empty key: %w", store.ErrInvalid)
	}
	var kvp kv.KeyValue
	err := s.view(func(tx *bolt.Tx) error {
		k := []byte(key)
		rec := tx.Bucket(bucketKVs).Get(k)
		if rec == nil {
			return fmt.Errorf("boltstore: get %q: %w", key, store.ErrNotFound)
		}
		var err error
		if kvp, err = decodeKV(k, rec); err != nil {
			return err
		}
		kvp.Value = bytes.Clone(kvp.Value)
		return nil
	})
	return kvp, err
}

// view runs fn in a read transaction, turning a closed database into
// ErrClosed.
func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	err := s.db.View(fn)
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("boltstore: %s: %w", s.path, ErrClosed)
	}
	return err
}

func readState(tx *bolt.Tx) (state, error) {
	return decodeState(tx.Bucket(bucketMeta).Get(keyState))
}

func writeState(tx *bolt.Tx, st state) error {
	return tx.Bucket(bucketMeta).Put(keyState, st.encode())
}

// notify wakes the watches waiting for a change.
func (s *Store) notify() {
	if ch := s.wake.Swap(nil); ch != nil {
		close(*ch)
	}
}

// changed returns a channel closed by the next commit. A watch takes it
// before it reads, so no commit can slip in between its read and its wait.
func (s *Store) changed() <-chan struct{} {
	for {
		if ch := s.wake.Load(); ch != nil {
			return *ch
		}
		ch := make(chan struct{})
		if s.wake.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}
