// Package cli holds the command-line conventions the examples share: -h
// prints the usage and exits 0, a bad command line (unknown flag, a value
// that does not parse, or one out of range) exits 2 with a message saying
// what is wrong, and any other failure exits 1.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// UsageError is a bad command line.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with the formatted message.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// Parse parses args with fs (which must use flag.ContinueOnError). It
// returns flag.ErrHelp as it is for -h and -help, after fs printed the usage,
// and any other parse error as a UsageError. Arguments left after the flags
// are a UsageError unless positional is true.
func Parse(fs *flag.FlagSet, args []string, positional bool) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return UsageError{err}
	}
	if !positional && fs.NArg() > 0 {
		return Usagef("unexpected arguments %q", fs.Args())
	}
	return nil
}

// ExitCode is the exit status for what a command's run returned: 0 for nil
// and for flag.ErrHelp, 2 for a UsageError, 1 otherwise.
func ExitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(UsageError)):
		return 2
	default:
		return 1
	}
}

// Exit ends the command name after run returned err: it prints err to
// stderr (but not flag.ErrHelp, whose usage fs already printed) and exits
// with ExitCode(err).
func Exit(name string, err error) {
	code := ExitCode(err)
	if code != 0 {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	}
	os.Exit(code)
}
