//go:build unix

package worktree

import "syscall"

// openNoBlock keeps an open of a named pipe from waiting for a writer; on a
// regular file it has no effect.
const openNoBlock = syscall.O_NONBLOCK
