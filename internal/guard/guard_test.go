package guard

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type nilErr struct{ msg string }

func (e *nilErr) Error() string { return e.msg } // dereferences: panics on a nil *nilErr

type panicky struct{ v any }

func (e panicky) Error() string { panic(e.v) }

func TestCall(t *testing.T) {
	if p := Call(func() {}); p != nil {
		t.Fatalf("Call of a quiet func = %v, want nil", p)
	}
	p := Call(func() { panic("boom") })
	if p == nil || p.Value != "boom" || !strings.Contains(string(p.Stack), "guard.TestCall") {
		t.Fatalf("Call = %+v, want the value and the stack", p)
	}
	if p := Call(func() { panic(nil) }); p == nil {
		t.Fatal("panic(nil) was not reported")
	}
}

// Describe and Text never panic, whatever Error does.
func TestDescribeNeverPanics(t *testing.T) {
	var typedNil *nilErr
	for _, tt := range []struct {
		name string
		v    any
		want string
	}{
		{"string", "a\n  b", "string: a b"},
		{"error", errors.New("boom"), "*errors.errorString: boom"},
		// The runtime error's type and text are the runtime's; the type of
		// the error and the fact of the panic are Describe's.
		{"typed nil error", typedNil, "*guard.nilErr: *guard.nilErr (its Error method panicked: runtime."},
		{"error panicking with itself", panicky{panicky{"deep"}}, "guard.panicky: guard.panicky (its Error method panicked: guard.panicky: guard.panicky (its Error method panicked))"},
		{"secret struct", struct{ Password string }{"hunter2"}, "struct { Password string }"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Describe(tt.v, 1000); !strings.HasPrefix(got, tt.want) {
				t.Fatalf("Describe = %q, want it to start with %q", got, tt.want)
			}
		})
	}
	if got := Text(typedNil); !strings.HasPrefix(got, "*guard.nilErr (its Error method panicked") {
		t.Fatalf("Text = %q", got)
	}
	if got := Text(nil); got != "<nil>" {
		t.Fatalf("Text(nil) = %q", got)
	}
}

func TestBound(t *testing.T) {
	long := strings.Repeat("é", 300)
	got := Bound(long, 240)
	if len(got) > 240 || !utf8.ValidString(got) || !strings.HasSuffix(got, "...") {
		t.Fatalf("Bound gave %d bytes %q", len(got), got)
	}
	if got := Bound("a\nb", 240); got != "a b" {
		t.Fatalf("Bound = %q", got)
	}
}

func TestCatch(t *testing.T) {
	f := func() (p *Panic) {
		defer Catch(&p)
		panic("boom")
	}
	if p := f(); p == nil || p.Value != "boom" {
		t.Fatalf("Catch = %+v", p)
	}
	if n := testing.AllocsPerRun(100, func() {
		var p *Panic
		func() {
			defer Catch(&p)
		}()
	}); n != 0 {
		t.Fatalf("a deferred Catch without a panic allocates %v times", n)
	}
}

// CallIsolated returns a panic as Call does, and a runtime.Goexit, which
// would end the caller's goroutine, as a *Panic of ErrGoexit with f's
// stack; the caller goes on.
func TestCallIsolated(t *testing.T) {
	if p := CallIsolated(func() {}); p != nil {
		t.Fatalf("CallIsolated of a quiet func = %v, want nil", p)
	}
	if p := CallIsolated(func() { panic("boom") }); p == nil || p.Value != "boom" {
		t.Fatalf("CallIsolated of a panic = %+v", p)
	}
	p := CallIsolated(func() { exitNow() })
	if p == nil || p.Value != ErrGoexit || !strings.Contains(string(p.Stack), "guard.exitNow") {
		t.Fatalf("CallIsolated of a Goexit = %+v, want ErrGoexit and the stack", p)
	}
}

func exitNow() { runtime.Goexit() }
