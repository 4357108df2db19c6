// Package hostpath implements Node's path module semantics for the two host
// flavors, posix and win32, so that paths sent by a host on any platform are
// made absolute exactly as the host itself would make them.
//
// The functions follow Node's lib/path.js (checked against vectors produced
// by Node itself, see testdata) with one change: where Node consults
// process.cwd(), Resolve takes the working directory explicitly and Relative
// uses the flavor's root.
// Strings are handled as bytes; all the separators and markers involved are
// ASCII, so UTF-8 input gives the same results as Node's UTF-16 strings.
package hostpath

import (
	"runtime"
	"strings"
)

// Flavor selects posix or win32 path rules.
type Flavor int

const (
	Native Flavor = iota // the flavor of the running OS
	Posix
	Win32
)

// ForPlatform maps Node's process.platform to a flavor: win32 for "win32",
// posix for anything else.
func ForPlatform(platform string) Flavor {
	if platform == "win32" {
		return Win32
	}
	return Posix
}

// Concrete returns Posix or Win32: Native becomes the running OS's flavor.
func (f Flavor) Concrete() Flavor {
	if f == Native {
		if runtime.GOOS == "windows" {
			return Win32
		}
		return Posix
	}
	return f
}

// String names the flavor as Node does ("posix" or "win32").
func (f Flavor) String() string {
	if f.Concrete() == Win32 {
		return "win32"
	}
	return "posix"
}

