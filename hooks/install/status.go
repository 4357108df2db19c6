package install

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	gitshim "github.com/slimgate/slim/hooks/git"
	"github.com/slimgate/slim/hooks/githook"
	"github.com/slimgate/slim/hooks/opencode"
)

// States of an installed file (Status.State), as `slim doctor` reports
// them. Nothing is changed to find them out.
const (
	StateCurrent  = "current"  // slim's file, byte for byte what this slim writes
	StateOutdated = "outdated" // slim's file from another version; install again to upgrade it
	StateAbsent   = "absent"   // nothing there
	StateForeign  = "foreign"  // a file slim did not write (or a link, or not a regular file)
)

// Status is the state of one file slim installs.
type Status struct {
	Kind  string `json:"kind"` // "opencode" or "git"
	Path  string `json:"path"`
	State string `json:"state"`
	Note  string `json:"note,omitempty"`
}

// PluginStatus reports on the plugin file at path (see OpenCodePath).
func PluginStatus(path string) (Status, error) {
	s := Status{Kind: "opencode", Path: path}
	b, err := readRegular(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.State = StateAbsent
	case isNotRegular(err):
		s.State, s.Note = StateForeign, "not a regular file (a link or a directory); slim neither reads nor replaces it"
	case err != nil:
		return s, fmt.Errorf("plugin status: %w", err)
	case bytes.Equal(b, opencode.Plugin):
		s.State = StateCurrent
	case isOurPlugin(b):
		s.State, s.Note = StateOutdated, "written by another slim version; slim hooks install --opencode upgrades it"
	default:
		s.State, s.Note = StateForeign, "not written by slim"
	}
	return s, nil
}

// GitStatus reports on slim's shims in hooksDir (see GitHooksDir), one
// Status per hook slim installs. A shim that is not executable does not
// run, and a hook moved aside for the shim to chain is named in the note.
func GitStatus(hooksDir string) ([]Status, error) {
	var out []Status
	for _, name := range githook.Hooks {
		path := filepath.Join(hooksDir, name)
		s := Status{Kind: "git", Path: path}
		b, err := readRegular(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.State = StateAbsent
		case isNotRegular(err):
			s.State, s.Note = StateForeign, "not a regular file"
		case err != nil:
			return out, fmt.Errorf("git hook status: %w", err)
		case !isOurShim(b):
			s.State, s.Note = StateForeign, "a hook slim did not write; slim hooks install --git moves it aside and runs it first"
		default:
			s.State = StateOutdated
			if bytes.Equal(b, gitshim.Shim(name)) {
				s.State = StateCurrent
			} else {
				s.Note = "written by another slim version; slim hooks install --git upgrades it"
			}
			if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o111 == 0 {
				s.State, s.Note = StateOutdated, "not executable, so git does not run it; slim hooks install --git repairs it"
			}
			if exists(path + gitshim.ChainSuffix) {
				if s.Note != "" {
					s.Note += "; "
				}
				s.Note += "runs the previous hook " + name + gitshim.ChainSuffix + " first"
			}
		}
		out = append(out, s)
	}
	return out, nil
}
