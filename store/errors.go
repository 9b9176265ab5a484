package store

import "errors"

// Sentinel errors. Every error the store returns wraps one of these where it
// applies; test with errors.Is.
var (
	// ErrNotFound: the object or key does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrAlreadyExists: Create of an object that exists.
	ErrAlreadyExists = errors.New("store: already exists")
	// ErrConflict: a revision or generation precondition failed because
	// someone else wrote first. Re-read and retry usually helps. A field
	// ownership conflict is a different error (*ownership.ConflictError),
	// which retrying never fixes.
	//
	// When a write's precondition (IfRevision, IfUID, IfGeneration,
	// IfObserved, an Update's or UpdateStatus's revision or status
	// generation) failed against the stored object, the error also says at
	// what revision that object is stored: errors.As(err, &s), with s of
	// type interface{ StoredRevision() int64 }. A caller that read from a
	// cache.Cache can wait for the cache to hold that revision
	// (Cache.WaitFor) instead of retrying on the stale read it has; the
	// reconcile Loop does.
	ErrConflict = errors.New("store: conflict")
	// ErrExpired: the requested history is gone (compacted, or a watcher
	// fell behind). Relist and watch again.
	ErrExpired = errors.New("store: revision expired")
	// ErrFenced: the write carried a leadership fence that no longer holds;
	// the writer's term is over.
	ErrFenced = errors.New("store: fenced: leadership term is over")
	// ErrTooLarge: a value over MaxValueSize.
	ErrTooLarge = errors.New("store: value too large")
	// ErrInvalid: bad input, such as a name that breaks the naming rules.
	ErrInvalid = errors.New("store: invalid")
	// ErrCondFailed: a Backend Txn precondition failed (see CondFailedError).
	ErrCondFailed = errors.New("store: txn precondition failed")
	// ErrUnavailable: the backend could not be reached or did not answer in
	// time (a timeout, no leader, a leader change, a lost connection, an
	// overloaded server). A write that fails with it may have committed:
	// retry idempotently. Re-read before retrying a write based on a read:
	// if the first attempt committed, an Update's retry fails with
	// ErrConflict and a Create's with ErrAlreadyExists, while Apply,
	// ApplyStatus and Delete converge on retry.
	ErrUnavailable = errors.New("store: unavailable (a write may have committed; retry idempotently)")
)

// staleError is an ErrConflict of a precondition that failed against the
// object stored at revision rev (see ErrConflict).
type staleError struct {
	err error
	rev int64
}

func (e *staleError) Error() string { return e.err.Error() }
func (e *staleError) Unwrap() error { return e.err }

// StoredRevision returns the revision of the stored object the
// precondition failed against.
func (e *staleError) StoredRevision() int64 { return e.rev }

// stale wraps err, a failed precondition's ErrConflict, with rev, the
// stored object's revision, when both are set.
func stale(err error, rev int64) error {
	if err == nil || rev <= 0 {
		return err
	}
	return &staleError{err: err, rev: rev}
}

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
