//go:build unix

package worktree

import (
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time of this process, so
// benchmarks can report CPU per operation next to wall time (on a busy
// machine wall time mostly measures waiting for a core).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
