//go:build unix

package statedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// within fails the test when fn does not return within d; a hang in the
// code under test then shows up as a failure, not as a stuck test binary.
// fn only stores results; the test checks them after within returns.
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

func TestPrepareCreatesAPrivateRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a", "slim")
	if err := Prepare(root); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		t.Fatalf("root %v, %v; want a directory only its owner can use", fi, err)
	}
	if err := Prepare(root); err != nil {
		t.Fatalf("second prepare: %v", err)
	}
}

func TestPrepareRefusesARootOthersCanWrite(t *testing.T) {
	root := filepath.Join(t.TempDir(), "slim")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(root); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("err = %v, want ErrUnsafe", err)
	}
	os.Chmod(root, 0o770)
	if err := Prepare(root); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("group-writable: err = %v, want ErrUnsafe", err)
	}
}

func TestPrepareRefusesAFileAtTheRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "slim")
	os.WriteFile(root, nil, 0o600)
	if err := Prepare(root); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("err = %v, want ErrUnsafe", err)
	}
}

func TestPrepareFollowsTheUsersOwnLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	os.Mkdir(target, 0o700)
	link := filepath.Join(dir, "slim")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(link); err != nil {
		t.Fatalf("a link the user made to a private directory: %v", err)
	}
}

func TestPrepareRefusesAnotherUsersLinkOrDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to another user")
	}
	const other = 54321
	dir := t.TempDir()
	target := filepath.Join(dir, "real")
	os.Mkdir(target, 0o700)
	link := filepath.Join(dir, "planted")
	os.Symlink(target, link)
	if err := os.Lchown(link, other, other); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(link); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("planted link: err = %v, want ErrUnsafe", err)
	}
	if err := os.Chown(target, other, other); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(target); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("another user's directory: err = %v, want ErrUnsafe", err)
	}
}

func TestEnsureDirNeverCreatesThroughALink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDir(root, filepath.Join("loop", "v1", "ab")); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("err = %v, want ErrUnsafe", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("created %v at the link's target", ents)
	}
	root2 := t.TempDir()
	if err := EnsureDir(root2, filepath.Join("loop", "v1", "ab")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(root2, "loop", "v1", "ab")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700&^umask() {
		t.Fatalf("%v %v", fi, err)
	}
	os.WriteFile(filepath.Join(root2, "loop", "v1", "cd"), nil, 0o600)
	if err := EnsureDir(root2, filepath.Join("loop", "v1", "cd")); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("a file in the way: err = %v, want ErrUnsafe", err)
	}
}

func umask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

func TestReadFileReturnsPromptlyOnANamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.json")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	// Should the read hang, a writer opened later lets it finish.
	t.Cleanup(func() {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	var err error
	within(t, 5*time.Second, func() { _, err = ReadFile(p, 1<<20) })
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("err = %v, want ErrNotRegular", err)
	}
}

func TestReadFileNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	var err error
	within(t, 5*time.Second, func() { _, err = ReadFile(zero, 1<<20) })
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("link to /dev/zero: err = %v, want ErrNotRegular", err)
	}
	real := filepath.Join(dir, "real.json")
	os.WriteFile(real, []byte("{}"), 0o600)
	link := filepath.Join(dir, "link.json")
	os.Symlink(real, link)
	if _, err := ReadFile(link, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("link to a regular file: err = %v, want ErrNotRegular", err)
	}
	if _, err := ReadFile(dir, 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: err = %v, want ErrNotRegular", err)
	}
}

func TestReadFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	os.WriteFile(small, []byte(`{"a":1}`), 0o600)
	if b, err := ReadFile(small, 7); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := ReadFile(small, 6); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("one byte over: err = %v, want ErrTooLarge", err)
	}
	// A sparse 8 GiB file: refused from its size, without reading it.
	huge := filepath.Join(dir, "huge.json")
	f, _ := os.Create(huge)
	if err := f.Truncate(8 << 30); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	var err error
	within(t, 5*time.Second, func() { _, err = ReadFile(huge, 1<<20) })
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 1<<20); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: err = %v, want ErrNotExist", err)
	}
}

func TestPrivateDirCreatesNarrowsAndRefuses(t *testing.T) {
	base := t.TempDir()
	p := filepath.Join(base, "tasks", "scope")
	if err := PrivateDir(p); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{p, filepath.Dir(p)} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v, want a 0700 directory", d, fi.Mode(), err)
		}
	}
	os.Chmod(p, 0o755)
	if err := PrivateDir(p); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(p); fi.Mode().Perm() != 0o700 {
		t.Fatalf("an existing 0755 directory was left %v, want 0700", fi.Mode().Perm())
	}

	target := t.TempDir()
	link := filepath.Join(base, "link")
	os.Symlink(target, link)
	if err := PrivateDir(link); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("a link: err = %v, want ErrUnsafe", err)
	}
	if err := PrivateDir(filepath.Join(link, "below")); err != nil {
		// Only the last component is checked; parents are the caller's.
		t.Fatalf("a directory below a trusted parent link: %v", err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	if err := PrivateDir(file); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("a file: err = %v, want ErrUnsafe", err)
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		os.Chown(other, 54321, 54321)
		if err := PrivateDir(other); !errors.Is(err, ErrUnsafe) {
			t.Fatalf("another user's directory: err = %v, want ErrUnsafe", err)
		}
	}
}