// Sep returns the preferred separator: "/" or "\".
func (f Flavor) Sep() string {
	if f.Concrete() == Win32 {
		return `\`
	}
	return "/"
}

// IsSep reports whether c separates path components in this flavor.
func (f Flavor) IsSep(c byte) bool {
	if f.Concrete() == Win32 {
		return isWinSep(c)
	}
	return isPosixSep(c)
}

// Resolve is path.resolve with cwd standing in for process.cwd(). cwd is
// only consulted when elems do not already make an absolute path.
func (f Flavor) Resolve(cwd string, elems ...string) string {
	if f.Concrete() == Win32 {
		return winResolve(cwd, elems)
	}
	return posixResolve(cwd, elems)
}

// Join is path.join.
func (f Flavor) Join(elems ...string) string {
	if f.Concrete() == Win32 {
		return winJoin(elems)
	}
	return posixJoin(elems)
}

// Normalize is path.normalize.
func (f Flavor) Normalize(p string) string {
	if f.Concrete() == Win32 {
		return winNormalize(p)
	}
	return posixNormalize(p)
}

// IsAbs is path.isAbsolute.
func (f Flavor) IsAbs(p string) bool {
	if f.Concrete() == Win32 {
		return winIsAbs(p)
	}
	return len(p) > 0 && p[0] == '/'
}

// Relative is path.relative for absolute inputs. Relative inputs are
// resolved against the root of the flavor ("/" or "\").
func (f Flavor) Relative(from, to string) string {
	return f.relativeIn(f.Sep(), from, to)
}

// relativeIn is path.relative with cwd standing in for process.cwd().
func (f Flavor) relativeIn(cwd, from, to string) string {
	if f.Concrete() == Win32 {
		return winRelative(cwd, from, to)
	}
	return posixRelative(cwd, from, to)
}

// normalizeString collapses "." and ".." segments and repeated separators,
// as Node's internal helper of the same name does.
func normalizeString(path string, allowAboveRoot bool, sep byte, isSep func(byte) bool) string {
	var res strings.Builder
	res.Grow(len(path))
	lastSegmentLength := 0
	lastSlash := -1
	dots := 0
	var code byte
	for i := 0; i <= len(path); i++ {
		if i < len(path) {
			code = path[i]
		} else if isSep(code) {
			break
		} else {
			code = '/'
		}
		if isSep(code) {
			if lastSlash == i-1 || dots == 1 {
				// nothing
			} else if dots == 2 {
				r := res.String()
				if len(r) < 2 || lastSegmentLength != 2 || r[len(r)-1] != '.' || r[len(r)-2] != '.' {
					if len(r) > 2 {
						idx := strings.LastIndexByte(r, sep)
						res.Reset()
						if idx == -1 {
							lastSegmentLength = 0
						} else {
							r = r[:idx]
							res.WriteString(r)
							lastSegmentLength = len(r) - 1 - strings.LastIndexByte(r, sep)
						}
						lastSlash = i
						dots = 0
						continue
					} else if len(r) != 0 {
						res.Reset()
						lastSegmentLength = 0
						lastSlash = i
						dots = 0
						continue
					}
				}
				if allowAboveRoot {
					if res.Len() > 0 {
						res.WriteByte(sep)
					}
					res.WriteString("..")
					lastSegmentLength = 2
				}
			} else {
				if res.Len() > 0 {
					res.WriteByte(sep)
				}
				res.WriteString(path[lastSlash+1 : i])
				lastSegmentLength = i - lastSlash - 1
			}
			lastSlash = i
			dots = 0
		} else if code == '.' && dots != -1 {
			dots++
		} else {
			dots = -1
		}
	}
	return res.String()
}

func isPosixSep(c byte) bool { return c == '/' }
func isWinSep(c byte) bool   { return c == '/' || c == '\\' }
func isDriveLetter(c byte) bool {
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
}

// ---- posix ----

func posixResolve(cwd string, elems []string) string {
	resolved := ""
	abs := false
	for i := len(elems) - 1; i >= 0 && !abs; i-- {
		p := elems[i]
		if p == "" {
			continue
		}
		resolved = p + "/" + resolved
		abs = p[0] == '/'
	}
	if !abs {
		resolved = cwd + "/" + resolved
		abs = len(cwd) > 0 && cwd[0] == '/'
	}
	resolved = normalizeString(resolved, !abs, '/', isPosixSep)
	if abs {
		return "/" + resolved
	}
	if resolved == "" {
		return "."
	}
	return resolved
}

func posixNormalize(p string) string {
	if p == "" {
		return "."
	}
	abs := p[0] == '/'
	trailing := p[len(p)-1] == '/'
	p = normalizeString(p, !abs, '/', isPosixSep)
	if p == "" {
		if abs {
			return "/"
		}
		if trailing {
			return "./"
		}
		return "."
	}
	if trailing {
		p += "/"
	}
	if abs {
		return "/" + p
	}
	return p
}

func posixJoin(elems []string) string {
	parts := make([]string, 0, len(elems))
	for _, e := range elems {
		if e != "" {
			parts = append(parts, e)
		}
	}
	if len(parts) == 0 {
		return "."
	}
	return posixNormalize(strings.Join(parts, "/"))
}

func posixRelative(cwd, from, to string) string {
	if from == to {
		return ""
	}
	from = posixResolve(cwd, []string{from})
	to = posixResolve(cwd, []string{to})
	if from == to {
		return ""
	}
	// Node assumes both results start with "/"; a relative cwd breaks that
	// assumption there too, and we mirror the arithmetic as is.
	const fromStart, toStart = 1, 1
	fromEnd := len(from)
	fromLen := fromEnd - fromStart
	toLen := len(to) - toStart
	length := min(fromLen, toLen)
	lastCommonSep := -1
	i := 0
	for ; i < length; i++ {
		c := from[fromStart+i]
		if c != to[toStart+i] {
			break
		} else if c == '/' {
			lastCommonSep = i
		}
	}
	if i == length {
		if toLen > length {
			if to[toStart+i] == '/' {
				return to[toStart+i+1:]
			}
			if i == 0 {
				return to[toStart+i:]
			}
		} else if fromLen > length {
			if from[fromStart+i] == '/' {
				lastCommonSep = i
			} else if i == 0 {
				lastCommonSep = 0
			}
		}
	}
	var out strings.Builder
	for i = fromStart + lastCommonSep + 1; i <= fromEnd; i++ {
		if i == fromEnd || from[i] == '/' {
			if out.Len() == 0 {
				out.WriteString("..")
			} else {
				out.WriteString("/..")
			}
		}
	}
	return out.String() + to[toStart+lastCommonSep:]
}
