// Package guard runs the functions users hand to steady (reconcilers,
// mappers, index functions, handlers, metric hooks, the Error methods of
// their errors) so that a panic in one is a value to report, never a crash
// of the goroutine that called it.
package guard

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// Panic is a recovered panic of a user-supplied function.
type Panic struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, for the log; never part of
	// Error's text.
	Stack []byte
}

// Error describes the panic value in one bounded line (see Describe).
func (p *Panic) Error() string { return "panicked: " + Describe(p.Value, MaxText) }

// Call runs f and returns the panic it raised, recovered, or nil.
func Call(f func()) (p *Panic) {
	defer Catch(&p)
	f()
	return nil
}

// ErrGoexit is the Value of the *Panic CallIsolated returns for a function
// that called runtime.Goexit.
var ErrGoexit = errors.New("runtime.Goexit called (t.FailNow, t.Fatal or t.SkipNow outside the test's goroutine?)")

// CallIsolated is Call with f run on a goroutine of its own, which it
// waits for: a runtime.Goexit in f, which no recover stops and which would
// end the caller's goroutine without a word, ends only that goroutine and
// is returned as a *Panic whose Value is ErrGoexit, with f's stack. It
// costs a goroutine: it is for long calls (a source's Run), not hot paths.
func CallIsolated(f func()) *Panic {
	done := make(chan *Panic, 1)
	go func() {
		returned := false
		var p *Panic
		defer func() {
			if !returned && p == nil {
				p = &Panic{Value: ErrGoexit, Stack: debug.Stack()}
			}
			done <- p
		}()
		defer Catch(&p)
		f()
		returned = true
	}()
	return <-done
}

// Catch, deferred (defer guard.Catch(&p)), recovers a panic of the
// function that deferred it and stores it in *p. Unlike Call it needs no
// closure, so a hot path that defers it allocates nothing until a panic.
func Catch(p **Panic) {
	if v := recover(); v != nil {
		*p = &Panic{Value: v, Stack: debug.Stack()}
	}
}

// MaxText is the length Describe bounds its text to by default: short
// enough for a condition message, which anyone who can read the store can
// read.
const MaxText = 240

// Describe returns v's type and, for a string or an error, its text, as one
// line of at most limit bytes (valid UTF-8; "..." marks a cut). The text of
// any other value (a struct may hold a secret) is left out. An error whose
// Error method panics (a typed nil whose method dereferences its receiver)
// is described by its type; Describe itself never panics.
func Describe(v any, limit int) string {
	msg := fmt.Sprintf("%T", v)
	var text string
	switch v := v.(type) {
	case string:
		text = v
	case error:
		text = errorText(v, 1)
	}
	if text != "" {
		msg += ": " + text
	}
	return Bound(msg, limit)
}

// Text returns err.Error(), or, when that panics, a text naming err's type
// and the panic. It never panics; nil gives "<nil>".
func Text(err error) string {
	if err == nil {
		return "<nil>"
	}
	return errorText(err, 1)
}

// errorText is Text with a bound on how deep the panic of an Error method
// whose panic value is itself such an error is described.
func errorText(err error, depth int) (s string) {
	var inner any
	p := Call(func() { s = err.Error() })
	if p == nil {
		return s
	}
	inner = p.Value
	if depth <= 0 {
		return fmt.Sprintf("%T (its Error method panicked)", err)
	}
	how := fmt.Sprintf("%T", inner)
	switch v := inner.(type) {
	case string:
		how += ": " + v
	case error:
		how += ": " + errorText(v, depth-1)
	}
	return fmt.Sprintf("%T (its Error method panicked: %s)", err, how)
}

// Bound folds s onto one line (runs of white space become one space) and
// cuts it to at most limit bytes of valid UTF-8, ending in "..." when cut.
func Bound(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= limit {
		return s
	}
	if limit < 3 {
		return strings.ToValidUTF8(s[:max(limit, 0)], "")
	}
	return strings.ToValidUTF8(s[:limit-3], "") + "..."
}
