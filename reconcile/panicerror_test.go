package reconcile_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/reconcile"
)

type secretHolder struct{ password string }

// The package doc's result table: a panic's stored text is the panic
// value's type and, for a string or an error, its text, one line of at
// most 240 bytes; no other value's text (a struct may hold a secret), and
// never the stack.
func TestPanicErrorTextIsOneLineOfAtMost240Bytes(t *testing.T) {
	for _, v := range []any{
		strings.Repeat("line\n", 10_000),
		errors.New(strings.Repeat("é", 10_000)),
		secretHolder{"hunter2"},
		42,
	} {
		e := &reconcile.PanicError{Value: v, Stack: []byte("goroutine 1 [running]:\nmain.go:1")}
		text := e.Error()
		require.LessOrEqual(t, len(text), 240, "%T", v)
		require.True(t, utf8.ValidString(text), "%T", v)
		require.NotContains(t, text, "\n", "%T", v)
		require.NotContains(t, text, "goroutine", "%T", v)
		require.NotContains(t, text, "hunter2", "%T", v)
	}
	require.Equal(t, "reconcile panicked: reconcile_test.secretHolder", (&reconcile.PanicError{Value: secretHolder{"hunter2"}}).Error())
	require.Equal(t, "reconcile panicked: int", (&reconcile.PanicError{Value: 42}).Error())
	require.Equal(t, "reconcile panicked: *errors.errorString: boom", (&reconcile.PanicError{Value: errors.New("boom")}).Error())
}
