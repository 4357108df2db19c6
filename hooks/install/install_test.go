package install

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	gitshim "github.com/slimgate/slim/hooks/git"
	"github.com/slimgate/slim/hooks/opencode"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	return dir
}

func write(t *testing.T, path, body string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), perm); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOpenCodePath(t *testing.T) {
	repo := newRepo(t)
	sub := filepath.Join(repo, "a", "b")
	os.MkdirAll(sub, 0o755)
	plain := t.TempDir()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		name   string
		dir    string
		global bool
		env    map[string]string
		want   string
	}{
		{"project from a subdirectory", sub, false, nil, filepath.Join(repo, ".opencode", "plugin", "slim.js")},
		{"no git: the directory itself", plain, false, nil, filepath.Join(plain, ".opencode", "plugin", "slim.js")},
		{"global with XDG_CONFIG_HOME", sub, true, map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/h"}, "/x/cfg/opencode/plugin/slim.js"},
		{"global under HOME", sub, true, map[string]string{"HOME": "/h"}, "/h/.config/opencode/plugin/slim.js"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, guard, err := OpenCodePath(tc.dir, tc.global, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if wantGuard := filepath.Dir(filepath.Dir(filepath.Dir(got))); (guard == "") != tc.global || (!tc.global && guard != wantGuard) {
				t.Fatalf("guard %q for %s", guard, got)
			}
			gotReal, _ := filepath.EvalSymlinks(filepath.Dir(filepath.Dir(filepath.Dir(got))))
			wantReal, _ := filepath.EvalSymlinks(filepath.Dir(filepath.Dir(filepath.Dir(tc.want))))
			if got != tc.want && (gotReal == "" || gotReal != wantReal) {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestOpenCodeInstallCycle(t *testing.T) {
	top := t.TempDir()
	path := filepath.Join(top, ".opencode", "plugin", "slim.js")

	r, err := OpenCode(path, top)
	if err != nil || r.Action != Created {
		t.Fatalf("first install: %+v %v", r, err)
	}
	if !bytes.Equal([]byte(read(t, path)), opencode.Plugin) {
		t.Fatal("installed bytes differ from the embedded plugin")
	}
	if r, err = OpenCode(path, top); err != nil || r.Action != Unchanged {
		t.Fatalf("second install: %+v %v", r, err)
	}
	// An older slim-written version is upgraded.
	write(t, path, opencode.Marker+"opencode plugin, protocol 0\nexport const Old = 1;\n", 0o644)
	if r, err = OpenCode(path, top); err != nil || r.Action != Upgraded {
		t.Fatalf("upgrade: %+v %v", r, err)
	}
	if read(t, path) != string(opencode.Plugin) {
		t.Fatal("upgrade did not write the current plugin")
	}
	if r, err = UninstallOpenCode(path, top); err != nil || r.Action != Removed {
		t.Fatalf("uninstall: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(top, ".opencode")); !os.IsNotExist(err) {
		t.Fatalf("empty .opencode folder left behind: %v", err)
	}
	if r, err = UninstallOpenCode(path, top); err != nil || r.Action != Absent {
		t.Fatalf("second uninstall: %+v %v", r, err)
	}
}

func TestOpenCodeForeignFileIsNeverTouched(t *testing.T) {
	top := t.TempDir()
	path := filepath.Join(top, ".opencode", "plugin", "slim.js")
	const mine = "export const Mine = async () => ({});\n"
	write(t, path, mine, 0o644)
	write(t, filepath.Join(top, ".opencode", "plugin", "other.js"), "x", 0o644)

	_, err := OpenCode(path, top)
	if ie := new(Error); !errors.As(err, &ie) || ie.Code != CodeForeignFile {
		t.Fatalf("want a blocked foreign_file error, got %v", err)
	}
	if read(t, path) != mine {
		t.Fatal("foreign file changed")
	}
	r, err := UninstallOpenCode(path, top)
	if err != nil || r.Action != Foreign || read(t, path) != mine {
		t.Fatalf("uninstall touched a foreign file: %+v %v", r, err)
	}

	// A symlink in the plugin's place is refused by the install, even for
	// the global plugin, and left alone by the uninstall.
	linkTop := t.TempDir()
	link := filepath.Join(linkTop, "slim.js")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, guard := range []string{linkTop, ""} {
		if _, err := OpenCode(link, guard); !isCode(err, CodeSymlink) {
			t.Fatalf("symlink (guard %q): want symlink, got %v", guard, err)
		}
		if r, err := UninstallOpenCode(link, guard); err != nil || r.Action != Foreign {
			t.Fatalf("symlink uninstall (guard %q): %+v %v", guard, r, err)
		}
	}
	if read(t, path) != mine {
		t.Fatal("the link's target changed")
	}
	// The uninstall keeps a folder that still holds other files.
	write(t, filepath.Join(top, "p2", "plugin", "slim.js"), string(opencode.Plugin), 0o644)
	write(t, filepath.Join(top, "p2", "plugin", "keep.js"), "k", 0o644)
	if r, err := UninstallOpenCode(filepath.Join(top, "p2", "plugin", "slim.js"), top); err != nil || r.Action != Removed {
		t.Fatalf("%+v %v", r, err)
	}
	if read(t, filepath.Join(top, "p2", "plugin", "keep.js")) != "k" {
		t.Fatal("other plugin removed")
	}
}

func TestGitHooksDir(t *testing.T) {
	repo := newRepo(t)
	git(t, repo, "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, repo, "worktree", "add", "-q", wt)

	real := func(p string) string {
		r, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			return p
		}
		return filepath.Join(r, filepath.Base(p))
	}
	got, guard, err := GitHooksDir(repo)
	if err != nil || real(got) != real(filepath.Join(repo, ".git", "hooks")) || guard != filepath.Dir(got) {
		t.Fatalf("main: %s (guard %s) %v", got, guard, err)
	}
	if got, guard, err := GitHooksDir(wt); err != nil || real(got) != real(filepath.Join(repo, ".git", "hooks")) || guard != filepath.Dir(got) {
		t.Fatalf("linked worktree shares the common hooks dir: %s (guard %s) %v", got, guard, err)
	}
	if got, guard, err := GitHooksDir(filepath.Join(repo, ".git")); err != nil || real(got) != real(filepath.Join(repo, ".git", "hooks")) || guard != filepath.Dir(got) {
		t.Fatalf("from inside the git dir: %s (guard %s) %v", got, guard, err)
	}
	git(t, repo, "config", "core.hooksPath", "tools/hooks")
	sub := filepath.Join(repo, "sub")
	os.Mkdir(sub, 0o755)
	if got, guard, err := GitHooksDir(sub); err != nil || got != filepath.Join(repo, "tools", "hooks") || guard != repo {
		t.Fatalf("core.hooksPath: %s (guard %s) %v", got, guard, err)
	}
	elsewhere := filepath.Join(t.TempDir(), "my-hooks")
	git(t, repo, "config", "core.hooksPath", elsewhere)
	if got, guard, err := GitHooksDir(repo); err != nil || got != elsewhere || guard != "" {
		t.Fatalf("core.hooksPath outside the repository: %s (guard %q) %v", got, guard, err)
	}
	if _, _, err := GitHooksDir(t.TempDir()); err == nil {
		t.Fatal("want an error outside git")
	}
}

func TestGitInstallCycle(t *testing.T) {
	tests := []struct {
		name     string
		existing map[string]string // hook name -> content before install
		aside    map[string]string // <name>.pre-slim before install
		want     map[string]string // action per hook
		wantErr  bool
	}{
		{name: "fresh", want: map[string]string{"pre-commit": Created, "pre-applypatch": Created}},
		{name: "existing hook is chained", existing: map[string]string{"pre-commit": "#!/bin/sh\necho mine\n"},
			want: map[string]string{"pre-commit": Chained, "pre-applypatch": Created}},
		{name: "foreign hook and a moved-aside hook: refused", existing: map[string]string{"pre-commit": "#!/bin/sh\necho a\n"},
			aside: map[string]string{"pre-commit": "#!/bin/sh\necho b\n"}, want: map[string]string{}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "hooks")
			before := map[string]string{}
			for n, body := range tc.existing {
				write(t, filepath.Join(dir, n), body, 0o755)
				before[n] = body
			}
			for n, body := range tc.aside {
				write(t, filepath.Join(dir, n+gitshim.ChainSuffix), body, 0o755)
				before[n+gitshim.ChainSuffix] = body
			}
			results, err := Git(dir, filepath.Dir(dir))
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				for n, body := range before {
					if read(t, filepath.Join(dir, n)) != body {
						t.Fatalf("%s changed by a refused install", n)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if want := tc.want[filepath.Base(r.Path)]; r.Action != want {
					t.Fatalf("%s: %s, want %s", r.Path, r.Action, want)
				}
				fi, err := os.Stat(r.Path)
				if err != nil || fi.Mode().Perm()&0o111 == 0 {
					t.Fatalf("%s not executable: %v", r.Path, err)
				}
				if read(t, r.Path) != string(gitshim.Shim(filepath.Base(r.Path))) {
					t.Fatalf("%s is not the shim", r.Path)
				}
			}
			for n, body := range tc.existing {
				if read(t, filepath.Join(dir, n+gitshim.ChainSuffix)) != body {
					t.Fatalf("%s not moved aside intact", n)
				}
			}
			// Idempotent.
			again, err := Git(dir, filepath.Dir(dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range again {
				if r.Action != Unchanged {
					t.Fatalf("second install: %+v", r)
				}
			}
			// Uninstall restores exactly.
			if _, err := UninstallGit(dir, filepath.Dir(dir)); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(before) {
				t.Fatalf("after uninstall: %d entries, want %d", len(entries), len(before))
			}
			for n, body := range before {
				if read(t, filepath.Join(dir, n)) != body {
					t.Fatalf("%s not restored", n)
				}
			}
		})
	}
}

func TestGitUpgradeAndForeignUninstall(t *testing.T) {
	dir := t.TempDir()
	old := "#!/bin/sh\n" + gitshim.Marker + "git hook shim, version 0\nexec slim git-hook pre-commit\n"
	write(t, filepath.Join(dir, "pre-commit"), old, 0o755)
	write(t, filepath.Join(dir, "pre-applypatch"), "#!/bin/sh\nexit 0\n", 0o755)
	results, err := Git(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Action != Upgraded || results[1].Action != Chained {
		t.Fatalf("%+v", results)
	}
	// A hook the user put back in place of the shim is left alone.
	write(t, filepath.Join(dir, "pre-commit"), "#!/bin/sh\necho user\n", 0o755)
	results, err = UninstallGit(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Action != Foreign || results[1].Action != Restored {
		t.Fatalf("%+v", results)
	}
	if read(t, filepath.Join(dir, "pre-commit")) != "#!/bin/sh\necho user\n" || read(t, filepath.Join(dir, "pre-applypatch")) != "#!/bin/sh\nexit 0\n" {
		t.Fatal("uninstall changed the wrong files")
	}
}

func TestShimOutcomes(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	if _, err := Git(dir, ""); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	fake := func(body string) {
		write(t, filepath.Join(bin, "slim"), "#!/bin/sh\n"+body+"\n", 0o755)
	}
	tests := []struct {
		name     string
		slim     string // "" means no slim on PATH
		chained  string // "" means no chained hook
		wantExit int
		wantErr  string
	}{
		{"clean", "exit 0", "", 0, ""},
		{"findings refuse", "echo 'a.txt: finding' >&2; exit 5", "", 1, "a.txt: finding"},
		{"internal error passes with a warning", "exit 1", "", 0, "exited with 1"},
		{"usage error passes with a warning", "exit 2", "", 0, "exited with 2"},
		{"missing slim passes with a warning", "", "", 0, "slim not found"},
		{"chained hook runs first", "exit 0", "echo chained-ran >&2; exit 0", 0, "chained-ran"},
		{"chained hook failure refuses", "echo should-not-run >&2; exit 0", "exit 3", 3, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(filepath.Join(bin, "slim"))
			os.Remove(filepath.Join(dir, "pre-commit"+gitshim.ChainSuffix))
			if tc.slim != "" {
				fake(tc.slim)
			}
			if tc.chained != "" {
				write(t, filepath.Join(dir, "pre-commit"+gitshim.ChainSuffix), "#!/bin/sh\n"+tc.chained+"\n", 0o755)
			}
			cmd := exec.Command(filepath.Join(dir, "pre-commit"))
			cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", "SLIM_BIN=")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantExit || !strings.Contains(stderr.String(), tc.wantErr) {
				t.Fatalf("exit %d, stderr %q; want exit %d with %q", code, stderr.String(), tc.wantExit, tc.wantErr)
			}
			if strings.Contains(stderr.String(), "should-not-run") {
				t.Fatal("slim ran after the chained hook failed")
			}
		})
	}
}

func isCode(err error, code string) bool {
	var ie *Error
	return errors.As(err, &ie) && ie.Code == code
}
