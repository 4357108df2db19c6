// Package install writes and removes the files that connect slim to its
// callers: the thin OpenCode plugin (.opencode/plugin/slim.js, or the global
// copy under the user's config directory) and the git hook shims
// (pre-commit, pre-applypatch) in a repository's hooks directory.
//
// Every file slim writes carries a marker line, so the installer recognises
// its own files (and upgrades older versions of them) and never overwrites
// or removes a file it did not write. An existing git hook is moved aside to
// <name>.pre-slim and run by the shim first; uninstalling moves it back.
// All writes are atomic.
//
// Inside the repository the installer never follows a symbolic link: every
// directory and file it creates, overwrites or removes there (.opencode,
// its plugin folder and slim.js; the hooks directory, wherever
// core.hooksPath puts it inside the worktree or the git directory) must be
// a real directory or file, or missing. A link on the way is refused with a
// blocked error (code CodeSymlink) that names it, before anything is
// written, so a repository cannot steer the install to a directory outside
// it. A git hook that is itself a link is moved aside as a link and chained
// like any other hook; nothing is written through it. Paths from the user's
// own configuration outside the repository (the global plugin under
// $XDG_CONFIG_HOME, an absolute core.hooksPath elsewhere) are the user's
// choice: links among their directories are followed, but the plugin file
// itself must still not be a link.
package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	gitshim "github.com/slimgate/slim/hooks/git"
	"github.com/slimgate/slim/hooks/githook"
	"github.com/slimgate/slim/hooks/opencode"
	"github.com/slimgate/slim/internal/atomicfile"
	"github.com/slimgate/slim/internal/gitexec"
)

// Actions reported for each file.
const (
	Created   = "created"   // the file did not exist and was written
	Upgraded  = "upgraded"  // an older slim-written version was replaced
	Unchanged = "unchanged" // the file already had exactly these bytes
	Chained   = "chained"   // a foreign git hook was moved aside and is run by the shim
	Removed   = "removed"   // a slim-written file was deleted
	Restored  = "restored"  // a slim shim was deleted and the moved-aside hook put back
	Absent    = "absent"    // nothing of slim's was there
	Foreign   = "foreign"   // a file slim did not write is there; it was left alone
)

// Error is a refusal of the installer, before anything was written: Code
// says which (CodeForeignFile, CodeSymlink, CodeNotRepository) and Message
// is the whole sentence for the user.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }

func (e *Error) Unwrap() error { return e.Err }

func refuse(code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeNotRepository is the error code when git hooks are asked for outside
// a git repository (or without git).
const CodeNotRepository = "not_a_repository"

// CodeForeignFile is the error code when installing would overwrite a file
// slim did not write.
const CodeForeignFile = "foreign_file"

// CodeSymlink is the error code when a path the installer would write or
// remove goes through a symbolic link where links are refused.
const CodeSymlink = "symlink"

// Result is what happened to one file.
type Result struct {
	Kind   string `json:"kind"` // "opencode" or "git"
	Path   string `json:"path"`
	Action string `json:"action"`
	Note   string `json:"note,omitempty"`
}

// projectTop returns the directory that holds the project's .opencode
// folder: the git worktree top level of dir, or dir itself outside git.
func projectTop(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project directory %s: %w", dir, err)
	}
	out, err := gitOutput(abs, "rev-parse", "--show-toplevel")
	if err != nil || out == "" {
		return abs, nil
	}
	return filepath.FromSlash(out), nil
}

// OpenCodePath returns where the plugin goes: <project top>/.opencode/plugin/
// slim.js, or with global $XDG_CONFIG_HOME/opencode/plugin/slim.js
// (~/.config/opencode/plugin/slim.js when XDG_CONFIG_HOME is unset). guard
// is the directory below which the installer refuses symbolic links (see
// OpenCode): the project top, or "" for the global plugin.
func OpenCodePath(dir string, global bool, getenv func(string) string) (path, guard string, err error) {
	if global {
		base := getenv("XDG_CONFIG_HOME")
		if base == "" {
			home := getenv("HOME")
			if home == "" {
				h, err := os.UserHomeDir()
				if err != nil {
					return "", "", fmt.Errorf("global plugin directory: no XDG_CONFIG_HOME and no home directory: %w", err)
				}
				home = h
			}
			base = filepath.Join(home, ".config")
		}
		return filepath.Join(base, "opencode", "plugin", "slim.js"), "", nil
	}
	top, err := projectTop(dir)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(top, ".opencode", "plugin", "slim.js"), top, nil
}

