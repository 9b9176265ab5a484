package reconcile

import (
	"errors"
	"fmt"
	"time"

	"github.com/steady-go/steady/internal/guard"
)

// ErrShutdown is the cause of the context of every in-flight reconcile when
// the Loop stops (context.Cause(ctx) returns it). A reconcile that ends
// because of it is not counted as a failure.
var ErrShutdown = errors.New("reconcile: loop shutting down")

// ErrTimeout is the cause of a reconcile's context when the per-reconcile
// timeout (see WithTimeout) expires.
var ErrTimeout = errors.New("reconcile: per-reconcile timeout")

// TerminalError marks an error that retrying cannot fix, such as an invalid
// spec. The Loop does not retry it, resets the failure count and sets
// Stalled with reason ReasonTerminal. Create it with Terminal.
type TerminalError struct{ Err error }

// Terminal wraps err so that the Loop does not retry it. Terminal(nil)
// returns nil: nothing failed. errors.Is and errors.As see through it.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &TerminalError{Err: err}
}

// Error reports the wrapped error as terminal.
func (e *TerminalError) Error() string { return "terminal: " + errString(e.Err) }

// Unwrap returns the wrapped error.
func (e *TerminalError) Unwrap() error { return e.Err }

// BlockedError reports that an object cannot be reconciled until something
// outside it changes (a missing secret, no capacity). The Loop sets Stalled
// at once with Reason, and retries with backoff. The condition's message is
// the Loop's name and Err's text ("app: secret \"db\" not found"), or
// "blocked" when Err is nil: Reason is not repeated in it. Create it with
// Blocked.
type BlockedError struct {
	// Reason is the Stalled condition's reason, a CamelCase word such as
	// "SecretMissing". Blocked defaults it to ReasonBlocked.
	Reason string
	// Err is the underlying error; it may be nil.
	Err error
}

// Blocked reports that reconciliation waits on reason. Unlike Terminal and
// RetryAfter it returns a non-nil error even when err is nil, because being
// blocked is itself the failure. An empty reason becomes ReasonBlocked.
func Blocked(reason string, err error) error {
	if reason == "" {
		reason = ReasonBlocked
	}
	return &BlockedError{Reason: reason, Err: err}
}

// Error names the reason and the underlying error.
func (e *BlockedError) Error() string {
	if e.Err == nil {
		return "blocked: " + e.Reason
	}
	return "blocked: " + e.Reason + ": " + guard.Text(e.Err)
}

// Unwrap returns the wrapped error, or nil.
func (e *BlockedError) Unwrap() error { return e.Err }

// RetryAfterError asks for the next attempt no sooner than After (for
// example a rate limit that says when to come back). The failure still
// counts, and the delay is max(After, backoff). Create it with RetryAfter.
type RetryAfterError struct {
	Err   error
	After time.Duration
}

// RetryAfter wraps err so the Loop retries no sooner than d. RetryAfter(nil, d)
// returns nil; a negative d is treated as zero.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &RetryAfterError{Err: err, After: max(d, 0)}
}

// Error names the delay and the wrapped error.
func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("retry after %v: %s", e.After, errString(e.Err))
}

// Unwrap returns the wrapped error.
func (e *RetryAfterError) Unwrap() error { return e.Err }

// errString is err's text, "<nil>" for nil. It never panics: the errors
// are the reconciler's, and an Error method that panics (a typed nil
// error's) gives a text naming the type instead.
func errString(err error) string { return guard.Text(err) }
