package reconcile

import (
	"errors"
	"fmt"
	"time"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/reconcile/conditions"
)

// ErrShutdown is the cause of the context of every in-flight reconcile when
// the Loop stops (context.Cause(ctx) returns it). A reconcile that ends
// because of it is not counted as a failure.
var ErrShutdown = errors.New("reconcile: loop shutting down")

// ErrTimeout is the cause of a reconcile's context when the per-reconcile
// timeout (see WithTimeout) expires.
var ErrTimeout = errors.New("reconcile: per-reconcile timeout")

// ErrTerminal matches, with errors.Is, every error made by Terminal.
// Returning it, or an error wrapping it, is the same as returning
// Terminal(err): the Loop does not retry, and the Stalled condition's
// message is the whole error's text.
var ErrTerminal error = &terminalError{}

// ErrBlocked matches, with errors.Is, every error made by Blocked; read
// its reason with BlockedReason. Returning it, or an error wrapping it, is
// the same as Blocked(conditions.ReasonBlocked, err).
var ErrBlocked error = &blockedError{Reason: conditions.ReasonBlocked}

// ErrRetryAfter matches, with errors.Is, every error made by RetryAfter.
// Returning it without RetryAfter asks for no delay: the failure is retried
// with backoff.
var ErrRetryAfter error = &retryAfterError{}

// terminalError marks an error that retrying cannot fix. Its Is matches
// any terminalError, so that ErrTerminal finds every one.
type terminalError struct{ err error }

// Terminal wraps err to mark it as one that retrying cannot fix, such as
// an invalid spec. The Loop does not retry it, resets the failure count and
// sets Stalled with reason conditions.ReasonTerminal and err's text as the message.
// Terminal(nil) returns nil: nothing failed. errors.Is and errors.As see
// through it, and errors.Is(err, ErrTerminal) reports it.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

func (e *terminalError) Error() string {
	if e.err == nil {
		return "terminal error"
	}
	return "terminal: " + errString(e.err)
}

func (e *terminalError) Unwrap() error { return e.err }

func (e *terminalError) Is(target error) bool {
	_, ok := target.(*terminalError)
	return ok
}

// message is the Stalled condition's message for whole, an error that
// holds e: the wrapped error's text, or whole's when e wraps nothing
// (ErrTerminal wrapped by the reconciler).
func (e *terminalError) message(whole error) string {
	if e.err == nil {
		return errString(whole)
	}
	return errString(e.err)
}

// blockedError reports that an object cannot be reconciled until something
// outside it changes. Its Is matches any blockedError.
type blockedError struct {
	// Reason is the Stalled condition's reason.
	Reason string
	err    error
}

// Blocked reports that an object cannot be reconciled until something
// outside it changes (a missing secret, no capacity): the reconcile waits
// on reason, a CamelCase word such as "SecretMissing" (an empty one
// becomes conditions.ReasonBlocked). The Loop sets Stalled at once with that reason,
// and retries with backoff. The condition's message is err's text, or
// "blocked" when err is nil: the reason is not repeated in it. Unlike
// Terminal and RetryAfter, Blocked returns a non-nil error even when err
// is nil, because being blocked is itself the failure. errors.Is and
// errors.As see through it; errors.Is(err, ErrBlocked) reports it, and
// BlockedReason returns its reason.
func Blocked(reason string, err error) error {
	if reason == "" {
		reason = conditions.ReasonBlocked
	}
	return &blockedError{Reason: reason, err: err}
}

// BlockedReason returns the reason of the first Blocked error in err's
// chain, and "" when there is none.
func BlockedReason(err error) string {
	if be, ok := errors.AsType[*blockedError](err); ok {
		return be.Reason
	}
	return ""
}

func (e *blockedError) Error() string {
	if e.err == nil {
		return "blocked: " + e.Reason
	}
	return "blocked: " + e.Reason + ": " + guard.Text(e.err)
}

func (e *blockedError) Unwrap() error { return e.err }

func (e *blockedError) Is(target error) bool {
	_, ok := target.(*blockedError)
	return ok
}

// message is the Stalled condition's message for whole, an error that
// holds e: the wrapped error's text; whole's when e is ErrBlocked, wrapped
// by the reconciler; "blocked" for a Blocked error that wraps nothing.
func (e *blockedError) message(whole error) string {
	switch {
	case e.err != nil:
		return errString(e.err)
	case e == ErrBlocked:
		return errString(whole)
	}
	return "blocked"
}

// retryAfterError asks for the next attempt no sooner than after. Its Is
// matches any retryAfterError.
type retryAfterError struct {
	err   error
	after time.Duration
}

// RetryAfter wraps err so that the Loop retries no sooner than d (for
// example a rate limit that says when to come back). The failure still
// counts, and the delay is max(d, backoff). RetryAfter(nil, d) returns nil;
// a negative d is treated as zero. errors.Is and errors.As see through it,
// and errors.Is(err, ErrRetryAfter) reports it.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: max(d, 0)}
}

func (e *retryAfterError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("retry after %v", e.after)
	}
	return fmt.Sprintf("retry after %v: %s", e.after, errString(e.err))
}

func (e *retryAfterError) Unwrap() error { return e.err }

func (e *retryAfterError) Is(target error) bool {
	_, ok := target.(*retryAfterError)
	return ok
}

// errString is err's text, "<nil>" for nil. It never panics: the errors
// are the reconciler's, and an Error method that panics (a typed nil
// error's) gives a text naming the type instead.
func errString(err error) string { return guard.Text(err) }
