//go:build unix

package cache

import (
	"os"
	"syscall"
)

// openRead opens path for reading without following a symbolic link in its
// last component and without blocking on a named pipe.
func openRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
