//go:build unix

package loopguard

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/slimgate/slim/internal/filelock"
	"github.com/slimgate/slim/internal/statedir"
)

// mkfifo makes a named pipe at p and, when the test ends, opens it for
// writing once so that a reader stuck on it (the bug under test) finishes.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestNamedPipeAtTheStatePathDoesNotHangTheHook(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	g := &Guard{Store: s}
	mkfifo(t, s.Path("s"))
	var refusal string
	var berr, aerr error
	within(t, 5*time.Second, func() {
		refusal, berr = g.Before("read", "s", readArgs)
		_, aerr = g.After("read", "s", readArgs, "out")
	})
	if berr != nil || refusal != "" || aerr != nil {
		t.Fatalf("before: %q %v, after: %v; want passes", refusal, berr, aerr)
	}
	if fi, err := os.Lstat(s.Path("s")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the pipe was not replaced by a session file: %v %v", fi, err)
	}
}

func TestLinkToDevZeroAtTheStatePathIsNotRead(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	symlink(t, "/dev/zero", s.Path("s"))
	var refusal string
	var err error
	within(t, 5*time.Second, func() { refusal, err = (&Guard{Store: s}).Before("read", "s", readArgs) })
	if err != nil || refusal != "" {
		t.Fatalf("before: %q %v; want a pass", refusal, err)
	}
	within(t, 5*time.Second, func() { _, err = (&Guard{Store: s}).After("read", "s", readArgs, "x") })
	if err != nil {
		t.Fatalf("after: %v", err)
	}
}

func TestLinkedStateFileIsNeitherReadNorWrittenThrough(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	outside := filepath.Join(t.TempDir(), "record.json")
	rec := refusingRecord(t, "s")
	os.WriteFile(outside, rec, 0o600)
	symlink(t, outside, s.Path("s"))
	g := &Guard{Store: s}
	refusal, err := g.Before("read", "s", readArgs)
	if err != nil || refusal != "" {
		t.Fatalf("before: %q %v; a linked record must not be read", refusal, err)
	}
	if _, err := g.After("read", "s", readArgs, "x"); err != nil {
		t.Fatalf("after: %v", err)
	}
	if got, _ := os.ReadFile(outside); string(got) != string(rec) {
		t.Fatal("the link's target was written")
	}
	if fi, err := os.Lstat(s.Path("s")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the link was not replaced by a session file: %v %v", fi, err)
	}
}

func TestLinkedLockFileCreatesNothingAtItsTarget(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{LockTimeout: 100 * time.Millisecond})
	target := filepath.Join(t.TempDir(), "created-by-slim")
	symlink(t, target, lockPath(s.Path("s")))
	var berr, err error
	within(t, 5*time.Second, func() {
		_, berr = (&Guard{Store: s}).Before("read", "s", readArgs)
		_, err = (&Guard{Store: s}).After("read", "s", readArgs, "x")
	})
	if berr != nil {
		t.Fatalf("before takes no lock, so the link is no concern of it: %v", berr)
	}
	if !errors.Is(err, filelock.ErrNotRegular) {
		t.Fatalf("after: err = %v, want the lock refused (the hook then passes)", err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("a file was created at the link's target: %v", err)
	}
	if _, err := s.Delete("s"); !errors.Is(err, filelock.ErrNotRegular) {
		t.Fatalf("reset: err = %v, want the lock refused", err)
	}
	// The sweep removes the link itself, never its target, and the session
	// works again.
	os.WriteFile(target, []byte("keep"), 0o600)
	if _, err := s.gc(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(lockPath(s.Path("s"))); !os.IsNotExist(err) {
		t.Fatalf("the planted lock link survived the sweep: %v", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "keep" {
		t.Fatal("the sweep touched the link's target")
	}
	if _, err := (&Guard{Store: s}).After("read", "s", readArgs, "x"); err != nil {
		t.Fatalf("after the sweep: %v", err)
	}
}

func TestNamedPipeAtTheLockPathDoesNotHangTheHook(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{LockTimeout: 100 * time.Millisecond})
	mkfifo(t, lockPath(s.Path("s")))
	var berr, err error
	within(t, 5*time.Second, func() {
		_, berr = (&Guard{Store: s}).Before("read", "s", readArgs)
		_, err = (&Guard{Store: s}).After("read", "s", readArgs, "x")
	})
	if berr != nil {
		t.Fatalf("before: %v, want a pass (it takes no lock)", berr)
	}
	if !errors.Is(err, filelock.ErrNotRegular) {
		t.Fatalf("after: err = %v, want the lock refused", err)
	}
}

func TestUnsafeStateDirectoriesAreNotUsed(t *testing.T) {
	// A root others may write.
	root := filepath.Join(t.TempDir(), "state")
	os.Mkdir(root, 0o700)
	os.Chmod(root, 0o777)
	g := &Guard{Store: NewStore(root, StoreOptions{})}
	_, err := g.Before("read", "s", readArgs)
	if !errors.Is(err, statedir.ErrUnsafe) {
		t.Fatalf("world-writable root: before: err = %v, want ErrUnsafe", err)
	}
	if _, err := g.After("read", "s", readArgs, "x"); !errors.Is(err, statedir.ErrUnsafe) {
		t.Fatalf("world-writable root: after: err = %v, want ErrUnsafe", err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Fatalf("wrote %v into an unsafe root", ents)
	}
	// A shard directory linked elsewhere.
	s := NewStore(t.TempDir(), StoreOptions{})
	outside := t.TempDir()
	symlink(t, outside, filepath.Dir(s.Path("s")))
	_, err = (&Guard{Store: s}).Before("read", "s", readArgs)
	if !errors.Is(err, statedir.ErrUnsafe) {
		t.Fatalf("linked shard: before: err = %v, want ErrUnsafe", err)
	}
	if _, err := (&Guard{Store: s}).After("read", "s", readArgs, "x"); !errors.Is(err, statedir.ErrUnsafe) {
		t.Fatalf("linked shard: after: err = %v, want ErrUnsafe", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote %v through a linked shard directory", ents)
	}
}
