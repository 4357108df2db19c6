package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/fakeprovider"
	"github.com/slimgate/slim/internal/ocevents"
	"github.com/slimgate/slim/internal/testbin"
)

// pinnedVersion is the OpenCode release the tests are written against
// (e2e/package.json pins the same).
const pinnedVersion = "1.18.33"

// runTimeout is the hard cap on one `opencode run`; the process group is
// killed when it is reached. A healthy run takes 5-15 s.
const runTimeout = 120 * time.Second

// modelID contains "gpt-" so the host offers apply_patch (and not edit/write).
const modelID = "gpt-5-fake"

// suite holds what the tests share: the host binary, found once
// (testbin.Shared builds the slim binary once).
var suite struct {
	hostOnce sync.Once
	hostBin  string
	hostErr  error
}

// TestMain removes the slim binary testbin.Shared built once the tests end.
func TestMain(m *testing.M) { os.Exit(testbin.M(m).Run()) }

// e2eMode is SLIM_E2E: "require" turns a missing host into a failure,
// "off" skips everything, anything else skips when the host is missing.
func e2eMode() string { return strings.ToLower(strings.TrimSpace(os.Getenv("SLIM_E2E"))) }

// unavailable skips the test, or fails it under SLIM_E2E=require.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if e2eMode() == "require" {
		t.Fatalf("SLIM_E2E=require: %s", msg)
	}
	t.Skipf("%s (run scripts/e2e-setup.sh; SLIM_E2E=require makes this a failure)", msg)
}

