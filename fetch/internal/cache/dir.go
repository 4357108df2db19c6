package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// prepareRoot makes root usable as the cache root, creating it (and missing
// parents) with mode 0700 when it does not exist. An existing root must be
// a directory that belongs to the current user and that neither group nor
// others may write, since whoever can write it can plant entries the fetch
// command would then return as page content. A symbolic link at root is
// followed only when the link itself belongs to the current user (or to
// root), so a link someone else planted in a shared directory is refused.
func prepareRoot(root string) error {
	lfi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(root, 0o700); err != nil {
			return ioErr(err, "cannot create %s", root)
		}
		lfi, err = os.Lstat(root)
	}
	if err != nil {
		return ioErr(err, "cannot use %s", root)
	}
	fi := lfi
	if lfi.Mode()&fs.ModeSymlink != 0 {
		if !linkTrusted(lfi) {
			return unsafeDir(root, "is a symbolic link owned by another user")
		}
		if fi, err = os.Stat(root); err != nil {
			return ioErr(err, "cannot use %s", root)
		}
	}
	if !fi.IsDir() {
		return unsafeDir(root, "is not a directory")
	}
	if why := untrusted(fi); why != "" {
		return unsafeDir(root, why)
	}
	return nil
}

// ensureDir creates the directory path (mode 0700) or checks that it
// already is one. Below the root no symbolic link is followed: a link, a
// file or another user's directory is refused. A directory of ours that
// others may read is narrowed to 0700, because cached pages may be private.
func ensureDir(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.Mkdir(path, 0o700); err == nil || errors.Is(err, fs.ErrExist) {
			fi, err = os.Lstat(path)
		}
	}
	switch {
	case err != nil:
		return ioErr(err, "cannot create %s", path)
	case fi.Mode()&fs.ModeSymlink != 0:
		return unsafeDir(path, "is a symbolic link")
	case !fi.IsDir():
		return unsafeDir(path, "is not a directory")
	case ownedByOther(fi):
		return unsafeDir(path, "belongs to another user")
	}
	if err := narrow(path, fi); err != nil {
		return ioErr(err, "cannot make %s private", path)
	}
	return nil
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
	f, err := openRead(path)
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
