//go:build unix

package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn does not return within d. fn only stores
// results; the test checks them after within returns.
func within(t *testing.T, d time.Duration, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

func TestAcquireNeverCreatesAFileAtALinksTarget(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "created-by-slim")
	p := filepath.Join(dir, "x.lock")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(p, 100*time.Millisecond); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("err = %v, want ErrNotRegular", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("a file was created at the link's target: %v", err)
	}
	// A link to an existing file is refused too, and the file is not locked.
	existing := filepath.Join(outside, "existing")
	os.WriteFile(existing, []byte("keep"), 0o600)
	p2 := filepath.Join(dir, "y.lock")
	os.Symlink(existing, p2)
	if _, err := Acquire(p2, 100*time.Millisecond); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("link to a file: err = %v, want ErrNotRegular", err)
	}
	l, err := Acquire(existing, 100*time.Millisecond)
	if err != nil {
		t.Fatalf("the link's target was left locked: %v", err)
	}
	l.Unlock()
}

func TestAcquireReturnsPromptlyOnANamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	var err error
	within(t, 5*time.Second, func() { _, err = Acquire(p, time.Second) })
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("err = %v, want ErrNotRegular", err)
	}
}

func TestAcquireRefusesADirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	os.Mkdir(p, 0o700)
	if _, err := Acquire(p, 100*time.Millisecond); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("err = %v, want ErrNotRegular", err)
	}
}
