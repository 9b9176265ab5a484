package kv

import (
	"context"
	"errors"
	"fmt"
)

// Sentinel errors of the contract. A Backend returns errors that wrap them
// where they apply; test with errors.Is. Package store exports the same
// values (store.ErrNotFound is ErrNotFound), so a caller of either package
// tests with the names it has.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrExpired: the requested history is gone (compacted, or a watcher
	// fell behind). Relist and watch again.
	ErrExpired = errors.New("store: revision expired")
	// ErrTooLarge: a value over MaxValueSize.
	ErrTooLarge = errors.New("store: value too large")
	// ErrInvalid: bad input, such as an empty key or a negative revision.
	ErrInvalid = errors.New("store: invalid")
	// ErrCondFailed: a Txn precondition failed (see CondFailedError).
	ErrCondFailed = errors.New("store: txn precondition failed")
	// ErrUnavailable: the backend could not be reached or did not answer in
	// time (a timeout, no leader, a leader change, a lost connection, an
	// overloaded server). A write that fails with it may have committed.
	ErrUnavailable = errors.New("store: unavailable (a write may have committed; retry idempotently)")
	// ErrClosed: the backend was closed (see Backend). Nothing but a new
	// backend helps.
	ErrClosed = errors.New("store: backend closed")
)

// MaxValueSize is the largest value a Backend accepts (1 MiB). A larger value
// is refused with an error wrapping ErrTooLarge before anything is written.
const MaxValueSize = 1 << 20

// Backend is the contract every storage engine implements: a versioned
// key-value space with one store-wide, monotonic revision. The typed Store is
// written once over it; memstore, etcdstore and users' own engines implement
// it, and store/storetest checks that they do.
//
// Every write (a successful Txn) advances the store revision by exactly one,
// and the written key's ModRevision is that new revision; a Txn that fails
// writes nothing and leaves the revision where it was. Revisions are
// positive (memstore's first write is revision 1; an etcd cluster starts
// higher); 0 means "no revision".
//
// Keys are non-empty strings. An empty key, an unknown WriteKind or
// CondTarget, a negative Limit or revision give an error wrapping ErrInvalid.
//
// Values are shared, not copied, on the way out: the Value slices a Backend
// returns (from Get, List and Watch) must not be modified by the caller, nor
// by the Backend afterwards (a Store keeps some, see WithLastValues). On the
// way in a Backend does not retain w.Value after Txn returns, so the caller
// may reuse its buffer, unless w.Owned hands it over; nor does it retain
// the conds slice, which a caller may reuse for its next Txn (a Store's
// writes do): a Backend that needs the conds after Txn returns (a write
// that outlives its call) copies them.
//
// Implementations must be safe for concurrent use. A cancelled ctx ends any
// call with ctx's error.
type Backend interface {
	// Get returns the current value of key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) (KeyValue, error)

	// List returns the keys under prefix in key order, at most opts.Limit of
	// them (0 means no limit), starting after opts.Continue. Every page of
	// one listing reflects the same revision: the first page's Revision is
	// passed back in opts.Revision for the following pages. A Revision that is
	// no longer available gives an error wrapping ErrExpired; one above the
	// current revision gives an error wrapping ErrInvalid, and so does a
	// Continue that is not under prefix (a page's Continue always is).
	List(ctx context.Context, prefix string, opts ListOptions) (List, error)

	// Txn applies w if and only if every cond holds, atomically, and returns
	// the new store revision. Conds are checked in order; when one fails
	// nothing is written and the error is a *CondFailedError naming the
	// first cond that failed (it matches ErrCondFailed with errors.Is). When
	// every cond holds but w deletes an absent key, nothing is written and
	// the error wraps ErrNotFound. A value over MaxValueSize gives an error
	// wrapping ErrTooLarge. No conds means an unconditional write.
	Txn(ctx context.Context, conds []Cond, w Write) (int64, error)

	// Watch streams the changes under prefix with revisions strictly greater
	// than fromRevision, in revision order, until ctx ends or the watch
	// fails. 0 is no special case: a watch from 0 replays every change from
	// revision 1 on, or ends with ErrExpired when that history is gone (it
	// never means "from now"). So a List followed by a Watch from the
	// List's Revision misses no write made in between, even on an empty
	// store, whose List has Revision 0. To follow only new changes, watch
	// from the Revision of a List. The channel is closed after the last
	// event. A watch that cannot
	// continue (history compacted past fromRevision, or a watcher too slow to
	// keep up) sends a final Event whose Err wraps ErrExpired; the events
	// before it are valid, and the caller resumes by relisting (or by
	// watching again from the last revision it saw, while history lasts). A
	// watch never blocks writers and never silently skips an event. When
	// writes outside prefix advance the store revision, the watch sends a
	// Progress event carrying that revision (coalesced; it need not send one
	// per write). A fromRevision at or above the current revision waits for
	// new writes. On ctx's end the channel is closed without an error event.
	//
	// A Backend that can be closed (an io.Closer, such as boltstore's and
	// pgstore's) ends every watch on Close with a final Event whose Err
	// wraps ErrClosed, if the channel has room for it then (a receiver
	// still a channel's worth behind finds the channel closed without it),
	// and closes the channel; its calls after Close, Watch among them,
	// return an error wrapping ErrClosed.
	Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan Event, error)
}

