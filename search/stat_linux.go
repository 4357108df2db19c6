package search

import (
	"errors"
	"strings"

	"golang.org/x/sys/unix"
)

// dirStat takes the modification times that order results, of files
// below the directory ripgrep searched. It stats a file by its path
// relative to a handle on that directory instead of by its absolute path:
// the kernel then walks only the components below the directory, and on a
// large result (glob lists thousands of files, grep reports thousands)
// that is a fifth of the stat's cost. A path that is not below the
// directory, or a directory that cannot be opened, is stat'ed as before.
// The answer is the same as modTime's: the handle is the directory the
// absolute path names.
type dirStat struct {
	prefix string // the directory with its trailing separator
	fd     int    // -1 when the directory could not be opened
}

// openDirStat opens dir for dirStat; close releases it. O_PATH needs no
// read permission on the directory, only the search permission a stat
// through it needs anyway.
func openDirStat(dir string) *dirStat {
	d := &dirStat{prefix: strings.TrimSuffix(dir, "/") + "/", fd: -1}
	for {
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil {
			d.fd = fd
		}
		return d
	}
}

// modTime is modTime(path), taken through the directory handle when path
// lies below it.
func (d *dirStat) modTime(path string) int64 {
	rel, ok := strings.CutPrefix(path, d.prefix)
	if !ok || rel == "" || d.fd < 0 {
		return modTime(path)
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, rel, &st, 0) // follows a final link, as os.Stat does
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0
		}
		return st.Mtim.Nano()
	}
}

func (d *dirStat) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
}
