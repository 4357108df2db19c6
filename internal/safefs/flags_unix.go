//go:build unix

package safefs

import "syscall"

// openNoBlock keeps an open of a file swapped for a FIFO from waiting for
// a writer; on a regular file it has no effect.
const openNoBlock = syscall.O_NONBLOCK
