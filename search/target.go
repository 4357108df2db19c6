package search

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/slimgate/slim/worktree"
)

// TargetOptions say where a search may look.
type TargetOptions struct {
	// Directory is the project (session) directory, absolute: relative
	// paths resolve against it, an empty path means it, and a stale
	// absolute path is re-anchored on it.
	Directory string
	// Guard, when set, decides containment: a path outside the area it
	// guards (the session directory plus its worktree) is refused, and so
	// is a path inside the git directory. Build it with AllowNested: a
	// nested worktree or submodule below the project may be read (a search
	// of the whole project descends into it anyway).
	Guard *worktree.Guard
	// AllowOutside lets a path outside the area be searched; the git
	// directory stays refused.
	AllowOutside bool
}

// Target is a resolved search path.
type Target struct {
	Input string `json:"input"` // the path as given ("" for the project directory)
	Path  string `json:"path"`  // absolute (after re-anchoring)
	// Dir is the directory the search runs in: Path, or its parent when
	// Path is a file (grep only).
	Dir string `json:"dir"`
	// File is Path's base name when Path is a file, else "".
	File string `json:"file,omitempty"`
	// Reanchored is set when Input was a stale absolute path that was moved
	// onto the project directory.
	Reanchored bool `json:"reanchored,omitempty"`
	// Outside is set when the path lies outside the area and AllowOutside
	// let it through.
	Outside bool `json:"outside,omitempty"`
	// Notes say what the caller may want to tell the user (re-anchoring,
	// a path that could not be checked).
	Notes []string `json:"notes,omitempty"`
}

// ResolveTarget turns the path a grep or glob call names into the place to
// search, the way the host resolves it, and refuses what the host would
// turn into a silent wrong-scope search or an opaque failure:
//
//   - a stale absolute path (a project that moved) is re-anchored on the
//     project directory when the re-anchored path exists;
//   - a missing path, or one with a file where a directory must be, is a
//     Verification error whose message starts "Search path does not
//     exist:" or "Search path is invalid:";
//   - a path outside the area (Guard) is Blocked unless AllowOutside, and a
//     path in the git directory is always Blocked;
//   - glob needs a directory; grep also takes a regular file.
func ResolveTarget(tool, raw string, o TargetOptions) (Target, error) {
	if o.Directory == "" || !filepath.IsAbs(o.Directory) {
		return Target{}, newErr(Usage, CodeUsage, fmt.Sprintf("%s: the project directory must be an absolute path, got %q", tool, o.Directory), nil)
	}
	t := Target{Input: raw}
	if raw != "" {
		platform := runtime.GOOS
		if platform == "windows" {
			platform = "win32"
		}
		out, err := Precheck(tool, map[string]any{"path": raw}, Host{Platform: platform, Directory: o.Directory, Cwd: o.Directory})
		if err != nil {
			t.Notes = append(t.Notes, fmt.Sprintf("the search path could not be checked before the search: %v", err))
		}
		if out.Args != nil {
			if p, ok := out.Args["path"].(string); ok {
				t.Notes = append(t.Notes, fmt.Sprintf("%s does not exist; searching %s, the same path inside this project, instead", raw, p))
				raw, t.Reanchored = p, true
			}
		}
		if out.Block != "" {
			code := CodePathMissing
			if _, err := os.Stat(absIn(o.Directory, raw)); errors.Is(err, syscall.ENOTDIR) {
				code = CodePathInvalid
			}
			return t, newErr(Verification, code, out.Block, nil)
		}
	}
	t.Path = absIn(o.Directory, raw)
	if o.Guard != nil {
		v := o.Guard.Check(t.Path)
		if !v.Inside {
			switch v.Code {
			case worktree.CodeInvalidPath:
				return t, newErr(Validation, CodeInvalidPath, fmt.Sprintf("%s: the search path %s cannot name a file: %s", tool, t.Path, v.Reason), nil)
			case worktree.CodeGitDir:
				return t, newErr(Blocked, CodeGitDir, fmt.Sprintf("%s blocked: the search path %s lies inside the repository's git directory, "+
					"which holds git's own data rather than the project's files. Ask git instead (git log, git show, git grep)", tool, t.Path), nil)
			case worktree.CodeNested:
				// Reading a nested worktree is harmless; the guard should
				// have been built to allow it, but a caller that did not is
				// not refused for a read.
			default:
				if !o.AllowOutside {
					target := v.Physical
					if target == "" || target == t.Path {
						target = ""
					} else {
						target = " (" + target + ")"
					}
					return t, newErr(Blocked, CodeOutside, fmt.Sprintf("%s blocked: the search path %s%s lies outside the workspace: %s. "+
						"Search inside the session directory and its worktree", tool, t.Path, target, v.Reason), nil)
				}
				t.Outside = true
			}
		}
	}
	fi, err := os.Stat(t.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return t, newErr(Verification, CodePathMissing, fmt.Sprintf("Search path does not exist: %s. Check the spelling, or list its parent directory to see what is there", t.Path), err)
		}
		return t, newErr(Verification, CodeNotSearchable, fmt.Sprintf("%s: the search path %s cannot be read: %v", tool, t.Path, err), err)
	}
	switch {
	case fi.IsDir():
		t.Dir = t.Path
	case fi.Mode().IsRegular() && tool == "grep":
		t.Dir, t.File = filepath.Dir(t.Path), filepath.Base(t.Path)
	case fi.Mode().IsRegular():
		return t, newErr(Verification, CodeNotDirectory, fmt.Sprintf("%s: the search path %s is a file, and glob matches names inside a directory. "+
			"Give its directory as the path, or use the file's name as the pattern", tool, t.Path), nil)
	default:
		return t, newErr(Verification, CodeNotSearchable, fmt.Sprintf("%s: the search path %s is neither a directory nor a regular file", tool, t.Path), nil)
	}
	return t, nil
}

// absIn makes p absolute against dir, cleaned.
func absIn(dir, p string) string {
	if p == "" {
		return filepath.Clean(dir)
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
