package search

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/slimgate/slim/internal/extprog"
)

// Where a ripgrep binary was found (Ripgrep.Source).
const (
	SourceExplicit = "explicit" // named by the caller (slim's SLIM_RG)
	SourcePath     = "path"     // the first rg on PATH
	SourceOpenCode = "opencode" // the copy OpenCode downloaded into its data directory
)

// Ripgrep is a ripgrep binary to run.
type Ripgrep struct {
	Path   string `json:"path"`
	Source string `json:"source"`
}

// FindOptions say where FindRipgrep looks, in its order.
type FindOptions struct {
	// Explicit is a binary the user named, a path or a name looked up on
	// PathList; when set, it must be usable and nothing else is tried. ExplicitFrom names where it came from in
	// messages (for example "SLIM_RG").
	Explicit     string
	ExplicitFrom string
	// PathList is the PATH to search for rg.
	PathList string
	// OpenCodeBin is the bin directory of OpenCode's bin directory
	// (typically ~/.local/share/opencode/bin), where OpenCode keeps the rg
	// it downloads when none is on PATH. It is only read, never written;
	// "" skips it.
	OpenCodeBin string
}

// FindRipgrep finds the ripgrep binary: the explicit one if given, else rg
// on PATH, else OpenCode's downloaded copy. It never downloads anything.
// The error is an *Error of kind Missing, whose message says how to
// install ripgrep.
func FindRipgrep(o FindOptions) (Ripgrep, error) {
	if o.Explicit != "" {
		from := o.ExplicitFrom
		if from == "" {
			from = "the configured ripgrep binary"
		}
		p := o.Explicit
		if !strings.ContainsAny(p, `/\`) {
			// A bare name is looked up on PATH.
			found, err := extprog.Look(p, o.PathList)
			if err != nil {
				return Ripgrep{}, newErr(Missing, CodeRgUnusable,
					fmt.Sprintf("ripgrep cannot be run: %s names %s, which is not on PATH. Give a path to an rg binary, or unset it to use the rg on PATH", from, p), err)
			}
			p = found
		} else if err := extprog.Executable(p); err != nil {
			return Ripgrep{}, newErr(Missing, CodeRgUnusable,
				fmt.Sprintf("ripgrep cannot be run: %s names %s, which is not an executable file (%v). Point it at an rg binary, or unset it to use the rg on PATH", from, p, err), err)
		}
		return Ripgrep{Path: p, Source: SourceExplicit}, nil
	}
	if p, err := extprog.Look("rg", o.PathList); err == nil {
		return Ripgrep{Path: p, Source: SourcePath}, nil
	}
	if o.OpenCodeBin != "" {
		name := "rg"
		if runtime.GOOS == "windows" {
			name = "rg.exe"
		}
		p := filepath.Join(o.OpenCodeBin, name)
		if extprog.Executable(p) == nil {
			return Ripgrep{Path: p, Source: SourceOpenCode}, nil
		}
	}
	where := "not on PATH"
	if o.OpenCodeBin != "" {
		where += " and not in OpenCode's bin directory (" + o.OpenCodeBin + ")"
	}
	return Ripgrep{}, newErr(Missing, CodeRgNotInstalled, "ripgrep (rg) was not found: it is "+where+". "+InstallHint, errors.New("rg not found"))
}

// InstallHint says how to install ripgrep on the common systems.
const InstallHint = "Install it with your package manager: `apt-get install ripgrep` (Debian, Ubuntu), " +
	"`dnf install ripgrep` (Fedora), `brew install ripgrep` (macOS), `winget install BurntSushi.ripgrep.MSVC` (Windows)"
