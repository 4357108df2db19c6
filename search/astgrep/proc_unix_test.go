//go:build unix

package astgrep

import (
	"os"
	"strings"
	"syscall"
)

// alive reports whether pid is a live process; a zombie counts as gone.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat"); err == nil {
		f := strings.Fields(string(b))
		return len(f) > 2 && f[2] != "Z"
	}
	return syscall.Kill(pid, 0) == nil
}

func itoa(n int) string {
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
