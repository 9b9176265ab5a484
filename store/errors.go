package store

import (
	"errors"

	"github.com/steady-go/steady/store/kv"
)

// Sentinel errors. Every error the store returns wraps one of these where it
// applies; test with errors.Is. The ones a Backend returns too are package
// kv's values under the same names.
var (
	// ErrNotFound: the object or key does not exist.
	ErrNotFound = kv.ErrNotFound
	// ErrAlreadyExists: Create of an object that exists.
	ErrAlreadyExists = errors.New("store: already exists")
	// ErrConflict: a revision or generation precondition failed because
	// someone else wrote first. Re-read and retry usually helps. A field
	// ownership conflict is a different error (*ownership.ConflictError),
	// which retrying never fixes. A failed precondition's error also tells
	// a reconcile Loop at what revision the object is stored, so that a
	// Loop whose cache has yet to show it waits for the cache instead of
	// retrying the stale read (see package reconcile).
	ErrConflict = errors.New("store: conflict")
	// ErrExpired: the requested history is gone (compacted, or a watcher
	// fell behind). Relist and watch again.
	ErrExpired = kv.ErrExpired
	// ErrFenced: the write carried a leadership fence that no longer holds;
	// the writer's term is over.
	ErrFenced = errors.New("store: fenced: leadership term is over")
	// ErrTooLarge: a value over kv.MaxValueSize.
	ErrTooLarge = kv.ErrTooLarge
	// ErrInvalid: bad input, such as a name that breaks the naming rules.
	ErrInvalid = kv.ErrInvalid
	// ErrUnavailable: the backend could not be reached or did not answer in
	// time (a timeout, no leader, a leader change, a lost connection, an
	// overloaded server). A write that fails with it may have committed:
	// retry idempotently. Re-read before retrying a write based on a read:
	// if the first attempt committed, an Update's retry fails with
	// ErrConflict and a Create's with ErrAlreadyExists, while Apply,
	// ApplyStatus and Delete converge on retry.
	ErrUnavailable = kv.ErrUnavailable
	// ErrClosed: the backend was closed (boltstore's and pgstore's Close,
	// etcdstore's etcd client closed). Nothing but a new backend helps.
	ErrClosed = kv.ErrClosed
)

// IgnoreNotFound returns nil if err is ErrNotFound, else err. It makes
// "delete if present" idempotent in one line.
func IgnoreNotFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// IgnoreAlreadyExists returns nil if err is ErrAlreadyExists, else err.
func IgnoreAlreadyExists(err error) error {
	if errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	return err
}