// OpenCode writes the embedded plugin to path. It is idempotent,
// upgrades a file an older slim wrote and refuses to overwrite anything else.
// When guard is not "", every component of path below guard (the folders
// and the file) must be a real directory or file, or missing: a symbolic
// link is refused (CodeSymlink) and nothing is written. With guard "" the
// folders are taken as they are and only the file itself may not be a link.
func OpenCode(path, guard string) (Result, error) {
	r := Result{Kind: "opencode", Path: path}
	if err := checkLinks(guard, path, "written"); err != nil {
		return r, err
	}
	if err := refuseLink(path, "written"); err != nil {
		return r, err
	}
	old, err := readRegular(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := mkdirs(guard, filepath.Dir(path)); err != nil {
			return r, fmt.Errorf("install plugin: %w", err)
		}
		r.Action = Created
	case err != nil && !isNotRegular(err):
		return r, err
	case err == nil && bytes.Equal(old, opencode.Plugin):
		r.Action = Unchanged
		return r, nil
	case err == nil && isOurPlugin(old):
		r.Action = Upgraded
	default:
		return r, refuse(CodeForeignFile,
			"%s exists and was not written by slim; it was left untouched. Move it away (or merge it by hand) and run the install again", path)
	}
	if err := atomicfile.WriteFile(path, opencode.Plugin, 0o644); err != nil {
		return r, fmt.Errorf("install plugin: %w", err)
	}
	return r, nil
}

// UninstallOpenCode removes the plugin at path if slim wrote it, then the
// plugin folder and its parent when they are left empty (and are real
// directories, not links). guard is as for OpenCode: a link among
// the folders below it is refused and nothing is removed; a link in the
// plugin's place is reported as foreign and left alone.
func UninstallOpenCode(path, guard string) (Result, error) {
	r := Result{Kind: "opencode", Path: path}
	if err := checkLinks(guard, filepath.Dir(path), "removed"); err != nil {
		return r, err
	}
	old, err := readRegular(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Action = Absent
		return r, nil
	case err != nil && !isNotRegular(err):
		return r, err
	case err != nil || !isOurPlugin(old):
		r.Action = Foreign
		r.Note = "not written by slim; left alone"
		return r, nil
	}
	if err := os.Remove(path); err != nil {
		return r, fmt.Errorf("uninstall plugin: %w", err)
	}
	// Folders the install may have created; os.Remove fails on non-empty
	// ones, but would delete a link, so links are skipped.
	pluginDir := filepath.Dir(path)
	if removeEmptyDir(pluginDir) {
		removeEmptyDir(filepath.Dir(pluginDir))
	}
	r.Action = Removed
	return r, nil
}

func isOurPlugin(b []byte) bool { return bytes.HasPrefix(b, []byte(opencode.Marker)) }

// GitHooksDir asks git where the hooks of the repository containing dir
// live: core.hooksPath when set (relative values taken from the worktree
// top), else <common git dir>/hooks, which every linked worktree shares.
//
// The path is built from git's answers as spelled, without resolving
// links, so that a link on the way can still be seen. guard is the
// repository directory the hooks directory lies in (the common git dir, else
// the worktree top), below which Git refuses symbolic links; it is ""
// when core.hooksPath points outside the repository, a place of the user's
// own choosing.
func GitHooksDir(dir string) (hooks, guard string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("git hooks directory of %s: %w", dir, err)
	}
	out, err := gitexec.Output(abs, "rev-parse", "--is-inside-work-tree", "--show-cdup", "--git-common-dir", "--git-path", "hooks")
	if err != nil {
		return "", "", refuse(CodeNotRepository, "%s is not inside a git repository (or git is not installed): %v", dir, err)
	}
	// In a worktree: true, the way up to its top (maybe empty), the common
	// git dir, the hooks path. Elsewhere (a bare repository, inside the git
	// dir): false and the last two.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	inWorktree := len(lines) == 4 && lines[0] == "true"
	if !inWorktree && (len(lines) != 3 || lines[0] != "false") {
		return "", "", fmt.Errorf("git hooks directory of %s: unexpected answer from git rev-parse: %q", dir, out)
	}
	at := func(p string) string {
		p = filepath.FromSlash(p)
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(abs, p)
	}
	n := len(lines)
	hooks, common := at(lines[n-1]), at(lines[n-2])
	bases := []string{common}
	if inWorktree {
		bases = append(bases, at(lines[1]))
	}
	// The same directories as their real paths, for a core.hooksPath
	// spelled that way.
	spelled := bases
	for _, b := range spelled {
		if real, err := filepath.EvalSymlinks(b); err == nil && real != b {
			bases = append(bases, real)
		}
	}
	for _, b := range bases {
		if under(b, hooks) {
			return hooks, b, nil
		}
	}
	return hooks, "", nil
}

