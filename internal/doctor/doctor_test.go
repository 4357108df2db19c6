package doctor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestWithNothingOnPathEveryProgramIsMissingWithAnInstallHint(t *testing.T) {
	start := time.Now()
	r := Run(context.Background(), Options{Dir: t.TempDir(), PathList: t.TempDir(), SlimVersion: "v1.2.3"})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("doctor took %s", d)
	}
	names := []string{}
	for _, p := range r.Programs {
		names = append(names, p.Name)
		if p.Found || p.Install == "" || p.Error == "" {
			t.Errorf("%s: %+v", p.Name, p)
		}
	}
	if strings.Join(names, " ") != "git rg ast-grep node opencode" {
		t.Fatalf("programs %v", names)
	}
	text := r.Text()
	for _, want := range []string{"slim v1.2.3", "apt-get install ripgrep", "npm install -g @ast-grep/cli", "npm install -g opencode-ai", "git hooks"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
}

// ast-grep installed only in a project's node_modules (npm install
// @ast-grep/cli there, or beside the plugin in .opencode) is what the
// OpenCode plugin hands slim, so doctor finds it there too, after PATH.
func TestAstGrepInTheProjectsNodeModulesIsFound(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for ast-grep")
	}
	for _, bin := range []string{"node_modules/.bin", ".opencode/node_modules/.bin"} {
		t.Run(bin, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, filepath.FromSlash(bin), "ast-grep")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("#!/bin/sh\necho 'ast-grep 0.51.1'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			getenv := func(k string) string {
				if k == "HOME" {
					return home
				}
				return ""
			}
			r := Run(context.Background(), Options{Dir: dir, PathList: t.TempDir(), Getenv: getenv})
			ag := r.Programs[2]
			if ag.Name != "ast-grep" || !ag.Found || ag.Path != p || ag.Source != "node_modules" || ag.Version != "ast-grep 0.51.1" {
				t.Fatalf("ast-grep: %+v", ag)
			}
		})
	}
}
