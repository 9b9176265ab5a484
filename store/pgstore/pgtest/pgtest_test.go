package pgtest_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/store/pgstore/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A server starts, accepts connections on its port, stops, starts again
// on the same port after a kill, and Close stops it for good.
func TestStartStopStart(t *testing.T) {
	s, err := pgtest.Start()
	if errors.Is(err, pgtest.ErrNoPostgres) && os.Getenv("STEADY_PG_REQUIRED") == "" {
		t.Skip(err)
	}
	require.NoError(t, err)
	addr := fmt.Sprintf("127.0.0.1:%d", s.Port())
	dial := func() error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}
	require.NoError(t, dial())
	require.NoError(t, s.Stop("immediate"))
	require.Error(t, dial(), "a stopped server refuses connections")
	require.NoError(t, s.Start())
	require.NoError(t, dial(), "the server is back on the same port")
	require.NoError(t, s.Close())
	require.Error(t, dial())
}