// under reports whether p is base or lies below it, by spelling.
func under(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// isOurShim reports whether b is a shim slim wrote (any version).
func isOurShim(b []byte) bool {
	first, rest, _ := bytes.Cut(b, []byte("\n"))
	second, _, _ := bytes.Cut(rest, []byte("\n"))
	return bytes.HasPrefix(first, []byte("#!")) && bytes.HasPrefix(second, []byte(gitshim.Marker))
}

// Git writes the shims into hooksDir. A hook slim did not write is
// moved aside to <name>.pre-slim and chained. It refuses (and changes
// nothing for that hook) when both a foreign hook and a moved-aside hook
// already exist. When guard is not "", a symbolic link among the
// directories from guard down to hooksDir is refused (CodeSymlink) before
// anything is written; a hook that is a link is moved aside, link and all.
func Git(hooksDir, guard string) ([]Result, error) {
	if err := checkLinks(guard, hooksDir, "written"); err != nil {
		return nil, err
	}
	if err := mkdirs(guard, hooksDir); err != nil {
		return nil, fmt.Errorf("install git hooks: %w", err)
	}
	var results []Result
	for _, name := range githook.Hooks {
		r, err := installShim(hooksDir, name)
		results = append(results, r)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

func installShim(hooksDir, name string) (Result, error) {
	path := filepath.Join(hooksDir, name)
	aside := path + gitshim.ChainSuffix
	shim := gitshim.Shim(name)
	r := Result{Kind: "git", Path: path}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Action = Created
		if exists(aside) {
			r.Note = "chains the existing " + name + gitshim.ChainSuffix
		}
	case err != nil:
		return r, fmt.Errorf("install git hook %s: %w", name, err)
	default:
		var old []byte
		if fi.Mode().IsRegular() {
			if old, err = os.ReadFile(path); err != nil {
				return r, fmt.Errorf("install git hook %s: %w", name, err)
			}
		}
		if old != nil && isOurShim(old) {
			if bytes.Equal(old, shim) && fi.Mode().Perm()&0o111 != 0 {
				r.Action = Unchanged
				return r, nil
			}
			r.Action = Upgraded
			break
		}
		if exists(aside) {
			return r, refuse(CodeForeignFile,
				"%s is not slim's shim and %s already exists, so the hook cannot be moved aside; nothing was changed for %s. Merge or remove one of them and run the install again",
				path, aside, name)
		}
		if err := os.Rename(path, aside); err != nil {
			return r, fmt.Errorf("install git hook %s: move the existing hook aside: %w", name, err)
		}
		r.Action = Chained
		r.Note = "the previous hook now lives in " + aside + " and runs first"
		if err := atomicfile.WriteFile(path, shim, 0o755); err != nil {
			if rerr := os.Rename(aside, path); rerr != nil {
				err = fmt.Errorf("%w (and moving the old hook back failed: %v)", err, rerr)
			}
			return r, fmt.Errorf("install git hook %s: %w", name, err)
		}
		return r, nil
	}
	if err := atomicfile.WriteFile(path, shim, 0o755); err != nil {
		return r, fmt.Errorf("install git hook %s: %w", name, err)
	}
	return r, nil
}

// UninstallGit removes slim's shims from hooksDir and moves chained hooks
// back under their own names. Hooks slim did not write are left alone.
// guard is as for Git: a link on the way is refused and nothing is
// removed.
func UninstallGit(hooksDir, guard string) ([]Result, error) {
	if err := checkLinks(guard, hooksDir, "removed"); err != nil {
		return nil, err
	}
	var results []Result
	for _, name := range githook.Hooks {
		path := filepath.Join(hooksDir, name)
		aside := path + gitshim.ChainSuffix
		r := Result{Kind: "git", Path: path}
		old, err := readRegular(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.Action = Absent
			if exists(aside) {
				r.Note = aside + " exists but no slim shim does; left alone"
			}
			results = append(results, r)
			continue
		case err != nil && !isNotRegular(err):
			return append(results, r), fmt.Errorf("uninstall git hook %s: %w", name, err)
		case err != nil || !isOurShim(old):
			r.Action = Foreign
			r.Note = "not written by slim; left alone"
			results = append(results, r)
			continue
		}
		if exists(aside) {
			// Rename over the shim: the hook is never missing in between.
			if err := os.Rename(aside, path); err != nil {
				return append(results, r), fmt.Errorf("uninstall git hook %s: restore %s: %w", name, aside, err)
			}
			r.Action = Restored
		} else {
			if err := os.Remove(path); err != nil {
				return append(results, r), fmt.Errorf("uninstall git hook %s: %w", name, err)
			}
			r.Action = Removed
		}
		results = append(results, r)
	}
	return results, nil
}

var errNotRegular = errors.New("not a regular file")

func isNotRegular(err error) bool { return errors.Is(err, errNotRegular) }

// readRegular reads path if it is a regular file (symlinks are not followed).
func readRegular(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// checkLinks refuses a symbolic link at any existing component of target
// below guard (target included), naming the link; what is missing is fine,
// it will be created. With guard "" nothing is checked. done says what did
// not happen ("written", "removed") for the message.
func checkLinks(guard, target, done string) error {
	if guard == "" {
		return nil
	}
	rel, err := filepath.Rel(guard, target)
	if err != nil || !under(guard, target) {
		return fmt.Errorf("%s is not below %s", target, guard)
	}
	p := guard
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return linkError(p, done)
		}
	}
	return nil
}

// refuseLink refuses a symbolic link at p itself.
func refuseLink(p, done string) error {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return linkError(p, done)
	}
	return nil
}

