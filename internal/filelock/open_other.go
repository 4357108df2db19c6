//go:build !unix

package filelock

import "os"

// openFlags opens (or creates) a lock file. This platform has no
// no-follow open flag, so precheck refuses a link first and Acquire checks
// the file it locked against the one at the path.
const openFlags = os.O_CREATE | os.O_RDONLY

// precheck refuses anything but a regular file (or nothing) at path.
func precheck(path string) error { return notRegular(path) }
