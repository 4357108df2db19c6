package astgrep

import (
	"context"
	"fmt"
	"github.com/slimgate/slim/internal/extprog"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// InstallHint is what a missing ast-grep error tells the user to do.
const InstallHint = "install it with `npm install -g @ast-grep/cli` (or put the ast-grep binary on PATH, or point SLIM_AST_GREP at it)"

// DefaultVersionTimeout bounds the `--version` probe of a candidate.
const DefaultVersionTimeout = 5 * time.Second

// LocateOptions say where Locate looks, in this order: Explicit, ast-grep
// on Path, ast-grep in each of NodeBins (and the platform package beside
// it), then sg on Path if it says it is ast-grep.
type LocateOptions struct {
	// Explicit is a binary the user named (SLIM_AST_GREP); when set, it is
	// the only candidate.
	Explicit string
	// Path is the PATH list to search (os.PathListSeparator-separated).
	Path string
	// NodeBins are node_modules/.bin directories to look in, such as the
	// ones the OpenCode plugin passes for the project.
	NodeBins []string
	// VersionTimeout bounds each `--version` probe; 0 means
	// DefaultVersionTimeout.
	VersionTimeout time.Duration
}

// Binary is a located ast-grep.
type Binary struct {
	Path string `json:"path"`
	// Version is the first line of `--version` when it was probed ("" when
	// the binary was taken by its name alone).
	Version string `json:"version,omitempty"`
	// Source says how it was found: "SLIM_AST_GREP", "PATH",
	// "node_modules" or "sg on PATH".
	Source string `json:"source"`
}

// Locate finds the ast-grep binary. The name sg is only accepted after
// `sg --version` printed a line starting with "ast-grep": on Debian and
// its derivatives /usr/bin/sg is newgrp, which must never be run with
// anything else. A binary that is not found is an *Error of kind Missing
// whose message says how to install one.
func Locate(opts LocateOptions) (Binary, error) {
	if opts.Explicit != "" {
		p := opts.Explicit
		if !strings.ContainsRune(p, filepath.Separator) && !strings.ContainsRune(p, '/') {
			if found, err := extprog.Look(p, opts.Path); err == nil {
				p = found
			}
		}
		if extprog.Executable(p) != nil {
			return Binary{}, newErr(Missing, CodeNotInstalled,
				fmt.Sprintf("ast-grep not found: SLIM_AST_GREP names %s, which is not an executable file; fix the variable or unset it, or %s", opts.Explicit, InstallHint), nil)
		}
		// A binary named sg is held to the same test as sg on PATH, even
		// when named: Debian's sg is newgrp.
		if isSg(p) {
			v, ok := probeVersion(p, opts.VersionTimeout)
			if !ok {
				return Binary{}, newErr(Missing, CodeNotInstalled,
					fmt.Sprintf("ast-grep not found: SLIM_AST_GREP names %s, whose --version does not say ast-grep (on Debian and its derivatives sg is newgrp); point it at the ast-grep binary, or %s", opts.Explicit, InstallHint), nil)
			}
			return Binary{Path: p, Version: v, Source: "SLIM_AST_GREP"}, nil
		}
		return Binary{Path: p, Source: "SLIM_AST_GREP"}, nil
	}
	if p, err := extprog.Look("ast-grep", opts.Path); err == nil {
		return Binary{Path: p, Source: "PATH"}, nil
	}
	for _, dir := range opts.NodeBins {
		if dir == "" {
			continue
		}
		for _, p := range nodeCandidates(dir) {
			if extprog.Executable(p) == nil {
				return Binary{Path: p, Source: "node_modules"}, nil
			}
		}
	}
	if p, err := extprog.Look("sg", opts.Path); err == nil {
		if v, ok := probeVersion(p, opts.VersionTimeout); ok {
			return Binary{Path: p, Version: v, Source: "sg on PATH"}, nil
		}
	}
	return Binary{}, newErr(Missing, CodeNotInstalled, "ast-grep not found: slim runs the ast-grep binary for structural search and replace; "+InstallHint, nil)
}

// nodeCandidates are the binaries to try in a node_modules/.bin directory:
// ast-grep itself, then the binary of the per-platform package the npm
// package @ast-grep/cli installs beside it.
func nodeCandidates(dir string) []string {
	out := []string{filepath.Join(dir, exeName("ast-grep"))}
	pkgs, _ := filepath.Glob(filepath.Join(dir, "..", "@ast-grep", "cli-*", exeName("ast-grep")))
	sort.Strings(pkgs)
	return append(out, pkgs...)
}

// probeVersion runs bin --version (bounded, stdin closed, with a timeout)
// and reports its first output line and whether that names ast-grep.
func probeVersion(bin string, timeout time.Duration) (string, bool) {
	if timeout <= 0 {
		timeout = DefaultVersionTimeout
	}
	line, err := extprog.Version(context.Background(), bin, []string{"--version"}, timeout)
	return line, err == nil && strings.HasPrefix(line, "ast-grep")
}

// isSg reports whether p's file name is sg (sg.exe on Windows).
func isSg(p string) bool {
	base := filepath.Base(p)
	if runtime.GOOS == "windows" {
		base = strings.TrimSuffix(strings.ToLower(base), ".exe")
	}
	return base == "sg"
}

func exeName(base string) string {
	if runtime.GOOS == "windows" {
		return base + ".exe"
	}
	return base
}
