// Package statedir finds the directory where slim keeps small per-user state
// (the loop guard's session files), makes sure it is safe to use, and reads
// the small files kept there. It lives outside every worktree and git
// directory so neither the model nor git ever sees it.
//
// Anything found at a state path that slim did not put there (a symbolic
// link, a named pipe, a device, a huge file) is refused promptly with an
// error rather than followed, waited on or read whole, so the caller can
// fail open.
package statedir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Env is the variable that overrides the state root.
const Env = "SLIM_STATE_DIR"

// Errors returned (wrapped, with the path) by Prepare, EnsureDir and
// ReadFile.
var (
	// ErrUnsafe: the state root or one of its directories cannot be trusted
	// (a link, not a directory, another user's, writable by others).
	ErrUnsafe = errors.New("unsafe state directory")
	// ErrNotRegular: a state file is a symbolic link, a named pipe, a
	// device or a directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: a state file is larger than the caller's bound.
	ErrTooLarge = errors.New("state file too large")
)

// Root returns the state root for this process: $SLIM_STATE_DIR, else
// $XDG_STATE_HOME/slim, else ~/.local/state/slim on Unix and
// os.UserCacheDir()/slim on macOS and Windows.
func Root() (string, error) {
	return RootFrom(os.Getenv, runtime.GOOS, os.UserHomeDir, os.UserCacheDir)
}

// RootFrom is Root with its inputs made explicit, so every branch can be
// tested on any OS.
func RootFrom(getenv func(string) string, goos string, home, cache func() (string, error)) (string, error) {
	if d := getenv(Env); d != "" {
		return abs(d)
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return abs(filepath.Join(d, "slim"))
	}
	switch goos {
	case "darwin", "ios", "windows":
		d, err := cache()
		if err != nil {
			return "", errors.Join(errors.New("state dir: no user cache directory (set SLIM_STATE_DIR)"), err)
		}
		return filepath.Join(d, "slim"), nil
	}
	h, err := home()
	if err != nil || h == "" {
		return "", errors.Join(errors.New("state dir: no home directory (set SLIM_STATE_DIR)"), err)
	}
	return filepath.Join(h, ".local", "state", "slim"), nil
}

// abs makes a configured directory absolute, so a later chdir cannot move
// the state.
func abs(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", errors.Join(errors.New("state dir: "+p), err)
	}
	return a, nil
}

// Prepare makes root usable as the state root, creating it (and missing
// parents) with mode 0700 when it does not exist. An existing root must be
// a directory owned by the current user that neither group nor others may
// write. A symbolic link at root is followed only when the link itself
// belongs to the current user (or to root), so a link someone else planted,
// in a shared temporary directory say, is refused. On Windows only the
// directory check applies. Errors wrap ErrUnsafe when the root exists but
// cannot be trusted.
func Prepare(root string) error {
	lfi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(root, 0o700); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
		lfi, err = os.Lstat(root)
	}
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	fi := lfi
	if lfi.Mode()&fs.ModeSymlink != 0 {
		if !linkTrusted(lfi) {
			return unsafe(root, "is a symbolic link owned by another user")
		}
		if fi, err = os.Stat(root); err != nil {
			return fmt.Errorf("state dir: %w", err)
		}
	}
	if !fi.IsDir() {
		return unsafe(root, "is not a directory")
	}
	return checkPrivate(root, fi)
}

// EnsureDir creates each directory of the relative path rel under root
// (mode 0700) or checks that it already is one. A component that is a
// symbolic link or not a directory is refused (ErrUnsafe), so nothing is
// ever created through a link inside the state root. root itself is taken
// as given; check it with Prepare.
func EnsureDir(root, rel string) error {
	p := root
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/") {
		if part == "" || part == "." {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if err = os.Mkdir(p, 0o700); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = os.Lstat(p)
			}
		}
		switch {
		case err != nil:
			return fmt.Errorf("state dir: %w", err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return unsafe(p, "is a symbolic link")
		case !fi.IsDir():
			return unsafe(p, "is not a directory")
		}
	}
	return nil
}

// PrivateDir creates the directory path with mode 0700 (missing parents
// too) or checks that it already is one, for state that no other user may
// read or plant files in. The last component must be a real directory: a
// symbolic link or anything else there is refused, never followed. On Unix
// it must belong to the current user, and group and other permissions on
// it are taken away. Errors wrap ErrUnsafe when path exists but cannot be
// trusted. The parents are taken as given; check the state root with
// Prepare and the directories below it with EnsureDir.
func PrivateDir(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(path, 0o700); err == nil {
			fi, err = os.Lstat(path)
		}
	}
	switch {
	case err != nil:
		return fmt.Errorf("state dir: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return unsafe(path, "is a symbolic link")
	case !fi.IsDir():
		return unsafe(path, "is not a directory")
	}
	return narrowOwn(path, fi)
}

func unsafe(path, why string) error { return &DirError{Path: path, Why: why} }

// DirError says why a directory cannot be trusted. It matches ErrUnsafe
// under errors.Is; other packages that keep private directories (the
// fetch cache) use Prepare and PrivateDir and word the advice themselves
// from Path and Why.
type DirError struct {
	Path string
	// Why completes "PATH ...": "is a symbolic link", "belongs to another
	// user", "is writable by group or others (chmod 700 it)".
	Why string
}

func (e *DirError) Error() string {
	return fmt.Sprintf("%v: %s %s; remove it (or set %s to another directory)", ErrUnsafe, e.Path, e.Why, Env)
}

// Is makes a *DirError match ErrUnsafe.
func (e *DirError) Is(target error) bool { return target == ErrUnsafe }

// ReadFile reads a small state file. It never follows a symbolic link at
// path and never waits on a named pipe: the file is opened without
// following links and without blocking, then checked on the open
// descriptor. Anything but a regular file is refused with ErrNotRegular; a
// file larger than max bytes with ErrTooLarge, and at most max+1 bytes are
// ever read. A missing file gives an error matching fs.ErrNotExist.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := OpenNoFollow(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			if lfi, lerr := os.Lstat(path); lerr == nil && !lfi.Mode().IsRegular() {
				return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, describe(lfi.Mode()))
			}
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, describe(fi.Mode()))
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %w (%d bytes, at most %d)", path, ErrTooLarge, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w (more than %d bytes)", path, ErrTooLarge, max)
	}
	return data, nil
}

// describe names the kind of a non-regular file for messages.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}
