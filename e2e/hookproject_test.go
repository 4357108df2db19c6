package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// pinnedHost is a host program e2e/package.json pins (scripts/e2e-setup.sh
// installs it into node_modules), found and checked once per test run.
type pinnedHost struct {
	name     string // its name in node_modules/.bin
	override string // the variable that names another copy
	want     string // the pinned version
	env      func() []string
	version  func(out string) string // the version in its trimmed --version output

	once sync.Once
	bin  string
	err  error
}

// binary returns the host's path. A host that is missing, does not run or
// is not the pinned version skips the test, or fails it under
// SLIM_E2E=require.
func (h *pinnedHost) binary(t *testing.T) string {
	t.Helper()
	if e2eMode() == "off" {
		t.Skip("SLIM_E2E=off")
	}
	h.once.Do(func() {
		bin := os.Getenv(h.override)
		if bin == "" {
			bin = filepath.Join("node_modules", ".bin", h.name)
		}
		abs, err := filepath.Abs(bin)
		if err != nil {
			h.err = fmt.Errorf("locate %s: %w", h.name, err)
			return
		}
		if _, err := os.Stat(abs); err != nil {
			h.err = fmt.Errorf("%s %s is not installed (scripts/e2e-setup.sh installs it; or %s=<path>): %w", h.name, h.want, h.override, err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, abs, "--version")
		cmd.Env = h.env()
		out, err := cmd.CombinedOutput()
		if err != nil {
			h.err = fmt.Errorf("%s --version: %w: %s", h.name, err, bytes.TrimSpace(out))
			return
		}
		if v := h.version(strings.TrimSpace(string(out))); v != h.want {
			h.err = fmt.Errorf("%s is version %q, want %s (reinstall with scripts/e2e-setup.sh)", h.name, v, h.want)
			return
		}
		h.bin = abs
	})
	if h.err != nil {
		unavailable(t, "%v", h.err)
	}
	return h.bin
}

// hookProject is one throw-away git project for a host that runs slim as
// its hook command (Claude Code, Codex CLI): slim's hooks installed by the
// real `slim hooks install`, an isolated home for the host, a directory
// beside the project for writes that must be refused, and the `slim` the
// hook command finds on PATH, as a user's would be.
type hookProject struct {
	t       *testing.T
	bin     string // the host
	root    string
	dir     string // the project (git work tree, host cwd)
	outside string // beside the project
	home    string
	pathDir string // holds the `slim` the hook command runs
	// hostEnv is the host's own part of the environment.
	hostEnv func(*hookProject) []string
}

// newHookProject makes the project with files, installs slim's hooks with
// `slim hooks install <install>` and commits it all. homeDirs are made
// inside the home.
func newHookProject(t *testing.T, bin string, files map[string]string, install string, hostEnv func(*hookProject) []string, homeDirs ...string) *hookProject {
	t.Helper()
	root := t.TempDir()
	if keep := os.Getenv("SLIM_E2E_KEEP"); keep != "" {
		root = filepath.Join(keep, unsafeName.ReplaceAllString(t.Name(), "_"))
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
	}
	p := &hookProject{t: t, bin: bin, root: root, dir: filepath.Join(root, "proj"), outside: filepath.Join(root, "outside"),
		home: filepath.Join(root, "home"), pathDir: filepath.Join(root, "bin"), hostEnv: hostEnv}
	dirs := []string{p.dir, p.outside, p.home, p.pathDir, filepath.Join(root, "tmp"), filepath.Join(root, "slim-state")}
	for _, d := range homeDirs {
		dirs = append(dirs, filepath.Join(p.home, d))
	}
	for _, d := range dirs {
		mustMkdir(t, d)
	}
	if err := os.Symlink(slimBinary(t), filepath.Join(p.pathDir, "slim")); err != nil {
		t.Fatal(err)
	}
	for rel, content := range files {
		full := filepath.Join(p.dir, filepath.FromSlash(rel))
		mustMkdir(t, filepath.Dir(full))
		mustWrite(t, full, content)
	}
	p.git("init", "-q")
	p.slim("hooks", "install", install)
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "initial")
	return p
}

func (p *hookProject) env() []string {
	env := cleanEnv(p.home)
	env[0] = "PATH=" + p.pathDir + string(os.PathListSeparator) + cleanPath()
	return append(append(env, p.hostEnv(p)...),
		"TMPDIR="+filepath.Join(p.root, "tmp"),
		"SLIM_STATE_DIR="+filepath.Join(p.root, "slim-state"),
		"SLIM_LOG_FILE="+filepath.Join(p.root, "slim.log"),
		"SLIM_LOG_LEVEL=debug",
	)
}

func (p *hookProject) git(args ...string) {
	p.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (p *hookProject) slim(args ...string) {
	p.t.Helper()
	cmd := exec.Command(filepath.Join(p.pathDir, "slim"), args...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("slim %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
