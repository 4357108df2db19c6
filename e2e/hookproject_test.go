package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
// its hook command (Claude Code, Codex CLI, Gemini CLI): slim's hooks installed by the
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
	p.putSlim()
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

// putSlim puts the `slim` the hook command runs into pathDir: a link to the
// binary under test, or, when SLIM_E2E_RECORD names a directory, a script
// that first keeps each hook request in <dir>/<test>/ and then hands it to
// that binary. With the run over, the project's paths in the kept requests
// are replaced by $ROOT (the project), $OUT (the directory beside it) and
// $HOME, the placeholders of the adapters' testdata, and the rest of the
// test's directory by $BASE: the requests the real hosts sent become
// hooks/<host>/testdata/recorded/.
func (p *hookProject) putSlim() {
	t := p.t
	t.Helper()
	bin := slimBinary(t)
	dst := filepath.Join(p.pathDir, "slim")
	rec := os.Getenv("SLIM_E2E_RECORD")
	if rec == "" {
		if err := os.Symlink(bin, dst); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir, err := filepath.Abs(filepath.Join(rec, unsafeName.ReplaceAllString(t.Name(), "_")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, dir)
	// The requests are named by when they arrived, so that a listing is
	// the order the host sent them in.
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in hook) ;; *) exec '%s' \"$@\" ;; esac\n"+
		"f='%s'/$(date +%%s%%N)-$$.json\ncat >\"$f\"\nexec '%s' \"$@\" <\"$f\"\n", bin, dir, bin)
	if err := os.WriteFile(dst, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		// The root last: the three above are inside it.
		r := strings.NewReplacer(p.dir, "$ROOT", p.outside, "$OUT", p.home, "$HOME", p.root, "$BASE")
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Error(err)
				continue
			}
			mustWrite(t, f, r.Replace(string(b)))
		}
		t.Logf("SLIM_E2E_RECORD: %d hook requests kept in %s", len(files), dir)
	})
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

// hookCommand is one run of a hook project's host, headless, against a
// fake model provider that is already serving.
type hookCommand struct {
	host    string   // the host as failures and diagnostics name it: "claude"
	run     string   // the command as logs and failures name it: "claude -p"
	args    []string // the host's arguments
	env     []string // added to the project's environment
	timeout time.Duration
	// stdoutLog is the file in the project's root that keeps stdout (its
	// stderr goes to stderr.log); with keepRequests, every request the
	// fake was sent is kept in requests.jsonl too, one JSON line each.
	stdoutLog    string
	keepRequests bool
	fake         string // the fake as failures name it: "fake provider"
	// Diagnostics, shown when the run times out or the test fails: the
	// tails of stdout and stderr (outTail and errTail lines), what the
	// fake saw (written by seen), and the tails of slim.log and of logs.
	outTail, errTail int
	seen             func(b *strings.Builder)
	logs             []rootLog
}

// rootLog is a log file in the project's root that diagnostics show the
// last lines of.
type rootLog struct {
	title string
	name  string
	lines int
}

// hookRun is what one hookCommand left behind.
type hookRun struct {
	stdout  string
	stderr  string
	exitErr error
	elapsed time.Duration
}

// fakeModel is the fake model provider a hookCommand runs against.
type fakeModel[Q any] interface {
	Requests() []Q
	Close() error
}

// runHook runs c in p against fake and waits for it; its process group
// is killed after the run and when c.timeout is reached, which fails the
// test. Then fake is closed and the run's output kept in the root.
func runHook[Q any](p *hookProject, c hookCommand, fake fakeModel[Q]) hookRun {
	t := p.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, c.args...)
	cmd.Dir = p.dir
	cmd.Env = append(p.env(), c.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	inOwnProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fake.Close()
		t.Fatalf("start %s: %v", c.host, err)
	}
	var r hookRun
	r.exitErr = cmd.Wait()
	r.elapsed = time.Since(start)
	_ = killGroup(cmd)
	if err := fake.Close(); err != nil {
		t.Errorf("%s: %v", c.fake, err)
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	mustWrite(t, filepath.Join(p.root, c.stdoutLog), r.stdout)
	mustWrite(t, filepath.Join(p.root, "stderr.log"), r.stderr)
	if c.keepRequests {
		var reqs strings.Builder
		for _, q := range fake.Requests() {
			line, _ := json.Marshal(q) // plain structs and raw JSON
			reqs.Write(append(line, '\n'))
		}
		mustWrite(t, filepath.Join(p.root, "requests.jsonl"), reqs.String())
	}
	t.Logf("%s: %.1fs wall, %d requests, exit %v", c.run, r.elapsed.Seconds(), len(fake.Requests()), r.exitErr)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s did not finish within %s\n%s", c.run, c.timeout, p.diagnostics(c, r))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(p.diagnostics(c, r))
		}
	})
	return r
}

// diagnostics is what a failed or timed-out run of c shows.
func (p *hookProject) diagnostics(c hookCommand, r hookRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s stdout (tail)\n%s\n--- %s stderr (tail)\n%s\n", c.host, tail(r.stdout, c.outTail), c.host, tail(r.stderr, c.errTail))
	if c.seen != nil {
		c.seen(&b)
	}
	for _, l := range append([]rootLog{{"slim.log", "slim.log", 3000}}, c.logs...) {
		if log, err := os.ReadFile(filepath.Join(p.root, l.name)); err == nil {
			fmt.Fprintf(&b, "--- %s (tail)\n%s\n", l.title, tail(string(log), l.lines))
		}
	}
	return b.String()
}

// received is what the model was sent for the call callID, as the fake's
// lookup finds it in the run's history; the test fails when the model
// never received a result for it.
func received[T any](t *testing.T, callID string, lookup func(callID string) (T, bool)) T {
	t.Helper()
	got, ok := lookup(callID)
	if !ok {
		t.Fatalf("the model never received a result for %s", callID)
	}
	return got
}
