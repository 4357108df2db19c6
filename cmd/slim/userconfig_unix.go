//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// openNoFollow opens the configuration file without following a symbolic
// link swapped in after it was resolved, and without waiting on a FIFO.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// permBits says that a file's mode bits say who may write it.
const permBits = true

// fileOwner is the user id that owns fi.
func fileOwner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
