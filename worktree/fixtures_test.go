package worktree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures below are real repositories made by the real git binary.

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git binary not found; repository fixtures need it")
	}
}

// gitEnv is a clean environment for git: no user or system config, no
// inherited GIT_* variables, a fixed identity.
func gitEnv(t testing.TB) []string {
	home := filepath.Join(t.TempDir(), "home")
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=slim test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=slim test", "GIT_COMMITTER_EMAIL=test@example.invalid",
	)
}

// git runs git in dir and returns its trimmed output.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// physical returns the symlink-free form of an existing path (t.TempDir may
// itself sit under a link, as /tmp does on macOS).
func physical(t testing.TB, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newRepo makes a main checkout with one commit: a.txt and deep/er/keep.
func newRepo(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	write(t, filepath.Join(dir, "deep", "er", "keep"), "")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	return physical(t, dir)
}

// repos is the set of layouts the cases use.
type repos struct {
	base    string // physical temp dir holding everything
	main    string // main checkout
	wt      string // linked worktree ../wt on branch feat
	lane    string // nested linked worktree main/.slim/worktrees/lane
	sup     string // superproject
	sub     string // submodule checkout sup/libs/sub
	outside string // a plain directory outside every repository
}

func makeRepos(t testing.TB) *repos {
	t.Helper()
	needGit(t)
	base := physical(t, t.TempDir())
	r := &repos{base: base}
	r.main = newRepo(t, filepath.Join(base, "main"))
	git(t, r.main, "worktree", "add", "-q", "-b", "feat", filepath.Join(base, "wt"))
	r.wt = filepath.Join(base, "wt")
	write(t, filepath.Join(r.main, ".gitignore"), ".slim/\n")
	git(t, r.main, "worktree", "add", "-q", "-b", "lane", filepath.Join(r.main, ".slim", "worktrees", "lane"))
	r.lane = filepath.Join(r.main, ".slim", "worktrees", "lane")

	subOrigin := newRepo(t, filepath.Join(base, "sub-origin"))
	r.sup = newRepo(t, filepath.Join(base, "sup"))
	git(t, r.sup, "-c", "protocol.file.allow=always", "submodule", "add", "-q", subOrigin, "libs/sub")
	git(t, r.sup, "commit", "-q", "-m", "add sub")
	r.sub = filepath.Join(r.sup, "libs", "sub")

	r.outside = filepath.Join(base, "outside")
	write(t, filepath.Join(r.outside, "f.txt"), "outside\n")
	return r
}