func linkError(p, done string) error {
	to, err := os.Readlink(p)
	if err != nil {
		to = "?"
	}
	return refuse(CodeSymlink,
		"%s is a symbolic link (to %s); slim does not follow links inside the repository, so nothing was %s. Replace the link with a real directory or file (or remove it) and run the command again",
		p, to, done)
}

// mkdirs creates dir and its missing parents (mode 0755). Below guard each
// directory is created one at a time and checked not to be a link, so a
// link that appears after checkLinks is still not followed; above guard,
// or with guard "", the path is created as os.MkdirAll does.
func mkdirs(guard, dir string) error {
	if guard == "" {
		return os.MkdirAll(dir, 0o755)
	}
	if err := os.MkdirAll(guard, 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(guard, dir)
	if err != nil {
		return err
	}
	p := guard
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		p = filepath.Join(p, part)
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return linkError(p, "written")
		case !fi.IsDir():
			return fmt.Errorf("%s is not a directory", p)
		}
	}
	return nil
}

// removeEmptyDir removes p if it is a real, empty directory, and reports
// whether it did. A link is never removed, even one to an empty directory.
func removeEmptyDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir() && os.Remove(p) == nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// gitOutput runs git in dir and returns its trimmed stdout.
func gitOutput(dir string, args ...string) (string, error) {
	out, err := gitexec.Output(dir, args...)
	return strings.TrimSpace(out), err
}

// openCodeSettings is the settings file of the OpenCode plugin: it lies
// beside slim.js, and the plugin reads it once when it loads. Its "apply"
// key turns apply mode on (the plugin's own apply_patch tool, which slim
// applies itself). The file carries the installer's marker as a key, since
// JSON has no comments.
const openCodeSettingsName = "slim.json"

var openCodeSettings = []byte("{\n  \"slim-managed\": \"settings of the slim OpenCode plugin (written by `slim hooks install --opencode --apply`)\",\n  \"apply\": true\n}\n")

func isOurSettings(b []byte) bool { return bytes.Contains(b, []byte(`"slim-managed"`)) }

// OpenCodeSettings makes the settings file beside the plugin at path say
// what apply asks: with apply it is written ({"apply": true}); without it a
// settings file slim wrote is removed, so that the install command line is
// the whole of the plugin's settings. A file slim did not write is never
// overwritten or removed (CodeForeignFile on install; left alone and noted
// on removal). guard is as for OpenCode.
func OpenCodeSettings(path, guard string, apply bool) (Result, error) {
	file := filepath.Join(filepath.Dir(path), openCodeSettingsName)
	r := Result{Kind: "opencode-settings", Path: file}
	if err := checkLinks(guard, file, "written"); err != nil {
		return r, err
	}
	if err := refuseLink(file, "written"); err != nil {
		return r, err
	}
	old, err := readRegular(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !apply {
			return r, nil // nothing to say: apply mode was never on
		}
		r.Action = Created
	case err != nil && !isNotRegular(err):
		return r, err
	case err == nil && isOurSettings(old):
		if !apply {
			if err := os.Remove(file); err != nil {
				return r, fmt.Errorf("apply mode off: %w", err)
			}
			r.Action, r.Note = Removed, "apply mode off"
			return r, nil
		}
		if bytes.Equal(old, openCodeSettings) {
			r.Action, r.Note = Unchanged, "apply mode on"
			return r, nil
		}
		r.Action = Upgraded
	default:
		if !apply {
			r.Action, r.Note = Foreign, "not written by slim; left alone, and the plugin reads it"
			return r, nil
		}
		return r, refuse(CodeForeignFile,
			"%s exists and was not written by slim; it was left untouched. Move it away and run the install again", file)
	}
	if err := atomicfile.WriteFile(file, openCodeSettings, 0o644); err != nil {
		return r, fmt.Errorf("apply mode on: %w", err)
	}
	r.Note = "apply mode on"
	return r, nil
}
