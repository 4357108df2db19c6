package astgrep

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
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
			if found := lookPath(p, opts.Path); found != "" {
				p = found
			}
		}
		if !isExecutable(p) {
			return Binary{}, newErr(Missing, CodeNotInstalled,
				fmt.Sprintf("ast-grep not found: SLIM_AST_GREP names %s, which is not an executable file; fix the variable or unset it, or %s", opts.Explicit, InstallHint), nil)
		}
		return Binary{Path: p, Source: "SLIM_AST_GREP"}, nil
	}
	if p := lookPath(exeName("ast-grep"), opts.Path); p != "" {
		return Binary{Path: p, Source: "PATH"}, nil
	}
	for _, dir := range opts.NodeBins {
		if dir == "" {
			continue
		}
		for _, p := range nodeCandidates(dir) {
			if isExecutable(p) {
				return Binary{Path: p, Source: "node_modules"}, nil
			}
		}
	}
	if p := lookPath(exeName("sg"), opts.Path); p != "" {
		if v, ok := probeVersion(p, opts.VersionTimeout); ok {
			return Binary{Path: p, Version: v, Source: "sg on PATH"}, nil
		}
	}
	return Binary{}, newErr(Missing, CodeNotInstalled, "ast-grep not found: slim runs the ast-grep binary for structural search and replace; "+InstallHint, nil)
}

// Version runs `bin --version` (bounded) and returns its first line.
func Version(bin string, timeout time.Duration) (string, error) {
	v, ok := probeVersion(bin, timeout)
	if !ok {
		return v, fmt.Errorf("%s --version did not say it is ast-grep (got %q)", bin, v)
	}
	return v, nil
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

// probeVersion runs bin --version with stdin closed and a timeout, and
// reports its first output line and whether that names ast-grep.
func probeVersion(bin string, timeout time.Duration) (string, bool) {
	if timeout <= 0 {
		timeout = DefaultVersionTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	var out limitedBuffer
	out.limit = 4096
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil && out.Len() == 0 {
		return "", false
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out.String()), "\n")
	line = strings.TrimSpace(line)
	return line, strings.HasPrefix(line, "ast-grep")
}

// lookPath finds name in the directories of path, the way a shell would,
// without reading the environment. It returns "" when there is none.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue // an empty entry would mean the working directory
		}
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) {
			return p
		}
	}
	return ""
}

func exeName(base string) string {
	if runtime.GOOS == "windows" {
		return base + ".exe"
	}
	return base
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if runtime.GOOS == "windows" {
		return true
	}
	return fi.Mode().Perm()&0o111 != 0
}

// limitedBuffer keeps the first limit bytes written to it and drops the
// rest, counting them.
type limitedBuffer struct {
	bytes.Buffer
	limit   int
	dropped int64
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	room := b.limit - b.Buffer.Len()
	if room < 0 {
		room = 0
	}
	if len(p) > room {
		b.dropped += int64(len(p) - room)
		b.Buffer.Write(p[:room])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
