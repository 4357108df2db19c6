//go:build unix

package binsave

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func wantUnsafe(t *testing.T, err error, why string) {
	t.Helper()
	e, ok := AsError(err)
	if !ok || e.Code != CodeUnsafeDir || e.Kind != Blocked || !strings.Contains(e.Message, why) {
		t.Fatalf("got %v, want %s mentioning %q", err, CodeUnsafeDir, why)
	}
}

func userDir(tmp string) string {
	return filepath.Join(tmp, "slim-fetch-"+strconv.Itoa(os.Getuid()))
}

// Dir creates <tmp>/slim-fetch-<uid> with mode 0700 exactly, even
// under a umask that would leave it unwritable, and hands the same
// directory back on the next call.
func TestDirCreatesAPrivatePerUserDirectory(t *testing.T) {
	tmp := t.TempDir()
	old := syscall.Umask(0o277)
	dir, err := Dir(tmp)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if dir != userDir(tmp) {
		t.Fatalf("dir = %s", dir)
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	again, err := Dir(tmp)
	if err != nil || again != dir {
		t.Fatalf("second call: %s, %v", again, err)
	}
	nested := filepath.Join(tmp, "not", "yet")
	if dir, err := Dir(nested); err != nil || dir != userDir(nested) {
		t.Fatalf("missing tmp: %s, %v", dir, err)
	}
}

// An existing directory that is a symbolic link is refused, even when the
// link points at a private directory of ours.
func TestDirRefusesASymlink(t *testing.T) {
	tmp := t.TempDir()
	real := filepath.Join(tmp, "elsewhere")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, userDir(tmp)); err != nil {
		t.Fatal(err)
	}
	_, err := Dir(tmp)
	wantUnsafe(t, err, "symbolic link")
}

// An existing directory that others can read or write, or that carries a
// special bit, is refused, and so is a file in its place.
func TestDirRefusesAnOpenModeOrAFile(t *testing.T) {
	for _, mode := range []os.FileMode{0o755, 0o770, 0o701, 0o500, 0o700 | os.ModeSticky} {
		tmp := t.TempDir()
		dir := userDir(tmp)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		_, err := Dir(tmp)
		wantUnsafe(t, err, "mode")
		os.Chmod(dir, 0o700)
	}
	tmp := t.TempDir()
	if err := os.WriteFile(userDir(tmp), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Dir(tmp)
	wantUnsafe(t, err, "not a directory")
}

// A directory owned by another user is refused. Giving a directory away
// needs root, so the test runs only as root.
func TestDirRefusesAnotherUsersDirectory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown to another user needs root")
	}
	tmp := t.TempDir()
	dir := userDir(tmp)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Skipf("chown: %v", err)
	}
	_, err := Dir(tmp)
	wantUnsafe(t, err, "owned by uid 65534")
}
