// This file is the grep/glob path pre-check that `slim hook before` runs:
// it resolves the search path exactly as the host will, re-anchors a stale
// absolute path on the workspace, and blocks a search whose path does not
// exist (or has a file where a directory must be) before the host's
// ripgrep run turns that into a silent wrong-scope search or an opaque
// failure.

package search

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/slimgate/slim/worktree/hostpath"
)

// Host is what the pre-check needs to know about the host that will run the
// tool.
type Host struct {
	// Generation is the host generation, "v1" or "v2" ("" reads as v1): v1
	// grep joins a relative path to the directory, everything else
	// resolves it.
	Generation string
	Platform   string // Node's process.platform; "win32" selects win32 path rules
	Directory  string // the instance directory the host resolves against
	Cwd        string // the host process's working directory
}

// Outcome is the pre-check's decision. The zero value passes the call.
type Outcome struct {
	// Args, when non-nil, are the full args the call must run with (the
	// path was re-anchored).
	Args map[string]any
	// Block, when non-empty, is the message the call is refused with.
	Block string
}

// Precheck decides a grep or glob call before the host runs it. Only the
// tools named exactly "grep" and "glob" are examined, and only their "path"
// argument. A nil error with a zero Outcome passes; a non-nil error means
// the path could not be checked (for example permission denied or a
// symlink loop): the caller logs it and lets the call pass.
func Precheck(tool string, args map[string]any, h Host) (Outcome, error) {
	return precheck(tool, args, h, os.Stat)
}

// precheck is Precheck with stat, which reports on a path the way os.Stat
// does (symlinks followed), given by the caller.
func precheck(tool string, args map[string]any, h Host, stat func(name string) (fs.FileInfo, error)) (Outcome, error) {
	if tool != "grep" && tool != "glob" {
		return Outcome{}, nil
	}
	raw, ok := args["path"].(string)
	if !ok || raw == "" || h.Directory == "" {
		// No path means the instance directory; no directory means nothing
		// to resolve against.
		return Outcome{}, nil
	}
	flavor := hostpath.ForPlatform(h.Platform)
	var out Outcome
	if flavor.IsAbs(raw) && flavor.IsAbs(h.Directory) {
		if _, err := stat(raw); isMissing(err) {
			if anchored, ok := reanchor(flavor, h.Directory, raw); ok {
				if _, err := stat(anchored); err == nil {
					newArgs := make(map[string]any, len(args))
					for k, v := range args {
						newArgs[k] = v
					}
					newArgs["path"] = anchored
					out.Args = newArgs
					raw = anchored
				}
			}
		}
	}
	resolved := resolvePath(flavor, h.Generation, tool, h.Directory, h.Cwd, raw)
	target := resolved
	if !flavor.IsAbs(target) && h.Cwd != "" {
		// A relative directory joined by v1 grep stays relative; the host
		// stats it from its own working directory. Keep a trailing
		// separator: it is what makes "file.txt/" fail with ENOTDIR.
		target = strings.TrimRight(h.Cwd, flavor.Sep()) + flavor.Sep() + target
	}
	_, err := stat(target)
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, syscall.ENOTDIR):
		return Outcome{Block: invalidMessage(tool, resolved, raw)}, nil
	case errors.Is(err, fs.ErrNotExist):
		return Outcome{Block: missingMessage(tool, resolved, raw)}, nil
	default:
		// Permission problems, loops, names too long: not evidence that the
		// path is wrong, so the search goes ahead.
		return out, fmt.Errorf("search path pre-check: stat %s: %w", target, err)
	}
}

// resolvePath makes raw absolute the way the host's tool does: an absolute
// raw path is used as given; v2 hosts and glob use path.resolve(directory,
// raw) (against cwd when directory is relative); v1 grep uses
// path.join(directory, raw), which keeps a relative directory relative and
// keeps a trailing separator.
func resolvePath(flavor hostpath.Flavor, generation, tool, directory, cwd, raw string) string {
	if flavor.IsAbs(raw) {
		return raw
	}
	if generation == "v2" || tool == "glob" {
		return flavor.Resolve(cwd, directory, raw)
	}
	return flavor.Join(directory, raw)
}

func isMissing(err error) bool {
	return err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR))
}

// reanchor moves a stale absolute path onto directory: it finds the longest
// trailing run of directory's components that occurs exactly once in raw,
// and returns directory followed by whatever comes after that run in raw.
func reanchor(flavor hostpath.Flavor, directory, raw string) (string, bool) {
	dirParts := components(flavor, flavor.Normalize(directory))
	rawParts := components(flavor, flavor.Normalize(raw))
	if len(dirParts) == 0 || len(rawParts) == 0 {
		return "", false
	}
	eq := func(a, b string) bool { return a == b }
	if flavor.Concrete() == hostpath.Win32 {
		eq = strings.EqualFold
	}
	for n := len(dirParts); n >= 1; n-- {
		run := dirParts[len(dirParts)-n:]
		at, count := -1, 0
		for i := 0; i+n <= len(rawParts); i++ {
			match := true
			for j := range run {
				if !eq(rawParts[i+j], run[j]) {
					match = false
					break
				}
			}
			if match {
				at = i
				count++
			}
		}
		if count == 0 {
			continue
		}
		if count > 1 {
			return "", false
		}
		rest := rawParts[at+n:]
		return flavor.Join(append([]string{directory}, rest...)...), true
	}
	return "", false
}

// components splits an absolute path below its root into names, dropping
// the root (a drive, a UNC share or "/").
func components(flavor hostpath.Flavor, p string) []string {
	var out []string
	start := 0
	if flavor.Concrete() == hostpath.Win32 {
		// Skip the root: "C:\", "\\server\share\" or "\".
		root := winRootLen(p)
		start = root
	}
	for _, c := range strings.FieldsFunc(p[start:], func(r rune) bool { return r < 0x80 && flavor.IsSep(byte(r)) }) {
		if c != "." {
			out = append(out, c)
		}
	}
	return out
}

// winRootLen returns the length of the root of a normalized win32 path.
func winRootLen(p string) int {
	isSep := func(c byte) bool { return c == '\\' || c == '/' }
	if len(p) >= 2 && isSep(p[0]) && isSep(p[1]) {
		// UNC: \\server\share\
		n := 2
		for part := 0; part < 2 && n < len(p); part++ {
			for n < len(p) && !isSep(p[n]) {
				n++
			}
			if n < len(p) {
				n++
			}
		}
		return n
	}
	if len(p) >= 2 && p[1] == ':' {
		if len(p) >= 3 && isSep(p[2]) {
			return 3
		}
		return 2
	}
	if len(p) >= 1 && isSep(p[0]) {
		return 1
	}
	return 0
}

// missingMessage is the block message for a search path that does not
// exist. The leading phrase is what models key on; the rest says what
// happened and what to do.
func missingMessage(tool, resolved, raw string) string {
	return fmt.Sprintf("Search path does not exist: %s (from \"%s\"). slim stopped this %s call before it ran, "+
		"because searching a missing path would fail or silently search somewhere else. "+
		"Check the spelling, list the parent directory to see what is there, "+
		"or leave out the path to search the whole project.", resolved, raw, tool)
}

// invalidMessage is the block message when a component of the search path
// is a file where a directory is needed (ENOTDIR).
func invalidMessage(tool, resolved, raw string) string {
	return fmt.Sprintf("Search path is invalid: %s (from \"%s\"). One of its parent components is a file, not a directory (ENOTDIR), "+
		"so slim stopped this %s call before it ran. "+
		"Point the path at a directory (or at the file itself for grep), checking each component of the path.", resolved, raw, tool)
}
