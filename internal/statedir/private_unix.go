//go:build unix

package statedir

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// OpenNoFollow opens path for reading without following a symbolic link in its
// last component and without blocking (a named pipe with no writer would
// otherwise hang the open).
func OpenNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// linkTrusted reports whether a symbolic link at the state root may be
// followed: it belongs to the current user or to root.
func linkTrusted(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid() || st.Uid == 0
}

// checkPrivate refuses a state root owned by another user or writable by
// group or others.
func checkPrivate(root string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return unsafe(root, "belongs to another user")
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return unsafe(root, "is writable by group or others (chmod 700 it)")
	}
	return nil
}

// narrowOwn refuses a directory owned by another user and takes group and
// other permissions off one of ours.
func narrowOwn(path string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return unsafe(path, "belongs to another user")
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	return nil
}
