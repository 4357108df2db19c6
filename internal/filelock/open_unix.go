//go:build unix

package filelock

import (
	"os"
	"runtime"
	"syscall"
)

// openFlags opens (or creates) a lock file without following a symbolic
// link at its path and without blocking on a named pipe. AIX and Solaris
// take an exclusive lock only on a file open for writing.
var openFlags = func() int {
	f := os.O_CREATE | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	switch runtime.GOOS {
	case "aix", "solaris", "illumos":
		return f | os.O_RDWR
	}
	return f | os.O_RDONLY
}()

// precheck has nothing to do here: the open itself refuses links.
func precheck(string) error { return nil }
