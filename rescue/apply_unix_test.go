//go:build unix

package rescue

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func currentUmask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}

// Only regular files are patched: a FIFO is refused without being opened
// (opening it could block forever).
func TestNonRegularRefused(t *testing.T) {
	e := newEnv(t, nil)
	if err := syscall.Mkfifo(filepath.Join(e.dir, "pipe"), 0o644); err != nil {
		t.Skip(err)
	}
	for _, patch := range []string{"*** Update File: pipe\n@@\n-x\n+y\n", "*** Delete File: pipe\n", "*** Add File: pipe\n+x\n"} {
		_, err := e.process(wrap(patch), true)
		if kindOf(err) != Verification {
			t.Errorf("%q: %v, want verification", patch, err)
		}
	}
}
