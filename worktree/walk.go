package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// maxLinkHops bounds how many symbolic links one path may pass through, as
// the kernel does (Linux uses 40), so a loop of links ends with an error.
const maxLinkHops = 40

// walkResult is the physical form of a path: the deepest existing prefix,
// with every symbolic link on the way resolved, plus the components below it
// that do not exist yet.
type walkResult struct {
	existing string      // physical and existing
	tail     []string    // missing components after existing
	viaLink  bool        // at least one symbolic link was followed
	last     fs.FileInfo // Lstat of existing when tail is empty
}

// physical returns existing with the missing tail re-attached.
func (r walkResult) physical() string {
	if len(r.tail) == 0 {
		return r.existing
	}
	return filepath.Join(append([]string{r.existing}, r.tail...)...)
}

// errLinkLoop reports a chain of links longer than maxLinkHops.
var errLinkLoop = errors.New("too many levels of symbolic links")

// splitComponents splits the part of p after its volume into components,
// dropping empty ones.
func splitComponents(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || os.IsPathSeparator(p[i]) {
			if i > start {
				out = append(out, p[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// walkPath resolves the absolute native path abs component by component:
// each existing component is Lstat'ed, symbolic links (dangling ones
// included) are replaced by their targets, ".." goes to the physical parent.
// Components that do not exist are kept as a tail; a later ".." climbs back
// out of the tail and the walk resumes on disk.
func walkPath(abs string) (walkResult, error) {
	vol := filepath.VolumeName(abs)
	root := vol + string(filepath.Separator)
	return walkFrom(root, splitComponents(abs[len(vol):]))
}

// walkFrom is walkPath starting from an existing physical directory start
// with the components comps still to walk.
func walkFrom(start string, comps []string) (walkResult, error) {
	var res walkResult
	cur := start
	// pending holds the components still to walk, in reverse order, so a
	// link's target can be pushed in front of the rest.
	pending := make([]string, 0, len(comps)+8)
	for i := len(comps) - 1; i >= 0; i-- {
		pending = append(pending, comps[i])
	}
	hops := 0
	var last fs.FileInfo
	for len(pending) > 0 {
		c := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if c == "" || c == "." {
			continue
		}
		if len(res.tail) > 0 {
			if c == ".." {
				res.tail = res.tail[:len(res.tail)-1]
			} else {
				res.tail = append(res.tail, c)
			}
			continue
		}
		if c == ".." {
			cur = filepath.Dir(cur)
			last = nil
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				res.tail = append(res.tail, c)
				continue
			}
			return res, fmt.Errorf("inspect %s: %w", next, err)
		}
		if isLink(fi) {
			hops++
			if hops > maxLinkHops {
				return res, fmt.Errorf("%s: %w", next, errLinkLoop)
			}
			target, err := os.Readlink(next)
			if err != nil {
				return res, fmt.Errorf("read link %s: %w", next, err)
			}
			res.viaLink = true
			tvol := filepath.VolumeName(target)
			switch {
			case filepath.IsAbs(target) || tvol != "":
				// Absolute, or drive-relative (C:x), which is taken as rooted
				// on that drive; such links are rare and this errs towards
				// outside.
				cur = tvol + string(filepath.Separator)
			case target != "" && os.IsPathSeparator(target[0]):
				cur = filepath.VolumeName(cur) + string(filepath.Separator)
			}
			tc := splitComponents(target[len(tvol):])
			for i := len(tc) - 1; i >= 0; i-- {
				pending = append(pending, tc[i])
			}
			last = nil
			continue
		}
		cur = next
		last = fi
	}
	res.existing = cur
	if len(res.tail) == 0 {
		res.last = last
	}
	return res, nil
}

// isLink reports whether fi is a symbolic link, or on Windows a junction or
// other name-surrogate reparse point (which Lstat reports as irregular and
// os.Readlink can read).
func isLink(fi fs.FileInfo) bool {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return true
	}
	return runtime.GOOS == "windows" && fi.Mode()&fs.ModeIrregular != 0
}

// hasPathPrefix reports whether p equals dir or lies below it, comparing
// bytes (both physical and clean).
func hasPathPrefix(p, dir string) bool {
	if !strings.HasPrefix(p, dir) {
		return false
	}
	if len(p) == len(dir) {
		return true
	}
	if os.IsPathSeparator(dir[len(dir)-1]) {
		return true
	}
	return os.IsPathSeparator(p[len(dir)])
}
