package main

import (
	"io"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readmeBlock returns the first ```go block of the README's section
// heading.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n"+heading+"\n")
	require.True(t, ok, "README has no %q section", heading)
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```go\n")
	require.True(t, ok, "the section has no ```go block")
	block, _, ok = strings.Cut(block, "\n```\n")
	require.True(t, ok, "the ```go block is not closed")
	return block + "\n"
}

// The README's "A controller" block is main.go, byte for byte: a whole
// program, so what a reader pastes compiles and runs.
func TestReadmeShowsMainGo(t *testing.T) {
	file, err := os.ReadFile("main.go")
	require.NoError(t, err)
	require.Equal(t, string(file), readmeBlock(t, "## A controller"),
		"README's block differs from examples/readme/first/main.go: copy the file into the README")
}

// The program converges and stops by itself.
func TestProgramConverges(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	synctest.Test(t, func(t *testing.T) { main() })
	os.Stdout = stdout
	require.NoError(t, w.Close())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	require.Equal(t, "web: 3 of 3 replicas running\n", string(out))
}

// Every ```go block in the README is a file of a program whose test runs
// it: this one (main.go) or examples/readme's controller.go. A new block
// must become one too.
func TestEveryReadmeGoBlockIsAFileOfARunProgram(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	var files []string
	for _, name := range []string{"main.go", "../controller.go"} {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		files = append(files, string(b))
	}
	rest := string(readme)
	blocks := 0
	for {
		var block string
		var ok bool
		if _, rest, ok = strings.Cut(rest, "\n```go\n"); !ok {
			break
		}
		block, rest, ok = strings.Cut(rest, "\n```\n")
		require.True(t, ok, "a ```go block is not closed")
		require.Contains(t, files, block+"\n", "README block %d is not a program file that a test runs", blocks+1)
		blocks++
	}
	require.Equal(t, 2, blocks)
}