// KeyValue is one stored key.
type KeyValue struct {
	Key   string
	Value []byte
	// CreateRevision is the revision at which the key was created.
	CreateRevision int64
	// ModRevision is the revision of the key's last write.
	ModRevision int64
}

// ListOptions selects a page of a Backend.List.
type ListOptions struct {
	// Limit is the page size; 0 returns everything.
	Limit int
	// Continue is the last key of the previous page; the page starts after
	// it. It must be under the listed prefix (ErrInvalid otherwise).
	Continue string
	// Revision pins a page to the revision of the listing's first page. 0
	// means the current revision.
	Revision int64
}

// List is one page of a Backend.List.
type List struct {
	KVs []KeyValue
	// Revision is the store revision the page reflects.
	Revision int64
	// Continue is non-empty when more keys follow; pass it to the next call.
	Continue string
}

// CondTarget names what a Cond compares.
type CondTarget uint8

const (
	// ModRevision compares the key's ModRevision (0 when the key is absent).
	ModRevision CondTarget = iota
	// CreateRevision compares the key's CreateRevision (0 when absent), so
	// CreateRevision == 0 means "the key does not exist".
	CreateRevision
)

// Cond is one precondition of a Txn: Target of Key equals Revision. It may
// name any key, which is how a leadership fence rides along with a write.
type Cond struct {
	Key      string
	Target   CondTarget
	Revision int64
}

// WriteKind says what a Write does.
type WriteKind uint8

const (
	// WritePut writes Value at Key.
	WritePut WriteKind = iota + 1
	// WriteDelete removes Key; deleting an absent key is an error wrapping
	// ErrNotFound.
	WriteDelete
)

// Write is the single write of a Txn.
type Write struct {
	Kind  WriteKind
	Key   string
	Value []byte
	// Owned hands Value over to the Backend: the caller will not modify
	// it after Txn, so a Backend that keeps values in memory may keep Value
	// itself instead of a copy (memstore does). A Store's writes set it:
	// the value it encoded is then the one stored, and the one it
	// remembers (see store.WithLastValues), once.
	Owned bool
}

// EventType says what happened to a key.
type EventType uint8

const (
	// EventPut is a create or an update of a key.
	EventPut EventType = iota + 1
	// EventDelete is the removal of a key.
	EventDelete
)

// Event is one change delivered by Backend.Watch.
type Event struct {
	Type EventType
	// KV is the key after the change. For an EventDelete it carries the key, the
	// deleting revision as ModRevision, no value and CreateRevision 0.
	KV KeyValue
	// Prev is the key before the change; for a create it is the zero KeyValue. For
	// an EventDelete it holds the last value, so a watcher can tell what went.
	Prev KeyValue
	// Progress marks a notification carrying only Revision: every change
	// under the prefix up to Revision has been delivered.
	Progress bool
	// Revision is the store revision of the change or the progress mark.
	Revision int64
	// Err is set on the last event of a watch that failed (ErrExpired, or
	// ErrClosed when its backend closed).
	Err error
}

// CheckTxn reports the first reason a Backend must refuse a Txn of conds and
// w before looking at its data, as Backend describes: an empty key, an
// unknown WriteKind or CondTarget, or a negative cond revision give an error
// wrapping ErrInvalid, and a value over MaxValueSize one wrapping
// ErrTooLarge. It returns nil for a Txn the Backend should attempt. It is for
// Backend implementations, so that every engine refuses the same inputs;
// callers of a Backend need not call it.
func CheckTxn(conds []Cond, w Write) error {
	if w.Key == "" {
		return fmt.Errorf("store: txn: empty key: %w", ErrInvalid)
	}
	switch w.Kind {
	case WritePut:
		if len(w.Value) > MaxValueSize {
			return fmt.Errorf("store: txn: value of %q is %d bytes, over the %d-byte limit: %w",
				w.Key, len(w.Value), MaxValueSize, ErrTooLarge)
		}
	case WriteDelete:
	default:
		return fmt.Errorf("store: txn: unknown write kind %d: %w", w.Kind, ErrInvalid)
	}
	for i, c := range conds {
		switch {
		case c.Key == "":
			return fmt.Errorf("store: txn: cond %d: empty key: %w", i, ErrInvalid)
		case c.Target != ModRevision && c.Target != CreateRevision:
			return fmt.Errorf("store: txn: cond %d: unknown target %d: %w", i, c.Target, ErrInvalid)
		case c.Revision < 0:
			return fmt.Errorf("store: txn: cond %d: negative revision %d: %w", i, c.Revision, ErrInvalid)
		}
	}
	return nil
}

// CondFailedError is returned by Txn when a precondition does not hold.
type CondFailedError struct {
	// Index is the position of the failing cond in the Txn's conds.
	Index int
	Cond  Cond
	// Actual is the value the compared revision actually had.
	Actual int64
}

func (e *CondFailedError) Error() string {
	return fmt.Sprintf("store: txn precondition %d failed on %q: want revision %d, have %d",
		e.Index, e.Cond.Key, e.Cond.Revision, e.Actual)
}

// Is makes errors.Is(err, ErrCondFailed) true.
func (e *CondFailedError) Is(target error) bool { return target == ErrCondFailed }
