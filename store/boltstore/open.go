package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Open opens the store in the file at path, creating it (mode 0600) if it
// does not exist, and returns it at the file's last revision. An existing
// empty file is a new store.
//
// The file is locked for this Store until Close: if another process (or
// another Store in this process) has it, Open waits up to WithLockTimeout and
// then fails with an error wrapping ErrLocked.
//
// Open checks the whole file before it returns: bbolt's two meta pages and
// its page structure, the checksum of every record, and that the history
// and the revision agree. A file that fails (truncated, bytes flipped, or
// not a boltstore file) gives an error wrapping ErrCorrupt, never a panic
// and never a store with writes silently missing. The check reads the whole
// file once, so opening costs time in proportion to its size.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := newConfig(opts)
	db, st, err := openFile(path, cfg.lockTimeout)
	if err != nil {
		return nil, err
	}
	s := &Store{
		db:          db,
		path:        path,
		cfg:         cfg,
		kick:        make(chan struct{}, 1),
		compactKick: make(chan struct{}, 1),
	}
	s.bg, s.stopBG = context.WithCancel(context.Background())
	s.head.Store(st.rev)
	s.wg.Add(2)
	go s.commitLoop()
	go s.compactLoop()
	s.kickCompaction(st)
	return s, nil
}

// openFile opens, initializes and checks the file. A damaged file can make
// bbolt fault on a page outside the file or panic on a malformed one; both
// are turned into errors wrapping ErrCorrupt here, in the goroutine that
// touches the pages, and the file is released.
func openFile(path string, lockTimeout time.Duration) (db *bolt.DB, st state, err error) {
	var file *os.File
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if db != nil {
				db.Close()
			} else if file != nil {
				file.Close()
			}
			db, err = nil, fmt.Errorf("boltstore: open %s: %w: reading it failed: %v", path, ErrCorrupt, p)
		}
	}()
	if lockTimeout <= 0 {
		lockTimeout = time.Nanosecond // bbolt's 0 waits forever; this tries once
	}
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		Timeout: lockTimeout,
		OpenFile: func(name string, flag int, perm fs.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			file = f
			return f, err
		},
	})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return nil, st, fmt.Errorf("boltstore: open %s: waited %v: %w", path, lockTimeout, ErrLocked)
	case err != nil && (errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) ||
		errors.Is(err, berrors.ErrVersionMismatch) || !isPathError(err)):
		return nil, st, fmt.Errorf("boltstore: open %s: %w: %v", path, ErrCorrupt, err)
	case err != nil:
		return nil, st, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	// Check before any write: a write transaction rewrites a meta page.
	if err = checkMetaPages(path, db.Info().PageSize); err == nil {
		if st, err = initFile(db); err == nil {
			err = checkFile(db, path)
		}
	}
	if err != nil {
		db.Close()
		return nil, st, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	return db, st, nil
}

func isPathError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe)
}

// initFile reads the state of an existing file, and creates the buckets
// and the state record of a new one. It writes nothing to an existing file.
func initFile(db *bolt.DB) (state, error) {
	var st state
	n := 0
	err := db.View(func(tx *bolt.Tx) error {
		err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			n++
			for _, b := range [][]byte{bucketKVs, bucketLog, bucketMeta} {
				if bytes.Equal(name, b) {
					return nil
				}
			}
			return fmt.Errorf("%w: not a boltstore file (it has a bucket %q)", ErrCorrupt, name)
		})
		switch {
		case err != nil:
			return err
		case n == 3:
			st, err = readState(tx)
			return err
		case n != 0:
			return fmt.Errorf("%w: %d of the 3 buckets of a boltstore file", ErrCorrupt, n)
		}
		return nil
	})
	if err != nil || n != 0 {
		return st, err
	}
	st = state{rev: 0, floor: 1}
	return st, db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketKVs, bucketLog, bucketMeta} {
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return writeState(tx, st)
	})
}

// checkFile checks the whole file: that it holds
// every page the tree refers to, the checksum and form of every record, that
// the history is exactly the revisions from its floor to the store
// revision, and bbolt's own page-level consistency check.
func checkFile(db *bolt.DB, path string) error {
	return db.View(func(tx *bolt.Tx) error {
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		if fi.Size() < tx.Size() {
			return fmt.Errorf("%w: the file is %d bytes, its pages need %d (truncated?)", ErrCorrupt, fi.Size(), tx.Size())
		}
		st, err := readState(tx)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketKVs).ForEach(func(k, rec []byte) error {
			kv, err := decodeKV(k, rec)
			if err == nil && kv.ModRevision > st.rev {
				err = fmt.Errorf("%w: key %q at revision %d, past the store revision %d", ErrCorrupt, k, kv.ModRevision, st.rev)
			}
			return err
		}); err != nil {
			return err
		}
		want := st.floor
		if err := tx.Bucket(bucketLog).ForEach(func(k, rec []byte) error {
			if len(k) != 8 || int64(binary.BigEndian.Uint64(k)) != want {
				return fmt.Errorf("%w: history record %x where revision %d belongs", ErrCorrupt, k, want)
			}
			_, err := decodeEvent(want, rec)
			want++
			return err
		}); err != nil {
			return err
		}
		if want != st.rev+1 {
			return fmt.Errorf("%w: history ends at revision %d, the store is at %d", ErrCorrupt, want-1, st.rev)
		}
		var first error
		for err := range tx.Check() { // drained, so the checking goroutine ends
			if first == nil {
				first = fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
		}
		return first
	})
}

// bbolt's meta page layout: a 16-byte page header, then magic, version,
// page size and flags (4 bytes each), the root bucket (16), the freelist
// page, the high-water page and the transaction id (8 each), and an FNV-64a
// checksum of the 56 bytes before it.
const (
	metaOffset   = 16
	metaSumBytes = 56
	boltMagic    = 0xED0CDAED
)

// checkMetaPages refuses a file with a damaged meta page, and then checks
// the page tree (checkPages). bbolt keeps two
// and opens at the newer valid one, which turns a damaged newest meta page
// into the silent loss of the last transaction; boltstore reports it
// instead. (A process killed at any point never leaves a damaged meta page:
// the kernel has every write it made. A power failure in the middle of a
// meta page write can; see the package documentation.)
func checkMetaPages(path string, pageSize int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := readMetaPages(f, pageSize); err != nil {
		return err
	}
	return checkPages(f, pageSize)
}

func readMetaPages(f *os.File, pageSize int) error {
	buf := make([]byte, metaOffset+metaSumBytes+8)
	for i := range 2 {
		if _, err := f.ReadAt(buf, int64(i*pageSize)); err != nil {
			return fmt.Errorf("%w: reading meta page %d: %v", ErrCorrupt, i, err)
		}
		m := buf[metaOffset:]
		h := fnv.New64a()
		h.Write(m[:metaSumBytes])
		if binary.NativeEndian.Uint32(m) != boltMagic || binary.NativeEndian.Uint64(m[metaSumBytes:]) != h.Sum64() {
			return fmt.Errorf("%w: meta page %d is damaged", ErrCorrupt, i)
		}
	}
	return nil
}
