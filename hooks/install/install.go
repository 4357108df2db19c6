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
	"github.com/slimgate/slim/internal/slimerr"
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

// CodeForeignFile is the error code when installing would overwrite a file
// slim did not write.
const CodeForeignFile = "foreign_file"

// Result is what happened to one file.
type Result struct {
	Kind   string `json:"kind"` // "opencode" or "git"
	Path   string `json:"path"`
	Action string `json:"action"`
	Note   string `json:"note,omitempty"`
}

// ProjectTop returns the directory that holds the project's .opencode
// folder: the git worktree top level of dir, or dir itself outside git.
func ProjectTop(dir string) (string, error) {
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
// (~/.config/opencode/plugin/slim.js when XDG_CONFIG_HOME is unset).
func OpenCodePath(dir string, global bool, getenv func(string) string) (string, error) {
	if global {
		base := getenv("XDG_CONFIG_HOME")
		if base == "" {
			home := getenv("HOME")
			if home == "" {
				h, err := os.UserHomeDir()
				if err != nil {
					return "", fmt.Errorf("global plugin directory: no XDG_CONFIG_HOME and no home directory: %w", err)
				}
				home = h
			}
			base = filepath.Join(home, ".config")
		}
		return filepath.Join(base, "opencode", "plugin", "slim.js"), nil
	}
	top, err := ProjectTop(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(top, ".opencode", "plugin", "slim.js"), nil
}

// InstallOpenCode writes the embedded plugin to path. It is idempotent,
// upgrades a file an older slim wrote and refuses to overwrite anything else.
func InstallOpenCode(path string) (Result, error) {
	r := Result{Kind: "opencode", Path: path}
	old, err := readRegular(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
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
		return r, slimerr.New(slimerr.Blocked, CodeForeignFile,
			"%s exists and was not written by slim; it was left untouched. Move it away (or merge it by hand) and run the install again", path)
	}
	if err := atomicfile.WriteFile(path, opencode.Plugin, 0o644); err != nil {
		return r, fmt.Errorf("install plugin: %w", err)
	}
	return r, nil
}

// UninstallOpenCode removes the plugin at path if slim wrote it, then the
// plugin folder and its parent when they are left empty.
func UninstallOpenCode(path string) (Result, error) {
	r := Result{Kind: "opencode", Path: path}
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
	// Folders the install may have created; os.Remove fails on non-empty ones.
	pluginDir := filepath.Dir(path)
	if os.Remove(pluginDir) == nil {
		os.Remove(filepath.Dir(pluginDir))
	}
	r.Action = Removed
	return r, nil
}

func isOurPlugin(b []byte) bool { return bytes.HasPrefix(b, []byte(opencode.Marker)) }

// GitHooksDir asks git where the hooks of the repository containing dir
// live: core.hooksPath when set (relative values taken from the worktree
// top), else <common git dir>/hooks, which every linked worktree shares.
func GitHooksDir(dir string) (string, error) {
	out, err := gitOutput(dir, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return "", slimerr.New(slimerr.Usage, slimerr.CodeUsage, "%s is not inside a git repository (or git is not installed): %v", dir, err)
	}
	return filepath.FromSlash(out), nil
}

// isOurShim reports whether b is a shim slim wrote (any version).
func isOurShim(b []byte) bool {
	first, rest, _ := bytes.Cut(b, []byte("\n"))
	second, _, _ := bytes.Cut(rest, []byte("\n"))
	return bytes.HasPrefix(first, []byte("#!")) && bytes.HasPrefix(second, []byte(gitshim.Marker))
}

// InstallGit writes the shims into hooksDir. A hook slim did not write is
// moved aside to <name>.pre-slim and chained. It refuses (and changes
// nothing for that hook) when both a foreign hook and a moved-aside hook
// already exist.
func InstallGit(hooksDir string) ([]Result, error) {
	if err := os.MkdirAll(hooksDir, 0o755); err != nil {
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
			return r, slimerr.New(slimerr.Blocked, CodeForeignFile,
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
func UninstallGit(hooksDir string) ([]Result, error) {
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

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// gitOutput runs git in dir and returns its trimmed stdout.
func gitOutput(dir string, args ...string) (string, error) {
	out, err := gitexec.Output(dir, args...)
	return strings.TrimSpace(out), err
}
