package timing

import (
	"bytes"
	"fmt"
	"os"
	"time"
)

// tick is the kernel's clock tick for process times (USER_HZ, 100 on
// Linux whatever the kernel's own rate).
const tick = 10 * time.Millisecond

// cpuTicks is the user and system time of process pid and of the children
// it waited for, in clock ticks, from /proc/PID/stat; -1 when it cannot be
// read.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing one.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(b[i+1:])
	// After the name: state (field 3), ... utime, stime, cutime, cstime
	// (fields 14-17), so f[11:15].
	if len(f) < 15 {
		return -1
	}
	var sum int64
	for _, s := range f[11:15] {
		var n int64
		if _, err := fmt.Sscan(string(s), &n); err != nil {
			return -1
		}
		sum += n
	}
	return sum
}
