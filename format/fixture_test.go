package format

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/slimgate/slim/worktree"
)

// fixture is a worktree on disk with a session directory inside it, a
// bin directory of programs and a home directory, so that every rule
// reads real files and finds real executables.
type fixture struct {
	t     *testing.T
	above string // the directory holding the worktree, outside it
	root  string // the worktree top
	dir   string // the session directory
	bin   string
	home  string
}

func newFixture(t *testing.T, sessionRel string) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, above: base, root: filepath.Join(base, "repo"), bin: filepath.Join(base, "bin"), home: filepath.Join(base, "home")}
	fx.dir = filepath.Join(fx.root, filepath.FromSlash(sessionRel))
	for _, d := range []string{fx.dir, fx.bin, fx.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

// write writes a file below the worktree top (a path starting with ../
// lands above it).
func (fx *fixture) write(rel, content string) string {
	fx.t.Helper()
	p := filepath.Join(fx.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		fx.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		fx.t.Fatal(err)
	}
	return p
}

// program writes an executable shell script into dir (fx.bin when "").
func (fx *fixture) program(dir, name, script string) string {
	fx.t.Helper()
	if runtime.GOOS == "windows" {
		fx.t.Skip("the fixture programs are shell scripts")
	}
	if dir == "" {
		dir = fx.bin
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fx.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		fx.t.Fatal(err)
	}
	return p
}

// config writes the project's opencode.json at the worktree top.
func (fx *fixture) config(json string) { fx.write("opencode.json", json) }

// host returns the session's Host; opts.Path defaults to the fixture's bin
// directory alone and the global config to the fixture's home.
func (fx *fixture) host(opts Options) *Host {
	fx.t.Helper()
	h, err := fx.newHost(opts)
	if err != nil {
		fx.t.Fatalf("NewHost: %v", err)
	}
	return h
}

func (fx *fixture) newHost(opts Options) (*Host, error) {
	g, err := worktree.NewGuard(fx.dir, fx.root, worktree.Options{})
	if err != nil {
		fx.t.Fatal(err)
	}
	if opts.Path == "" {
		opts.Path = fx.bin
	}
	if opts.Config.GlobalDir == "" {
		opts.Config.GlobalDir = filepath.Join(fx.home, ".config", "opencode")
	}
	if opts.Config.Home == "" {
		opts.Config.Home = fx.home
	}
	return NewHost(g, opts)
}

// explain explains one file below the worktree top.
func (fx *fixture) explain(h *Host, rel string) *Explanation {
	fx.t.Helper()
	x, err := h.Explain(context.Background(), filepath.Join(fx.root, filepath.FromSlash(rel)))
	if err != nil {
		fx.t.Fatalf("Explain %s: %v", rel, err)
	}
	return x
}

// decision returns the named formatter's decision.
func decision(t *testing.T, x *Explanation, name string) Decision {
	t.Helper()
	for _, d := range x.Formatters {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no decision for %s in %s", name, names(x.Formatters))
	return Decision{}
}

func names(ds []Decision) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return strings.Join(out, " ")
}

func running(x *Explanation) string { return names(x.Running()) }
