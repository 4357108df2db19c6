//go:build unix

package rescue_test

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the test process has used.
// On a shared, busy machine it is inflated far less than wall time, so the
// benchmarks report it beside ns/op.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
