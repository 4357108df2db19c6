//go:build !unix

package safefs

import (
	"io/fs"
	"os"
)

// keepOwner is a no-op where files have no numeric owner.
func keepOwner(*os.File, fs.FileInfo) error { return nil }
