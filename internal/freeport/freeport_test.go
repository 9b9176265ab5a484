package freeport_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/steady-go/steady/internal/freeport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The ports picked at once are distinct, and free again when Pick returns.
func TestPickGivesDistinctFreePorts(t *testing.T) {
	ports, err := freeport.Pick(64)
	require.NoError(t, err)
	require.Len(t, ports, 64)
	seen := map[int]bool{}
	for _, p := range ports {
		require.False(t, seen[p], "port %d picked twice", p)
		seen[p] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		require.NoError(t, err, "port %d is free to bind", p)
		require.NoError(t, l.Close())
	}
	none, err := freeport.Pick(0)
	require.NoError(t, err)
	require.Empty(t, none)
}
