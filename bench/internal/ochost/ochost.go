// Package ochost runs the real OpenCode host for the benchmarks under
// bench/: an isolated project (its own HOME, XDG folders, temporary and
// slim state folders, so no user setting, token or cache of the machine
// takes part), optionally slim's plugin as `slim hooks install --opencode`
// writes it, an opencode.json that points the host at a scripted fake
// provider on 127.0.0.1, and one `opencode run --format json` whose tool
// parts, with the host's own times, it reads back.
//
// A tool part's time is the host's record of the call, from the moment it
// runs to its result, plugin hooks included; a run's wall time is the whole
// `opencode run` process, start-up and shutdown included.
package ochost

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
	"time"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// ModelID is the fake provider's model. Its name starts with "gpt-", so
// the host offers apply_patch (and not edit and write).
const ModelID = "gpt-5-fake"

// Project is one throw-away project with an isolated host environment,
// all of it under Root.
type Project struct {
	// Root holds everything below, and the artifacts of a run
	// (stdout.jsonl, stderr.log).
	Root string
	// Dir is the project: a git work tree and the host's working directory.
	Dir string
	// StateDir is slim's state folder (SLIM_STATE_DIR).
	StateDir string
	// PluginLog is the plugin's log file (SLIM_PLUGIN_LOG).
	PluginLog string
	env       []string
}

// New makes a project under root (created if needed) holding files
// (slash-separated relative path to content), with git initialised in it.
// slim is the binary the plugin runs (SLIM_BIN), if a plugin is installed.
func New(root, slim string, files map[string]string) (*Project, error) {
	p := &Project{
		Root:      root,
		Dir:       filepath.Join(root, "proj"),
		StateDir:  filepath.Join(root, "state"),
		PluginLog: filepath.Join(root, "plugin.log"),
	}
	home, tmp := filepath.Join(root, "home"), filepath.Join(root, "tmp")
	dirs := []string{p.Dir, home, tmp, p.StateDir}
	p.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8",
		"SLIM_BIN=" + slim, "SLIM_STATE_DIR=" + p.StateDir, "SLIM_PLUGIN_LOG=" + p.PluginLog,
		"GIT_CONFIG_NOSYSTEM=1",
		// No update check, no models.dev fetch, no default plugins, no
		// language-server downloads, no sharing, no foreign skills.
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
	}
	var config string
	for _, k := range []string{"DATA", "CONFIG", "CACHE", "STATE"} {
		d := filepath.Join(root, "xdg", strings.ToLower(k))
		if k == "CONFIG" {
			config = d
		}
		dirs = append(dirs, d)
		p.env = append(p.env, "XDG_"+k+"_HOME="+d)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, setupErr(err)
		}
	}
	// Without a seeded node_modules and lock file in every config folder
	// the host tries to install its plugin package from the network.
	for _, d := range []string{filepath.Join(p.Dir, ".opencode"), filepath.Join(config, "opencode")} {
		if err := os.MkdirAll(filepath.Join(d, "node_modules"), 0o755); err != nil {
			return nil, setupErr(err)
		}
		if err := os.WriteFile(filepath.Join(d, "package-lock.json"), []byte(`{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}`+"\n"), 0o644); err != nil {
			return nil, setupErr(err)
		}
	}
	for rel, content := range files {
		full := filepath.Join(p.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, setupErr(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return nil, setupErr(err)
		}
	}
	// The repository exists before any installer runs, so that it writes
	// into this project and never into a repository around it.
	if out, err := p.command("git", "init", "-q"); err != nil {
		return nil, newErr(Setup, CodeSetup, fmt.Sprintf("git init in %s: %v: %s", p.Dir, err, bytes.TrimSpace(out)), err)
	}
	return p, nil
}

func setupErr(err error) *Error {
	return newErr(Setup, CodeSetup, "making the benchmark project: "+err.Error(), err)
}

// Env returns the whole environment of the host (and so of the plugin
// and of slim): nothing of the caller's is inherited but PATH.
func (p *Project) Env() []string { return append([]string(nil), p.env...) }

// AddEnv adds KEY=value entries to the host's environment, for the runs
// that follow.
func (p *Project) AddEnv(kv ...string) { p.env = append(p.env, kv...) }

// Path returns the absolute path of a slash-separated project-relative
// file.
func (p *Project) Path(rel string) string { return filepath.Join(p.Dir, filepath.FromSlash(rel)) }

