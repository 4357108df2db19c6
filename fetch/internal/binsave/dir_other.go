//go:build !unix

package binsave

import (
	"os"
	"path/filepath"
)

// dirPath is the directory under tmp. The Windows temporary directory is
// per user already, so the name carries no user id.
func dirPath(tmp string) string {
	return filepath.Join(tmp, DirPrefix)
}

// checkDir refuses a directory that is a link or a reparse point (a
// junction) or not a directory. Ownership is not checked here: the
// temporary directory it lives in belongs to the user.
func checkDir(dir string, _ bool) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return newErr(Internal, CodeDirFailed, "cannot inspect the download directory "+dir+": "+err.Error(), err)
	}
	if fi.Mode()&(os.ModeSymlink|os.ModeIrregular) != 0 {
		return unsafeDir(dir, "it is a link or a junction", nil)
	}
	if !fi.IsDir() {
		return unsafeDir(dir, "it is not a directory", nil)
	}
	return nil
}
