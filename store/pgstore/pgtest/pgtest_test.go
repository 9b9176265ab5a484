package pgtest_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
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

// Each Durability starts a server with its settings of fsync,
// full_page_writes and synchronous_commit; NoSync is the default.
func TestDurability(t *testing.T) {
	for _, c := range []struct {
		opts []pgtest.Option
		want string // fsync, full_page_writes, synchronous_commit
	}{
		{nil, "off off on"},
		{[]pgtest.Option{pgtest.WithDurability(pgtest.NoSync)}, "off off on"},
		{[]pgtest.Option{pgtest.WithDurability(pgtest.Durable)}, "on on on"},
		{[]pgtest.Option{nil, pgtest.WithDurability(pgtest.AsyncCommit)}, "on on off"},
	} {
		t.Run(c.want, func(t *testing.T) {
			s, err := pgtest.Start(c.opts...)
			if errors.Is(err, pgtest.ErrNoPostgres) && os.Getenv("STEADY_PG_REQUIRED") == "" {
				t.Skip(err)
			}
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()
			conn, err := pgx.Connect(t.Context(), s.URL())
			require.NoError(t, err)
			defer conn.Close(t.Context())
			var got string
			require.NoError(t, conn.QueryRow(t.Context(),
				`SELECT current_setting('fsync') || ' ' || current_setting('full_page_writes') || ' ' || current_setting('synchronous_commit')`).Scan(&got))
			require.Equal(t, c.want, got)
		})
	}
}

// An unknown Durability is Start's error, before anything starts.
func TestUnknownDurability(t *testing.T) {
	_, err := pgtest.Start(pgtest.WithDurability(pgtest.Durability(7)))
	require.ErrorContains(t, err, "unknown durability Durability(7)")
	require.NotErrorIs(t, err, pgtest.ErrNoPostgres)
}
