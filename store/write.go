package store

import (
	"context"
	"errors"
	"fmt"
)

// maxAttempts bounds the re-read-and-retry loop of a write (see write),
// which retries only when a concurrent write changed nothing its caller's
// preconditions are about. Past it the write gives up with ErrConflict.
const maxAttempts = 64

// verdict is what one attempt of a write against a current value came to.
type verdict int

const (
	// decided: the attempt's answer follows from the current value (nothing
	// to write, a failed check, an error computing the write, a write whose
	// condition on the current value's revision failed and that the caller's
	// preconditions are about).
	decided verdict = iota
	// answered: the Backend answered the write: it landed, or the Backend
	// refused it for a reason other than its condition on the current
	// value's revision (ErrFenced, ErrUnavailable, ErrTooLarge...), which no
	// other current value would change.
	answered
	// raced: the current value was overwritten before the write landed, by a
	// write the caller's preconditions are not about.
	raced
)

// write is the skeleton of every write but Create. attempt computes the
// write from cur, the current value of the object called name, stored
// under key (nil when
// there is none, which only a write with absentOK sees), with what is known
// of its sides, and tries it. read, when not nil, is what an Update knows
// of the object, which helps read it (see updateRead); key is "" only
// with one, for the first read to find.
//
// The current value comes from one of two places. First, when mem is not
// nil, from the Store's memory of the object (see WithLastValues), which may
// be out of date: only an attempt the Backend answered counts, and anything
// else is left to a read, so that results are the same either way. Then
// from reads of the stored object, until an attempt is decided or answered;
// an attempt that raced reads again, at most maxAttempts times, then the
// write gives up with ErrConflict. what names the write in that error.
func write[S, T, R any](ctx context.Context, s *Store[S, T], what, key, name string, mem *rawObject, sides decodedSides, read *updateRead, absentOK bool,
	attempt func(cur *rawObject, sides decodedSides) (R, verdict, error)) (R, error) {
	if mem != nil {
		if out, v, err := attempt(mem, sides); v == answered {
			return out, err
		}
	}
	var zero R
	for range maxAttempts {
		cur, err := s.getRawAt(ctx, key, name, read)
		if err != nil && !(absentOK && errors.Is(err, ErrNotFound)) {
			return zero, err
		}
		if out, v, err := attempt(cur, decodedSides{}); v != raced {
			return out, err
		}
	}
	return zero, fmt.Errorf("%w: %s %s %q: gave up after %d concurrent writes", ErrConflict, what, s.kind, name, maxAttempts)
}
