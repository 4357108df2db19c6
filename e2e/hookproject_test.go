package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
