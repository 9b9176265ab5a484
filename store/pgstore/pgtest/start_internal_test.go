package pgtest

import (
	"errors"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// A port taken between its pick and the server's bind (another test's
// server took it) costs a retry on another port, not the test.
func TestStartRetriesAPortTakenMeanwhile(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer held.Close()
	taken := held.Addr().(*net.TCPAddr).Port
	picks := 0
	s, err := start(func() (int, error) {
		picks++
		if picks == 1 {
			return taken, nil
		}
		return freePort()
	})
	if errors.Is(err, ErrNoPostgres) && os.Getenv("STEADY_PG_REQUIRED") == "" {
		t.Skip(err)
	}
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	require.Equal(t, 2, picks, "one retry")
	require.NotEqual(t, taken, s.Port())
}

// A start that fails for another reason than the port is not retried.
func TestStartDoesNotRetryOtherFailures(t *testing.T) {
	picks := 0
	_, err := start(func() (int, error) {
		picks++
		return 0, errors.New("no port for you")
	})
	if errors.Is(err, ErrNoPostgres) && os.Getenv("STEADY_PG_REQUIRED") == "" {
		t.Skip(err)
	}
	require.ErrorContains(t, err, "no port for you")
	require.Equal(t, 1, picks)
}