// Install runs `slim hooks install --opencode` with any extra flags in the
// project, and checks that it wrote the plugin.
func (p *Project) Install(slim string, flags ...string) error {
	args := append([]string{"hooks", "install", "--opencode"}, flags...)
	if out, err := p.command(slim, args...); err != nil {
		return newErr(Setup, CodeInstall, fmt.Sprintf("slim %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out)), err)
	}
	if _, err := os.Stat(filepath.Join(p.Dir, ".opencode", "plugin", "slim.js")); err != nil {
		return newErr(Setup, CodeInstall, fmt.Sprintf("slim %s wrote no .opencode/plugin/slim.js", strings.Join(args, " ")), err)
	}
	return nil
}

func (p *Project) command(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = p.Dir, p.env
	return cmd.CombinedOutput()
}

// WriteConfig writes the project's opencode.json: the fake provider at
// baseURL is the only one, with ModelID as the model; everything is
// allowed, and no language server, formatter or snapshot runs.
func (p *Project) WriteConfig(baseURL string) error {
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
		"enabled_providers": []string{"fake"}, "model": "fake/" + ModelID, "small_model": "fake/" + ModelID,
		"lsp": false, "formatter": false, "snapshot": false, "permission": map[string]any{"*": "allow"},
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "fake",
			"options": map[string]any{"baseURL": baseURL, "apiKey": "dummy"},
			"models":  map[string]any{ModelID: map[string]any{"name": ModelID, "tool_call": true, "limit": map[string]any{"context": 128000, "output": 4096}}},
		}},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return setupErr(err)
	}
	if err := os.WriteFile(filepath.Join(p.Dir, "opencode.json"), append(b, '\n'), 0o644); err != nil {
		return setupErr(err)
	}
	return nil
}

// Run is what one `opencode run` left behind.
type Run struct {
	// Wall is the whole process, from start to exit.
	Wall time.Duration
	// CPU is the user and system time of the host and of every process it
	// waited for (the plugin's slim runs among them).
	CPU time.Duration
	// Parts are the tool parts the host reported, in the order it did.
	Parts []Part
	// SessionID is the session the run's events belong to.
	SessionID string
	// Requests are the requests that reached the fake provider, in order
	// (what the model was offered and shown).
	Requests []fp.Request
	// Stdout and Stderr are the host's output, also kept as
	// Root/stdout.jsonl and Root/stderr.log.
	Stdout, Stderr []byte
}

// Run starts a fake provider with script, points the project at it and
// runs the host once, killed (with everything it started) after timeout.
// A host that exits with an error, or events that cannot be timed, are an
// error; whether the calls did what they should is for the caller to
// judge from the parts.
func (p *Project) Run(opencode string, script []fp.Turn, timeout time.Duration) (*Run, error) {
	srv, err := fp.Start(script, fp.Options{})
	if err != nil {
		return nil, newErr(Host, CodeProvider, "starting the fake provider: "+err.Error(), err)
	}
	defer srv.Close()
	if err := p.WriteConfig(srv.BaseURL()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, opencode, "run", "--format", "json", "--title", "bench", "do it")
	cmd.Dir, cmd.Env = p.Dir, p.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownGroup(cmd)
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	r := &Run{Wall: time.Since(start), Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if ps := cmd.ProcessState; ps != nil {
		r.CPU = ps.UserTime() + ps.SystemTime()
	}
	// Whatever the host left running goes too, so it cannot slow the next run.
	killGroup(cmd)
	r.Requests = srv.Requests()
	os.WriteFile(filepath.Join(p.Root, "stdout.jsonl"), r.Stdout, 0o644)
	os.WriteFile(filepath.Join(p.Root, "stderr.log"), r.Stderr, 0o644)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return r, newErr(Host, CodeTimeout, fmt.Sprintf("opencode run was killed after %s (artifacts in %s)", timeout, p.Root), ctx.Err())
	}
	if err != nil {
		return r, newErr(Host, CodeRun, fmt.Sprintf("opencode run: %v: %s (artifacts in %s)", err, tail(r.Stderr, 400), p.Root), err)
	}
	r.Parts, r.SessionID, err = ParseParts(r.Stdout)
	if err != nil {
		return r, err
	}
	return r, nil
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// PluginProblems returns the lines of the plugin's log at level warn or
// error: the plugin passes a call when slim fails, so a run that looks
// fine may not have been checked at all.
func (p *Project) PluginProblems() ([]string, error) {
	b, err := os.ReadFile(p.PluginLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, setupErr(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		var entry struct {
			Level string `json:"level"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && (entry.Level == "warn" || entry.Level == "error") {
			out = append(out, line)
		}
	}
	return out, nil
}
