//go:build unix

package cache

import (
	"io/fs"
	"os"
	"syscall"
)

// openRead opens path for reading without following a symbolic link in its
// last component and without blocking on a named pipe.
func openRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// linkTrusted reports whether a symbolic link at the cache root may be
// followed: it belongs to the current user or to root.
func linkTrusted(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid() || st.Uid == 0
}

// ownedByOther reports whether fi belongs to another user.
func ownedByOther(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) != os.Geteuid()
}

// untrusted says why the cache root fi cannot be used, or "".
func untrusted(fi fs.FileInfo) string {
	if ownedByOther(fi) {
		return "belongs to another user"
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return "is writable by group or others (chmod 700 it)"
	}
	return ""
}

// narrow takes group and other permissions off a directory of ours.
func narrow(path string, fi fs.FileInfo) error {
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return os.Chmod(path, fi.Mode().Perm()&0o700)
}
