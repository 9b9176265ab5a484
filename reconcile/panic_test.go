package reconcile

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

type credentials struct{ User, Password string }

// A panic is reported without leaking: the stored message is the panic
// value's type and a short text (≤ 256 bytes, no stack, no file paths, and
// nothing of a value that is neither a string nor an error); the stack goes
// to the log at Error and to Inspect.
func TestPanicIsStoredWithoutStackOrSecrets(t *testing.T) {
	for _, tt := range []struct {
		name  string
		value any
		want  string // the stored message, after "test: "
	}{
		{"struct holding a secret", credentials{"admin", "hunter2"}, "reconcile panicked: reconcile.credentials"},
		{"long string", strings.Repeat("x", 10_000), "reconcile panicked: string: " + strings.Repeat("x", 100)},
		{"error", errBoom, "reconcile panicked: *errors.errorString: boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "App", nil)
				defer e.stop()
				e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
				var logs logBuffer
				s := newScript(func(string, int) (Result, error) { panic(tt.value) })
				l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithStallAfter(1), WithLogger(newLogger(&logs)))...)
				stop := start(t, l)
				synctest.Wait()
				c := stalledOf(t, e, "a")
				// Before: the value and the whole stack, with source paths
				// (about 1,400 bytes, the password included).
				require.LessOrEqual(t, len(c.Message), 256)
				require.True(t, strings.HasPrefix(c.Message, "test: "+tt.want), c.Message)
				require.NotContains(t, c.Message, "hunter2")
				require.NotContains(t, c.Message, "goroutine")
				require.NotContains(t, c.Message, ".go:")
				require.NotContains(t, c.Message, "\n")

				var pe *PanicError
				require.ErrorAs(t, l.Inspect("a").Err, &pe, "Inspect has the panic")
				require.Contains(t, string(pe.Stack), "reconcile.(*script).Reconcile", "and its stack")
				out := logs.String()
				require.Contains(t, out, `level=ERROR msg="reconcile panicked"`)
				require.Contains(t, out, "panic_test.go:", "the log has the stack")
				require.NoError(t, stop())
			})
		})
	}
}

// nilDeref is an error whose Error dereferences its receiver: a typed nil
// one (var e *nilDeref) panics when asked for its text.
type nilDeref struct{ msg string }

func (e *nilDeref) Error() string { return e.msg }

// wrapDeref is a wrapper error whose methods dereference their receiver:
// errors.Is and errors.As panic on a typed nil one.
type wrapDeref struct{ err error }

func (e *wrapDeref) Error() string { return e.err.Error() }
func (e *wrapDeref) Unwrap() error { return e.err }

// A panic value, or a returned error, whose Error method panics is reported
// like any failure: the Loop stays up, the stored message names the type,
// Inspect and the log have it, and the key is retried with backoff.
func TestErrorMethodThatPanicsIsReported(t *testing.T) {
	var typedNil *nilDeref
	for _, tt := range []struct {
		name     string
		fail     func() error
		panicked bool
		want     string // the stored message, after "test: "
	}{
		{"panic with a typed nil error", func() error { panic(typedNil) }, true,
			"reconcile panicked: *reconcile.nilDeref: *reconcile.nilDeref (its Error method panicked"},
		{"returned typed nil error", func() error { return typedNil }, false,
			"*reconcile.nilDeref (its Error method panicked"},
		{"returned, wrapped", func() error { return Terminal(typedNil) }, false,
			"*reconcile.nilDeref (its Error method panicked"},
		{"returned typed nil wrapper", func() error { return (*wrapDeref)(nil) }, false,
			"*reconcile.wrapDeref (its Error method panicked"},
		{"panic with a typed nil wrapper", func() error { panic((*wrapDeref)(nil)) }, true,
			"reconcile panicked: *reconcile.wrapDeref: *reconcile.wrapDeref (its Error method panicked"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, "App", nil)
				defer e.stop()
				e.create(t, "user", &app{Meta: store.Meta{Name: "a"}, Spec: appSpec{Replicas: 1}})
				var logs logBuffer
				m := NewMemMetrics()
				s := newScript(func(string, int) (Result, error) { return Result{}, tt.fail() })
				l := mustNew(t, s, FromStore(e.cache, e.st), append(fixedBackoff(), WithStallAfter(1), WithLogger(newLogger(&logs)), WithMetrics(m))...)
				stop := start(t, l)
				synctest.Wait()
				c := stalledOf(t, e, "a")
				require.True(t, strings.HasPrefix(c.Message, "test: "+tt.want), c.Message)
				require.LessOrEqual(t, len(c.Message), 256)
				require.Error(t, l.Inspect("a").Err)
				ks := l.InspectAll()
				require.Len(t, ks, 1)
				require.Contains(t, ks[0].LastError, "its Error method panicked", "the debug page's text")
				if tt.panicked {
					require.Equal(t, 1, m.get(m.panics, "test"))
					require.Contains(t, logs.String(), `level=ERROR msg="reconcile panicked"`)
				} else {
					require.Contains(t, logs.String(), `level=WARN msg="reconcile failed"`)
				}
				if !strings.HasPrefix(tt.name, "returned, wrapped") { // a terminal error is not retried
					time.Sleep(1500 * time.Millisecond)
					synctest.Wait()
					require.Equal(t, 2, s.count("a"), "retried after the 1s backoff")
				}
				require.NoError(t, stop())
			})
		})
	}
}
