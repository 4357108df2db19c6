//go:build unix

package match

import "syscall"

// processCPU returns the user+system CPU time of the process in
// nanoseconds. Benchmarks report it per operation as well as wall time,
// because wall time on a shared machine measures the neighbours too.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
