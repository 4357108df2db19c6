package binsave

import (
	"errors"
	"io/fs"
	"os"
)

// DirPrefix starts the name of the download directory under the temporary
// directory.
const DirPrefix = "slim-fetch"

// Dir returns the directory downloads are saved in, creating it when
// missing: <tmp>/slim-fetch-<uid> on Unix, <tmp>\slim-fetch
// on Windows (where the temporary directory is already per user). An empty
// tmp means os.TempDir().
//
// On Unix the directory is created with mode 0700, and an existing one is
// used only when it is a real directory (not a symbolic link), owned by the
// current user, with mode exactly 0700; the checks are made on an open
// handle of the directory, opened without following links. Anything else
// is refused with a Blocked *Error that says which check failed. Dir does
// not fall back to a fresh random directory: that would change where
// downloads land on every call, leave a directory behind each time, and
// hide that another user holds the expected path. The fix is the user's:
// remove the directory, or point TMPDIR elsewhere.
func Dir(tmp string) (string, error) {
	if tmp == "" {
		tmp = os.TempDir()
	}
	dir := dirPath(tmp)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", newErr(Internal, CodeDirFailed, "cannot create the temporary directory "+tmp+": "+err.Error(), err)
	}
	created := true
	if err := os.Mkdir(dir, 0o700); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return "", newErr(Internal, CodeDirFailed, "cannot create the download directory "+dir+": "+err.Error(), err)
		}
		created = false
	}
	if err := checkDir(dir, created); err != nil {
		return "", err
	}
	return dir, nil
}

func unsafeDir(dir, why string, cause error) *Error {
	return newErr(Blocked, CodeUnsafeDir,
		"the download directory "+dir+" is not safe to use: "+why+"; remove it or set TMPDIR to another directory", cause)
}
