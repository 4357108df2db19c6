package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gitshim "github.com/slimgate/slim/hooks/git"
	"github.com/slimgate/slim/hooks/opencode"
)

func TestPluginStatus(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "slim.js")
	cases := []struct {
		name  string
		write func()
		want  string
	}{
		{"nothing there", func() {}, StateAbsent},
		{"the plugin this slim writes", func() { os.WriteFile(p, opencode.Plugin, 0o644) }, StateCurrent},
		{"an older slim plugin", func() { os.WriteFile(p, []byte(opencode.Marker+"v0\nold"), 0o644) }, StateOutdated},
		{"someone else's file", func() { os.WriteFile(p, []byte("export default {}"), 0o644) }, StateForeign},
		{"a link", func() { os.Remove(p); os.Symlink(filepath.Join(dir, "elsewhere.js"), p) }, StateForeign},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.write()
			s, err := PluginStatus(p)
			if err != nil || s.State != c.want {
				t.Fatalf("PluginStatus = %+v, %v; want %s", s, err, c.want)
			}
		})
	}
}

func TestGitStatus(t *testing.T) {
	hooks := t.TempDir()
	res, err := GitStatus(hooks)
	if err != nil || len(res) != 2 || res[0].State != StateAbsent || res[1].State != StateAbsent {
		t.Fatalf("empty hooks dir: %+v, %v", res, err)
	}
	if _, err := Git(hooks, ""); err != nil {
		t.Fatal(err)
	}
	res, _ = GitStatus(hooks)
	for _, s := range res {
		if s.State != StateCurrent {
			t.Fatalf("after install: %+v", s)
		}
	}
	pre := filepath.Join(hooks, "pre-commit")
	os.WriteFile(pre+gitshim.ChainSuffix, []byte("#!/bin/sh\n"), 0o755)
	os.Chmod(pre, 0o644)
	res, _ = GitStatus(hooks)
	if res[0].State != StateOutdated || !strings.Contains(res[0].Note, "not executable") || !strings.Contains(res[0].Note, "pre-commit.pre-slim") {
		t.Fatalf("non-executable chained shim: %+v", res[0])
	}
	os.WriteFile(pre, []byte("#!/bin/sh\necho mine\n"), 0o755)
	res, _ = GitStatus(hooks)
	if res[0].State != StateForeign {
		t.Fatalf("foreign hook: %+v", res[0])
	}
}
