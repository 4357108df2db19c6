package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/slimgate/slim/internal/statedir"
)

// prepareRoot makes root usable as the cache root, creating it (and missing
// parents) with mode 0700 when it does not exist. An existing root must be
// a directory that belongs to the current user and that neither group nor
// others may write, since whoever can write it can plant entries the fetch
// command would then return as page content. A symbolic link at root is
// followed only when the link itself belongs to the current user (or to
// root), so a link someone else planted in a shared directory is refused.
// The rules are the state directory's (statedir.Prepare); the advice is
// the cache's own.
func prepareRoot(root string) error {
	return dirErr(statedir.Prepare(root), "cannot use %s", root)
}

// ensureDir creates the directory path (mode 0700) or checks that it
// already is one. Below the root no symbolic link is followed: a link, a
// file or another user's directory is refused. A directory of ours that
// others may read is narrowed to 0700, because cached pages may be private
// (statedir.PrivateDir).
func ensureDir(path string) error {
	return dirErr(statedir.PrivateDir(path), "cannot create %s", path)
}

// dirErr words a directory check's error for the cache.
func dirErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var de *statedir.DirError
	if errors.As(err, &de) {
		return unsafeDir(de.Path, de.Why)
	}
	return ioErr(err, format, args...)
}

func unsafeDir(path, why string) *Error {
	return newErr(Unsafe, CodeDirUnsafe, nil, "%s %s; remove it or choose another cache directory", path, why)
}

// readSmall reads a whole small file at path without following a link and
// without blocking on a named pipe. It returns the file's identity, for a
// later removal that must not hit a file renamed into place meanwhile. A
// missing file gives an error matching fs.ErrNotExist; anything but a
// regular file, or more than max bytes, an error matching errNotRegular or
// errTooLarge (the file is left in place).
func readSmall(path string, max int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := openRegular(path, max)
	if err != nil {
		return nil, fi, err
	}
	defer f.Close()
	data, err := io.ReadAll(&boundedReader{r: f, n: max})
	return data, fi, err
}

// errNotRegular is the cause when a cache path holds a symbolic link, a
// named pipe, a directory or a device.
var errNotRegular = errors.New("not a regular file")

// openRegular opens path for reading when it is a regular file of at most
// max bytes. On a refusal the returned FileInfo describes what is at path,
// so the caller can remove exactly that.
func openRegular(path string, max int64) (*os.File, fs.FileInfo, error) {
	f, err := statedir.OpenNoFollow(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		if lfi, lerr := os.Lstat(path); lerr == nil && !lfi.Mode().IsRegular() {
			return nil, lfi, fmt.Errorf("%w (%s)", errNotRegular, lfi.Mode().Type())
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fi, fmt.Errorf("%w (%s)", errNotRegular, fi.Mode().Type())
	}
	if fi.Size() > max {
		f.Close()
		return nil, fi, fmt.Errorf("%w (%d bytes, at most %d)", errTooLarge, fi.Size(), max)
	}
	return f, fi, nil
}

// damaged reports whether a read error means the file itself is bad, so it
// should be removed: it failed to decompress or decode, is over a bound or
// is not a regular file. An error from the operating system (missing,
// permission denied, an I/O error) says nothing about the content.
func damaged(err error) bool {
	var pe *fs.PathError
	return err != nil && !errors.As(err, &pe)
}

// removeSame removes path if it is still the file fi describes (or fi is
// nil), so a file another process renamed into place after we looked is
// left alone. It reports whether the file is gone, which it also is when
// someone else removed it first.
func removeSame(path string, fi fs.FileInfo) (bool, error) {
	if fi != nil {
		now, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if !os.SameFile(now, fi) {
			return false, nil
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}
