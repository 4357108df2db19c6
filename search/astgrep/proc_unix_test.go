//go:build unix

package astgrep

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// alive reports whether pid is a live process; a zombie counts as gone.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		f := strings.Fields(string(b))
		return len(f) > 2 && f[2] != "Z"
	}
	return syscall.Kill(pid, 0) == nil
}
