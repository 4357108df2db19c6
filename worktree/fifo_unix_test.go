//go:build unix

package worktree

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe planted as `.git` in the session directory or in a parent
// of the worktree cannot hang the resolver or the guard: it is looked at
// before it is opened, and opened without blocking.
func TestFifoDotGitDoesNotHang(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(base, "w", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fifo := range []string{filepath.Join(sub, ".git"), filepath.Join(base, ".git")} {
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
	}
	done := make(chan error, 1)
	go func() {
		if _, err := Resolve(sub); err != nil {
			done <- err
			return
		}
		_, err := NewSessionGuard(sub, "", false, Options{})
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("resolving a directory with a FIFO .git hung")
	}
}
