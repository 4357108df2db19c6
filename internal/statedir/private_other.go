//go:build !unix

package statedir

import (
	"fmt"
	"io/fs"
	"os"
)

// OpenNoFollow opens path for reading, refusing a symbolic link. Without a
// no-follow open flag the link is checked first and the opened file
// compared with what was checked.
func OpenNoFollow(path string) (*os.File, error) {
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !lfi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, describe(lfi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !os.SameFile(lfi, fi) {
		f.Close()
		return nil, fmt.Errorf("%s: %w (replaced while opening)", path, ErrNotRegular)
	}
	return f, nil
}

// linkTrusted: file ownership is not checked on this platform.
func linkTrusted(fs.FileInfo) bool { return true }

// checkPrivate: ownership and permission bits are not checked on this
// platform (they do not map onto its access control lists).
func checkPrivate(string, fs.FileInfo) error { return nil }

// narrowOwn: ownership and permission bits are not checked on this
// platform.
func narrowOwn(string, fs.FileInfo) error { return nil }
