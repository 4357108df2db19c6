//go:build !unix

package cache

import (
	"fmt"
	"os"
)

// openRead opens path for reading, refusing a symbolic link. Without a
// no-follow open flag the link is checked first and the opened file
// compared with what was checked.
func openRead(path string) (*os.File, error) {
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !lfi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !os.SameFile(lfi, fi) {
		f.Close()
		return nil, fmt.Errorf("%s: %w (replaced while opening)", path, errNotRegular)
	}
	return f, nil
}
