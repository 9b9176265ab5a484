//go:build !linux

// Command processes runs only on Linux: it finds its processes through
// /proc. See README.md.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "processes: this example needs Linux (/proc)")
	os.Exit(1)
}
