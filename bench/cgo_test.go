//go:build cgo

package bench

// split.sh counts instructions under callgrind, whose shadow call stack
// follows a thread's stack pointer: with runtime/cgo linked, every thread's
// system stack (g0) is a pthread stack, which valgrind maps below the Go
// heap, so the runtime's switches to it (goroutine switches, stack growth,
// systemstack) nest on top of a goroutine's frames instead of popping or
// stranding them (see split.sh). The test binary links runtime/cgo through
// net already; this import keeps it linked should that change.
import _ "runtime/cgo"
