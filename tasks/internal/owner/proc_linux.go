//go:build linux

package owner

import (
	"errors"
	"syscall"
)

// system is the running kernel's process table.
func system() procTable { return procTable{dir: "/proc", host: hostname()} }

// vanished reports whether a read failed because the process exited
// between the open and the read.
func vanished(err error) bool { return errors.Is(err, syscall.ESRCH) }
