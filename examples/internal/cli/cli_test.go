package cli

import (
	"errors"
	"flag"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func parse(args ...string) error {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Int("n", 1, "a number")
	return Parse(fs, args, false)
}

func TestExitCodes(t *testing.T) {
	require.Equal(t, 0, ExitCode(nil))
	require.Equal(t, 0, ExitCode(parse("-h")), "-h prints the usage and succeeds")
	require.Equal(t, 0, ExitCode(parse("-help")))
	require.Equal(t, 2, ExitCode(parse("-n", "x")), "a value that does not parse")
	require.Equal(t, 2, ExitCode(parse("-nope")), "an unknown flag")
	require.Equal(t, 2, ExitCode(parse("extra")), "a stray argument")
	require.Equal(t, 2, ExitCode(Usagef("-rate %v: want a number in [0, 1]", math.NaN())))
	require.Equal(t, 2, ExitCode(errors.Join(errors.New("context"), Usagef("wrapped"))), "found when wrapped")
	require.Equal(t, 1, ExitCode(errors.New("not converged")))
	require.NoError(t, parse("-n", "3"))
}
