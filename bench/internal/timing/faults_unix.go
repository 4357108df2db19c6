//go:build unix

package timing

import (
	"os"
	"syscall"
)

// minorFaults is the number of minor page faults of the finished process.
func minorFaults(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Minflt)
	}
	return 0
}
