package demo

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// A program that asks for it (examples/fleet does) runs under a soft
// memory limit that grows with the groups, unless GOMEMLIMIT says
// otherwise; the tests' programs, which do not ask, run without one.
func TestProgramSetsASoftMemoryLimitForItsGroups(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)

	var out bytes.Buffer
	require.NoError(t, Run(t.Context(), []string{"-objects=10", "-faults=off"}, &out, Program{SoftMemoryLimit: true}), out.String())
	require.Equal(t, int64(64<<20+10*4800), debug.SetMemoryLimit(-1))
	require.Equal(t, int64(64<<20+100_000*4800), softMemoryLimit(100_000), "about 521 MiB at 100,000 groups")

	debug.SetMemoryLimit(prev)
	out.Reset()
	require.NoError(t, Run(t.Context(), []string{"-objects=10", "-faults=off"}, &out, Program{}), out.String())
	require.Equal(t, prev, debug.SetMemoryLimit(-1), "no limit unless asked")

	t.Setenv("GOMEMLIMIT", "1GiB")
	out.Reset()
	require.NoError(t, Run(t.Context(), []string{"-objects=10", "-faults=off"}, &out, Program{SoftMemoryLimit: true}), out.String())
	require.Equal(t, prev, debug.SetMemoryLimit(-1), "GOMEMLIMIT is the user's")
}