// hostBinary returns the pinned opencode binary, or skips/fails the test.
func hostBinary(t *testing.T) string {
	t.Helper()
	if e2eMode() == "off" {
		t.Skip("SLIM_E2E=off")
	}
	suite.hostOnce.Do(func() {
		bin := os.Getenv("SLIM_E2E_OPENCODE")
		if bin == "" {
			bin = filepath.Join("node_modules", ".bin", "opencode")
		}
		abs, err := filepath.Abs(bin)
		if err != nil {
			suite.hostErr = fmt.Errorf("locate opencode: %w", err)
			return
		}
		if _, err := os.Stat(abs); err != nil {
			suite.hostErr = fmt.Errorf("opencode host not installed: %w", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, abs, "--version")
		cmd.Env = append(os.Environ(), "OPENCODE_DISABLE_AUTOUPDATE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			suite.hostErr = fmt.Errorf("opencode --version: %w: %s", err, bytes.TrimSpace(out))
			return
		}
		if v := strings.TrimSpace(string(out)); v != pinnedVersion {
			suite.hostErr = fmt.Errorf("opencode is version %q, want %s (reinstall with scripts/e2e-setup.sh)", v, pinnedVersion)
			return
		}
		// The host's grep and glob run ripgrep from PATH and would otherwise
		// download it from the internet.
		if _, err := exec.LookPath("rg"); err != nil {
			suite.hostErr = fmt.Errorf("ripgrep (rg) is not on PATH; the host would try to download it: %w", err)
			return
		}
		suite.hostBin = abs
	})
	if suite.hostErr != nil {
		unavailable(t, "%v", suite.hostErr)
	}
	return suite.hostBin
}

// slimBinary builds cmd/slim once (static, no-docs tag, as shipped).
func slimBinary(t *testing.T) string {
	t.Helper()
	return testbin.Shared(t)
}

// pluginMode says how slim takes part in a run.
type pluginMode int

const (
	// noPlugin: the project has no slim plugin at all (the bare host).
	noPlugin pluginMode = iota
	// withSlim: the plugin installed by `slim hooks install --opencode`,
	// SLIM_BIN pointing at the freshly built slim.
	withSlim
	// slimMissing: the plugin is installed but SLIM_BIN points nowhere and no
	// slim is on PATH, so the plugin must let every call pass.
	slimMissing
	// slimTwice: like withSlim, plus a second copy of the plugin installed
	// globally (`--global`, in $XDG_CONFIG_HOME/opencode/plugin); the host
	// loads both, and only one may act.
	slimTwice
)

func (m pluginMode) String() string {
	return [...]string{"no plugin", "with slim", "plugin without slim binary", "project and global plugin"}[m]
}

// project is one throw-away git project with an isolated host environment.
type project struct {
	t       *testing.T
	root    string // holds everything below
	dir     string // the project (git work tree, host cwd)
	outside string // a directory beside the project, outside it
	home    string
	xdg     map[string]string // XDG_*_HOME
	mode    pluginMode
	slimBin string // SLIM_BIN handed to the host
	runs    int
	// permission replaces the host's permission rules when set; by default
	// everything is allowed.
	permission map[string]any
	// env is added to the host's environment (and so to the plugin's and
	// slim's), as KEY=value.
	env []string
	// formatter is the host's "formatter" setting; nil means false (no
	// formatter runs after a write).
	formatter any
	// agent is the host agent of p.run (`opencode run --agent`, as
	// "plan"; p.serve ignores it); "" runs the host's default agent
	// (build). The host falls back to its default, with only a warning,
	// for an agent it does not know, so a test that sets one checks that
	// the run really used it (hostRun.agents).
	agent string
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// newProject creates the project with the given files (relative path to
// content), installs the plugin as mode says, and commits everything.
func newProject(t *testing.T, mode pluginMode, files map[string]string) *project {
	t.Helper()
	hostBinary(t)
	root := t.TempDir()
	if keep := os.Getenv("SLIM_E2E_KEEP"); keep != "" {
		root = filepath.Join(keep, unsafeName.ReplaceAllString(t.Name(), "_"))
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
	}
	p := &project{
		t:       t,
		root:    root,
		dir:     filepath.Join(root, "proj"),
		outside: filepath.Join(root, "outside"),
		home:    filepath.Join(root, "home"),
		xdg: map[string]string{
			"XDG_DATA_HOME":   filepath.Join(root, "xdg", "data"),
			"XDG_CONFIG_HOME": filepath.Join(root, "xdg", "config"),
			"XDG_CACHE_HOME":  filepath.Join(root, "xdg", "cache"),
			"XDG_STATE_HOME":  filepath.Join(root, "xdg", "state"),
		},
		mode: mode,
	}
	for _, d := range []string{p.dir, p.outside, p.home, filepath.Join(root, "tmp"), filepath.Join(root, "slim-state")} {
		mustMkdir(t, d)
	}
	for _, d := range p.xdg {
		mustMkdir(t, d)
	}
	for rel, content := range files {
		p.write(rel, content)
	}
	// Pitfall 1: without a seeded node_modules and lock file in every config
	// dir the host npm-installs its plugin package (and hangs offline).
	for _, d := range []string{filepath.Join(p.dir, ".opencode"), filepath.Join(p.xdg["XDG_CONFIG_HOME"], "opencode")} {
		mustMkdir(t, filepath.Join(d, "node_modules"))
		mustWrite(t, filepath.Join(d, "package-lock.json"), `{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}`+"\n")
	}
	// The repository exists before the installer runs, so that it writes
	// into this project and never into a repository around it.
	p.git("init", "-q")
	switch mode {
	case withSlim:
		p.slimBin = slimBinary(t)
		p.installPlugin()
	case slimMissing:
		p.installPlugin()
		p.slimBin = filepath.Join(root, "no-such-dir", "slim")
	case slimTwice:
		p.slimBin = slimBinary(t)
		p.installPlugin()
		p.installPlugin("--global")
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "initial")
	return p
}

// installPlugin runs the real `slim hooks install --opencode` in the project,
// with any extra flags (--global).
func (p *project) installPlugin(flags ...string) {
	t := p.t
	t.Helper()
	bin := slimBinary(t)
	if out, err := exec.Command(bin, "hooks", "install", "--help").CombinedOutput(); err != nil {
		unavailable(t, "waiting on `slim hooks install --opencode`: %v: %s", err, firstLines(string(out), 3))
	}
	args := append([]string{"hooks", "install", "--opencode"}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = p.dir
	cmd.Env = p.baseEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("slim %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	plugin := filepath.Join(p.dir, ".opencode", "plugin", "slim.js")
	if len(flags) > 0 && flags[0] == "--global" {
		plugin = filepath.Join(p.xdg["XDG_CONFIG_HOME"], "opencode", "plugin", "slim.js")
	}
	if _, err := os.Stat(plugin); err != nil {
		t.Fatalf("slim %s did not write %s: %v\n%s", strings.Join(args, " "), plugin, err, out)
	}
}

func (p *project) git(args ...string) {
	p.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false"}, args...)...)
	cmd.Dir = p.dir
	cmd.Env = append(p.baseEnv(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// path returns the absolute path of a project-relative file.
func (p *project) path(rel string) string { return filepath.Join(p.dir, filepath.FromSlash(rel)) }

func (p *project) write(rel, content string) {
	p.t.Helper()
	full := p.path(rel)
	mustMkdir(p.t, filepath.Dir(full))
	mustWrite(p.t, full, content)
}

// cleanPath keeps PATH but drops any directory holding a `slim`, so the
// plugin can only find slim through SLIM_BIN.
func cleanPath() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(d, "slim")); err == nil && !fi.IsDir() {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// baseEnv is the whole environment of the host and of git: nothing is
// inherited but PATH, so no user config, token or proxy leaks in.
func (p *project) baseEnv() []string {
	env := []string{
		"PATH=" + cleanPath(),
		"HOME=" + p.home,
		"TMPDIR=" + filepath.Join(p.root, "tmp"),
		"LANG=C.UTF-8",
		"SLIM_STATE_DIR=" + filepath.Join(p.root, "slim-state"),
		"SLIM_PLUGIN_LOG=" + filepath.Join(p.root, "slim-plugin.log"),
		"SLIM_LOG_FILE=" + filepath.Join(p.root, "slim.log"),
		"SLIM_LOG_LEVEL=debug",
		// Hook calls share two cores with the host; be generous so a slow
		// machine does not turn into a silent pass.
		"SLIM_HOOK_TIMEOUT_MS=20000",
		"GIT_CONFIG_NOSYSTEM=1",
	}
	for k, v := range p.xdg {
		env = append(env, k+"="+v)
	}
	return env
}

// hostEnv adds the host's switches: no update check, no models.dev fetch,
// no default plugins, no LSP downloads, no sharing, no foreign skills.
func (p *project) hostEnv() []string {
	env := append(p.baseEnv(),
		"OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1",
		"OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
	)
	if p.slimBin != "" {
		env = append(env, "SLIM_BIN="+p.slimBin)
	}
	return append(env, p.env...)
}

// writeConfig writes opencode.json for a provider at baseURL.
func (p *project) writeConfig(baseURL string) {
	p.t.Helper()
	cfg := map[string]any{
		"$schema":           "https://opencode.ai/config.json",
		"autoupdate":        false,
		"share":             "disabled",
		"enabled_providers": []string{"fake"},
		"model":             "fake/" + modelID,
		"small_model":       "fake/" + modelID,
		"lsp":               false,
		"formatter":         p.formatterSetting(),
		// No per-step git snapshots of the project: nothing here reverts.
		"snapshot": false,
		// Allow everything, so that only slim can stop a call: a missing
		// block shows up as a written file instead of a host refusal.
		"permission": p.permissionRules(),
		"provider": map[string]any{
			"fake": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Scripted fake provider",
				"options": map[string]any{"baseURL": baseURL, "apiKey": "dummy"},
				"models": map[string]any{
					modelID: map[string]any{"name": modelID, "tool_call": true, "limit": map[string]any{"context": 128000, "output": 4096}},
				},
			},
		},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		p.t.Fatal(err)
	}
	mustWrite(p.t, filepath.Join(p.dir, "opencode.json"), string(b)+"\n")
}

// formatterSetting is the host's "formatter" setting: false unless the
// test set one.
func (p *project) formatterSetting() any {
	if p.formatter == nil {
		return false
	}
	return p.formatter
}

// permissionRules are the host's permission rules: everything allowed,
// unless the test set its own.
func (p *project) permissionRules() map[string]any {
	if p.permission != nil {
		return p.permission
	}
	return map[string]any{"*": "allow"}
}

// toolEvent is one tool_use event of `opencode run --format json`.
type toolEvent = ocevents.ToolPart

// hostRun is what one `opencode run` left behind.
type hostRun struct {
	provider *fakeprovider.Server
	dir      string // run artifacts
	stdout   string
	stderr   string
	tools    []toolEvent
	elapsed  time.Duration
	pid      int // the host's process (and process group) id
	exitErr  error
	timedOut bool
}

// run starts a fake provider with script, points the project at it and runs
// the host once. It fails the test on a timeout or when the host made no
// request at all; everything else is for the caller to assert.
func (p *project) run(script ...fakeprovider.Turn) *hostRun {
	t := p.t
	t.Helper()
	r := p.runWithTimeout(runTimeout, script...)
	if r.timedOut {
		t.Fatalf("opencode run hit the %s timeout and was killed", runTimeout)
	}
	if len(r.provider.ScriptedRequests()) == 0 {
		t.Fatalf("the host never asked the fake provider (exit %v)", r.exitErr)
	}
	p.checkPlugin(r)
	return r
}

// streamAgent matches the log line (--print-logs, INFO) the host writes
// for every model request, which names the agent the request is for.
var streamAgent = regexp.MustCompile(`(?m)\bmessage=stream\b.*\bsmall=false\b.*\bagent=(\S+)`)

// agents lists, in order, the agent of each model request of the run
// except the host's small-model (title) requests, as the host logged them.
// It is how a test knows that `--agent` took: the host runs its default
// agent instead of an unknown one and only warns.
func (r *hostRun) agents() []string {
	var out []string
	for _, m := range streamAgent.FindAllStringSubmatch(r.stderr, -1) {
		out = append(out, m[1])
	}
	return out
}

// checkPlugin fails the test when the host could not load the plugin or the
// plugin logged a problem with slim. A plugin that fails to load does not
// fail the run (pitfall 3), and the plugin passes every call when slim
// misbehaves; both must be seen here.
func (p *project) checkPlugin(r *hostRun) {
	t := p.t
	t.Helper()
	if p.mode != noPlugin && strings.Contains(r.stderr, "failed to load plugin") {
		t.Errorf("the host failed to load the slim plugin")
	}
	if p.mode == withSlim || p.mode == slimTwice {
		for _, line := range strings.Split(p.pluginLog(), "\n") {
			if strings.Contains(line, `"level":"warn"`) || strings.Contains(line, `"level":"error"`) {
				t.Errorf("the plugin logged a problem with slim: %s", clip(line, 600))
			}
		}
	}
}

// runWithTimeout runs the host once under the given hard timeout and
// reports what happened, timeouts included, without judging it.
func (p *project) runWithTimeout(timeout time.Duration, script ...fakeprovider.Turn) *hostRun {
	t := p.t
	t.Helper()
	bin := hostBinary(t)
	p.runs++
	r := &hostRun{dir: filepath.Join(p.root, fmt.Sprintf("run%d", p.runs))}
	mustMkdir(t, r.dir)
	srv, err := fakeprovider.Start(script, fakeprovider.Options{LogPath: filepath.Join(r.dir, "requests.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	r.provider = srv
	p.writeConfig(srv.BaseURL())

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"run", "--format", "json", "--title", "e2e", "--print-logs", "--log-level", "INFO"}
	if p.agent != "" {
		args = append(args, "--agent", p.agent)
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "do it")...)
	cmd.Dir = p.dir
	cmd.Env = p.hostEnv()
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	inOwnProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Start()
	if err != nil {
		srv.Close()
		t.Fatalf("start opencode: %v", err)
	}
	r.pid = cmd.Process.Pid
	r.exitErr = cmd.Wait()
	r.elapsed = time.Since(start)
	// Whatever the host left running in its group goes too.
	_ = killGroup(cmd)
	r.timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	if err := srv.Close(); err != nil {
		t.Errorf("fake provider: %v", err)
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	mustWrite(t, filepath.Join(r.dir, "stdout.jsonl"), r.stdout)
	mustWrite(t, filepath.Join(r.dir, "stderr.log"), r.stderr)
	r.tools = parseToolEvents(r.stdout)
	var cpu time.Duration
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	t.Logf("opencode run (%s): %.1fs wall, %.1fs CPU, %d requests, exit %v", p.mode, r.elapsed.Seconds(), cpu.Seconds(), len(srv.Requests()), r.exitErr)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(p.diagnostics(r))
		}
	})
	return r
}

// serveStartTimeout bounds how long `opencode serve` may take to listen.
const serveStartTimeout = 60 * time.Second

// hostServer is one `opencode serve` in the project: a real HTTP server on
// 127.0.0.1 that the plugin, and through it slim, can talk to (the server
// of `opencode run` is not reachable from outside the process). Its
// hostRun collects the same artifacts as a run once the server stops.
type hostServer struct {
	*hostRun
	p      *project
	url    string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	ctx    context.Context    // ends runTimeout after the start
	cancel context.CancelFunc // kills the process group
	exited chan error         // receives cmd.Wait's error once
	out    *lockedBuffer
	errOut *lockedBuffer
	start  time.Time
	once   sync.Once
}

// lockedBuffer is a bytes.Buffer a running process writes to while the
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// listening is the line `opencode serve` prints once it accepts requests.
var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)

// serve starts a fake provider with script and opts (its LogPath is set
// here), points the project at it and starts `opencode serve` on
// 127.0.0.1 in the project, with the environment of a run. With --port 0
// the host takes its usual port when it is free and any free one
// otherwise. serve returns once the server listens; the test's cleanup
// stops it, kills its process group and closes the provider.
func (p *project) serve(script []fakeprovider.Turn, opts fakeprovider.Options) *hostServer {
	t := p.t
	t.Helper()
	bin := hostBinary(t)
	p.runs++
	r := &hostRun{dir: filepath.Join(p.root, fmt.Sprintf("run%d", p.runs))}
	mustMkdir(t, r.dir)
	opts.LogPath = filepath.Join(r.dir, "requests.jsonl")
	srv, err := fakeprovider.Start(script, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.provider = srv
	p.writeConfig(srv.BaseURL())

	// The server lives at most runTimeout, like one run; cancelling kills
	// its process group.
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	cmd := exec.CommandContext(ctx, bin, "serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs", "--log-level", "INFO")
	cmd.Dir = p.dir
	cmd.Env = p.hostEnv()
	s := &hostServer{hostRun: r, p: p, cmd: cmd, ctx: ctx, cancel: cancel, exited: make(chan error, 1), out: &lockedBuffer{}, errOut: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = s.out, s.errOut
	inOwnProcessGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	s.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		srv.Close()
		t.Fatalf("start opencode serve: %v", err)
	}
	r.pid = cmd.Process.Pid
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Log(p.diagnostics(r))
		}
	})
	deadline := time.NewTimer(serveStartTimeout)
	defer deadline.Stop()
	for {
		if m := listening.FindStringSubmatch(s.out.String() + s.errOut.String()); m != nil {
			s.url = m[1]
			break
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			t.Fatalf("opencode serve exited before it listened: %v\n%s", err, tail(s.errOut.String(), 20))
		case <-deadline.C:
			t.Fatalf("opencode serve did not listen within %s", serveStartTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Logf("opencode serve (%s) listens on %s after %.1fs", p.mode, s.url, time.Since(s.start).Seconds())
	return s
}

// stop kills the server's process group, waits for it and closes the
// provider, keeping the artifacts as a run does, and checks the plugin as a
// run is checked. Later calls do nothing.
func (s *hostServer) stop() {
	s.once.Do(func() {
		_ = killGroup(s.cmd)
		s.exitErr = <-s.exited
		s.timedOut = errors.Is(s.ctx.Err(), context.DeadlineExceeded)
		s.cancel()
		s.elapsed = time.Since(s.start)
		t := s.p.t
		if s.timedOut {
			t.Errorf("opencode serve hit the %s timeout and was killed", runTimeout)
		}
		if err := s.provider.Close(); err != nil {
			t.Errorf("fake provider: %v", err)
		}
		s.stdout, s.stderr = s.out.String(), s.errOut.String()
		mustWrite(t, filepath.Join(s.dir, "stdout.log"), s.stdout)
		mustWrite(t, filepath.Join(s.dir, "stderr.log"), s.stderr)
		var cpu time.Duration
		if ps := s.cmd.ProcessState; ps != nil {
			cpu = ps.UserTime() + ps.SystemTime()
		}
		t.Logf("opencode serve (%s): %.1fs wall, %.1fs CPU, %d requests", s.p.mode, s.elapsed.Seconds(), cpu.Seconds(), len(s.provider.Requests()))
		s.p.checkPlugin(s.hostRun)
	})
}

// api sends one request to the server's HTTP API (a JSON body when body is
// not nil) and decodes a JSON answer into out when out is not nil. A
// transport failure or a status other than 2xx fails t.
func (s *hostServer) api(t *testing.T, method, path string, body, out any, timeout time.Duration) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, clip(string(data), 600))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode the answer: %v: %s", method, path, err, clip(string(data), 600))
		}
	}
}

// hostMessage is one message of a session as the server's API returns it:
// its info and parts, with the fields the tests read.
type hostMessage struct {
	Info struct {
		ID    string `json:"id"`
		Role  string `json:"role"`
		Error *struct {
			Name string `json:"name"`
		} `json:"error"`
	} `json:"info"`
	Parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"parts"`
}

// text is the message's text parts, joined.
func (m hostMessage) text() string {
	var b strings.Builder
	for _, part := range m.Parts {
		if part.Type == "text" {
			b.WriteString(part.Text)
		}
	}
	return b.String()
}

// session creates a session (POST /session) and returns its ID.
func (s *hostServer) session() string {
	s.p.t.Helper()
	var sess struct {
		ID string `json:"id"`
	}
	s.api(s.p.t, http.MethodPost, "/session", map[string]any{}, &sess, 30*time.Second)
	if sess.ID == "" {
		s.p.t.Fatal("POST /session answered no session id")
	}
	return sess.ID
}

// prompt sends text to a session as the user (POST /session/{id}/message),
// which answers when the session's turn loop has ended, with its last
// assistant message.
func (s *hostServer) prompt(sessionID, text string) hostMessage {
	s.p.t.Helper()
	var m hostMessage
	s.api(s.p.t, http.MethodPost, "/session/"+sessionID+"/message", map[string]any{"parts": []any{map[string]any{"type": "text", "text": text}}}, &m, runTimeout)
	return m
}

func parseToolEvents(stdout string) []toolEvent {
	parts, _, _ := ocevents.Parse([]byte(stdout))
	return parts
}

// result returns the tool content the model received for the i-th call of
// script turn turn (both from 0).
func (r *hostRun) result(t *testing.T, turn, i int) string {
	t.Helper()
	id := fakeprovider.CallID(turn, i)
	res, ok := r.provider.ToolResult(id)
	if !ok {
		t.Fatalf("the model never received a result for %s (turn %d)", id, turn)
	}
	return res.Content
}

// diagnostics summarizes a run for a failing test.
func (p *project) diagnostics(r *hostRun) string {
	var b strings.Builder
	where := "set SLIM_E2E_KEEP=DIR to keep the artifacts"
	if os.Getenv("SLIM_E2E_KEEP") != "" {
		where = "artifacts in " + r.dir
	}
	fmt.Fprintf(&b, "--- diagnostics (%s; %s)\n", p.mode, where)
	fmt.Fprintf(&b, "exit: %v, elapsed %.1fs\n", r.exitErr, r.elapsed.Seconds())
	for _, ev := range r.tools {
		fmt.Fprintf(&b, "host tool part %s %s: %s %s\n", ev.CallID, ev.Tool, ev.Status, clip(ev.Error, 300))
	}
	for _, tr := range r.provider.ToolResults() {
		fmt.Fprintf(&b, "tool result %s (%s): %s\n", tr.CallID, tr.Tool, clip(tr.Content, 600))
	}
	for _, name := range []string{"slim-plugin.log", "slim.log"} {
		if data, err := os.ReadFile(filepath.Join(p.root, name)); err == nil {
			fmt.Fprintf(&b, "%s (tail):\n%s\n", name, tail(string(data), 30))
		}
	}
	var errs []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") || strings.Contains(l, "failed to load plugin") {
			errs = append(errs, clip(l, 400))
		}
	}
	fmt.Fprintf(&b, "host stderr, ERROR/WARN lines (last 20):\n%s\n", tail(strings.Join(errs, "\n"), 20))
	return b.String()
}

// pluginLog returns the plugin's own log (SLIM_PLUGIN_LOG).
func (p *project) pluginLog() string {
	b, _ := os.ReadFile(filepath.Join(p.root, "slim-plugin.log"))
	return string(b)
}

// slimLog is what slim logged in the project's runs (SLIM_LOG_FILE, at
// debug level).
func (p *project) slimLog() string {
	b, _ := os.ReadFile(filepath.Join(p.root, "slim.log"))
	return string(b)
}

// servedRuns counts the commands named command ("fetch", "search ast",
// "tasks status") that the resident slim ran for the plugin, by their exit
// code, as slim's log records them.
func (p *project) servedRuns(command string) map[int]int {
	runs := map[int]int{}
	for _, line := range strings.Split(p.slimLog(), "\n") {
		var e struct {
			Message string `json:"message"`
			Command string `json:"command"`
			Exit    int    `json:"exit"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Message == "hook serve: ran" && e.Command == command {
			runs[e.Exit]++
		}
	}
	return runs
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("... (%d bytes)", len(s))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " / ")
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantRuleObeyed checks how the host treated a plugin tool under a
// permission rule for it: under "ask" the tool is offered and every call
// of it ends in the host's own refusal (a non-interactive run can ask
// nobody); under "deny" the host does not offer it at all.
func wantRuleObeyed(t *testing.T, r *hostRun, tool, rule string) {
	t.Helper()
	offered := contains(r.provider.ScriptedRequests()[0].Tools, tool)
	switch rule {
	case "ask":
		if !offered {
			t.Fatalf("under an ask rule the host did not offer %s", tool)
		}
		var found bool
		for _, ev := range r.tools {
			if ev.Tool != tool {
				continue
			}
			found = true
			if ev.Status != "error" || !strings.HasPrefix(ev.Error, hostRejected) {
				t.Errorf("%s under an ask rule: want the host's refusal %q, got %s %q", tool, hostRejected, ev.Status, clip(ev.Error+ev.Output, 500))
			}
		}
		if !found {
			t.Errorf("the host reported no %s call", tool)
		}
	case "deny":
		if offered {
			t.Errorf("under a deny rule the host still offered %s", tool)
		}
	default:
		t.Fatalf("unknown rule %q", rule)
	}
}
