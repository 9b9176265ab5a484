package reconcile

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWrappersAreNilSafe(t *testing.T) {
	require.NoError(t, Terminal(nil))
	require.NoError(t, RetryAfter(nil, time.Second))
	// Being blocked is itself the failure, so Blocked never returns nil.
	err := Blocked("SecretMissing", nil)
	require.EqualError(t, err, "blocked: SecretMissing")
	require.EqualError(t, Blocked("", nil), "blocked: Blocked")
	// Methods on nil-wrapped values do not panic.
	require.Equal(t, "terminal: <nil>", (&TerminalError{}).Error())
	require.Equal(t, "retry after 0s: <nil>", (&RetryAfterError{}).Error())
}

func TestWrappersWorkWithErrorsIsAndAs(t *testing.T) {
	base := io.ErrUnexpectedEOF
	tests := []struct {
		name string
		err  error
		is   func(error) bool
	}{
		{"Terminal", Terminal(base), func(e error) bool { _, ok := errors.AsType[*TerminalError](e); return ok }},
		{"Blocked", Blocked("X", base), func(e error) bool { b, ok := errors.AsType[*BlockedError](e); return ok && b.Reason == "X" }},
		{"RetryAfter", RetryAfter(base, time.Minute), func(e error) bool {
			r, ok := errors.AsType[*RetryAfterError](e)
			return ok && r.After == time.Minute
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, tt.err, base)
			require.True(t, tt.is(tt.err))
			// Still found when wrapped again.
			require.True(t, tt.is(errors.Join(errors.New("outer"), tt.err)))
			require.Contains(t, tt.err.Error(), base.Error())
		})
	}
}

func TestRetryAfterNegativeIsZero(t *testing.T) {
	r, ok := errors.AsType[*RetryAfterError](RetryAfter(io.EOF, -time.Second))
	require.True(t, ok)
	require.Zero(t, r.After)
}
