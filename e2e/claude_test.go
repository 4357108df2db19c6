package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/fakeanthropic"
	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// claudePinnedVersion is the Claude Code release these tests are written
// against (e2e/package.json pins the same).
const claudePinnedVersion = "2.1.332"

// claudeRunTimeout is the hard cap on one `claude -p`; its process group is
// killed when it is reached. A healthy run takes a few seconds.
const claudeRunTimeout = 90 * time.Second

// claudeHost is the pinned Claude Code (SLIM_E2E_CLAUDE overrides the one
// in node_modules); its --version starts with the version.
var claudeHost = &pinnedHost{
	name: "claude", override: "SLIM_E2E_CLAUDE", want: claudePinnedVersion,
	env: func() []string {
		return append(cleanEnv(filepath.Join(os.TempDir(), "slim-e2e-claude-version")), claudeSwitches()...)
	},
	version: func(out string) string { v, _, _ := strings.Cut(out, " "); return v },
}

// claudeBinary returns the pinned claude binary, or skips/fails the test.
func claudeBinary(t *testing.T) string { return claudeHost.binary(t) }

// cleanEnv is an environment with nothing inherited but PATH (stripped of
// any slim), and home at home.
func cleanEnv(home string) []string {
	return []string{"PATH=" + cleanPath(), "HOME=" + home, "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1"}
}

// claudeSwitches keep Claude Code off the network and out of the user's
// account: a dummy API key (so it never looks for a login), no telemetry,
// error reports, update checks or other traffic beyond the model requests.
func claudeSwitches() []string {
	return []string{
		"ANTHROPIC_API_KEY=sk-ant-e2e-dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_BUG_COMMAND=1",
		"DISABLE_COST_WARNINGS=1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
		"IS_SANDBOX=1",
	}
}

// claudeProject is one throw-away git project with slim's Claude Code hooks
// installed by the real `slim hooks install --claude-code`, and an
// isolated home for the host.
type claudeProject struct{ *hookProject }

func newClaudeProject(t *testing.T, files map[string]string) *claudeProject {
	t.Helper()
	return &claudeProject{newHookProject(t, claudeBinary(t), files, "--claude-code",
		func(p *hookProject) []string {
			return append(claudeSwitches(), "CLAUDE_CONFIG_DIR="+filepath.Join(p.home, ".claude"))
		}, ".claude")}
}

// claudeRun is what one `claude -p` left behind.
type claudeRun struct {
	hookRun
	provider *fakeanthropic.Server
}

// run starts `claude -p` in the project against a fake provider serving
// script, with the file tools allowed (so that every refusal is slim's),
// and waits for it.
func (p *claudeProject) run(script ...fp.Turn) *claudeRun {
	t := p.t
	t.Helper()
	srv, err := fakeanthropic.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	hr := runHook(p.hookProject, hookCommand{
		host: "claude", run: "claude -p",
		args: []string{"-p", "do it", "--output-format", "stream-json", "--verbose",
			"--model", "claude-sonnet-4-5", "--no-session-persistence", "--strict-mcp-config",
			"--allowedTools", "Read,Write,Edit,MultiEdit,NotebookEdit",
			"--debug-file", filepath.Join(p.root, "claude-debug.log")},
		env:       []string{"ANTHROPIC_BASE_URL=" + srv.BaseURL()},
		timeout:   claudeRunTimeout,
		stdoutLog: "stdout.jsonl", keepRequests: true, fake: "fake provider",
		outTail: 4000, errTail: 2000,
		seen: func(b *strings.Builder) {
			for _, q := range srv.Requests() {
				fmt.Fprintf(b, "--- request %d %s turn %d tools %d messages %d\n", q.Seq, q.Path, q.Turn, len(q.Tools), len(q.Messages))
			}
			for _, tr := range srv.ToolResults() {
				fmt.Fprintf(b, "--- result %s (%s, error %v): %s\n", tr.CallID, tr.Tool, tr.IsError, clip(tr.Content, 400))
			}
		},
		logs: []rootLog{{"claude debug log", "claude-debug.log", 4000}},
	}, srv)
	return &claudeRun{hookRun: hr, provider: srv}
}

// result is the tool result the model was sent for the i-th call of turn.
func (r *claudeRun) result(t *testing.T, turn, i int) fakeanthropic.ToolResult {
	t.Helper()
	return received(t, fakeanthropic.CallID(turn, i), r.provider.ToolResult)
}

// TestClaudeOutsideWriteDenied: Claude Code's Write of a file beside the
// project is denied by slim's PreToolUse hook; the file never appears and
// the model is told slim's reason.
func TestClaudeOutsideWriteDenied(t *testing.T) {
	p := newClaudeProject(t, map[string]string{"a.txt": "a\n"})
	target := filepath.Join(p.outside, "evil.txt")
	r := p.run(
		fp.Calls(fp.Call("Write", map[string]string{"file_path": target, "content": "pwned\n"})),
		fp.Text("done"),
	)
	if r.exitErr != nil {
		t.Fatalf("claude -p failed: %v", r.exitErr)
	}
	wantAbsent(t, target)
	tr := r.result(t, 0, 0)
	if !strings.Contains(tr.Content, "Write blocked") || !strings.Contains(tr.Content, "outside") {
		t.Errorf("the model was not told slim's reason; it got %q", tr.Content)
	}
}

// TestClaudeRepeatedReadsStopped: the loop guard over Claude Code: from
// the 3rd identical Read on, the result carries the notice (slim's
// PostToolUse additionalContext, which Claude Code appends to the result),
// and the 6th is refused before it runs.
func TestClaudeRepeatedReadsStopped(t *testing.T) {
	p := newClaudeProject(t, map[string]string{"a.txt": "alpha\n"})
	read := fp.Call("Read", map[string]string{"file_path": filepath.Join(p.dir, "a.txt")})
	script := []fp.Turn{}
	for range 6 {
		script = append(script, fp.Calls(read))
	}
	r := p.run(append(script, fp.Text("done"))...)
	if r.exitErr != nil {
		t.Fatalf("claude -p failed: %v", r.exitErr)
	}
	const notice = "[REPEATED TOOL CALLS - STOP]"
	for turn := range 5 {
		tr := r.result(t, turn, 0)
		if !strings.Contains(tr.Content, "alpha") || tr.IsError {
			t.Errorf("read %d did not run: %q", turn+1, tr.Content)
		}
		if got := strings.Contains(tr.Content, notice); got != (turn >= 2) {
			t.Errorf("read %d: notice shown %v, want %v: %q", turn+1, got, turn >= 2, clip(tr.Content, 300))
		}
	}
	if tr := r.result(t, 5, 0); !strings.Contains(tr.Content, `Refusing to execute "Read"`) || !tr.IsError {
		t.Errorf("the 6th identical Read was not refused; the model got %q", tr.Content)
	}
}

// TestClaudeDriftedEditNeverReachesHooks pins down why slim's Edit rescue
// (hooks/claudecode/edit.go) does not act in this Claude Code release: an
// Edit whose old_string is not in the file as written (here: straight
// quotes where the file has curly ones, trailing spaces lost) is refused by
// Claude Code's own input validation, which runs before the PreToolUse
// hooks, so no hook is asked. When a release asks the hooks first, this
// test fails, and the rescue then applies: turn it into a test that the
// edit is rescued.
func TestClaudeDriftedEditNeverReachesHooks(t *testing.T) {
	const before = "def greet(name):\n    message = \u201cHello, \u201d + name   \n    print(message)\n    return message\n"
	p := newClaudeProject(t, map[string]string{"greet.py": before})
	path := filepath.Join(p.dir, "greet.py")
	r := p.run(
		fp.Calls(fp.Call("Read", map[string]string{"file_path": path})),
		fp.Calls(fp.Call("Edit", map[string]string{"file_path": path,
			"old_string": "    message = \"Hello, \" + name\n    print(message)\n",
			"new_string": "    message = \"Hello, \" + name\n    print(message.upper())\n"})),
		// An Edit whose old_string is in the file: the control, which does
		// reach slim's PreToolUse.
		fp.Calls(fp.Call("Edit", map[string]string{"file_path": path, "old_string": "    return message\n", "new_string": "    return None\n"})),
		fp.Text("done"),
	)
	if r.exitErr != nil {
		t.Fatalf("claude -p failed: %v", r.exitErr)
	}
	if tr := r.result(t, 1, 0); !tr.IsError || !strings.Contains(tr.Content, "String to replace not found in file") {
		t.Errorf("Claude Code no longer refuses the drifted Edit itself; the model got %q", tr.Content)
	}
	if tr := r.result(t, 2, 0); tr.IsError {
		t.Errorf("the control Edit failed: %q", tr.Content)
	}
	debug, err := os.ReadFile(filepath.Join(p.root, "claude-debug.log"))
	if err != nil {
		t.Fatal(err)
	}
	// One PreToolUse for the two Edits: the control's.
	if n := bytes.Count(debug, []byte("PreToolUse:Edit [slim hook --host claude-code] finished")); n != 1 {
		t.Errorf("slim's PreToolUse ran %d times for the two Edits, want once (the control only); if twice, Claude Code now asks the hooks about a drifted Edit and slim's Edit rescue can act: test it here", n)
	}
	want := strings.Replace(before, "return message", "return None", 1)
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("greet.py\n got %q\nwant %q", got, want)
	}
}

// TestClaudeOutsideNotebookEditDenied: a NotebookEdit of a notebook beside
// the project (read first, as Claude Code requires) is denied by slim's
// PreToolUse hook; the notebook is left as it was and the model is told
// slim's reason.
func TestClaudeOutsideNotebookEditDenied(t *testing.T) {
	p := newClaudeProject(t, map[string]string{"a.txt": "a\n"})
	const notebook = `{"cells":[{"cell_type":"code","id":"c1","metadata":{},"source":["x = 1"],"outputs":[],"execution_count":null}],"metadata":{},"nbformat":4,"nbformat_minor":5}`
	nb := filepath.Join(p.outside, "n.ipynb")
	mustWrite(t, nb, notebook)
	r := p.run(
		fp.Calls(fp.Call("Read", map[string]string{"file_path": nb})),
		fp.Calls(fp.Call("NotebookEdit", map[string]string{"notebook_path": nb, "cell_id": "c1", "new_source": "x = 2", "edit_mode": "replace"})),
		fp.Text("done"),
	)
	if r.exitErr != nil {
		t.Fatalf("claude -p failed: %v", r.exitErr)
	}
	if tr := r.result(t, 0, 0); tr.IsError || !strings.Contains(tr.Content, "x = 1") {
		t.Errorf("the Read of the notebook did not run: %q", tr.Content)
	}
	if tr := r.result(t, 1, 0); !tr.IsError || !strings.Contains(tr.Content, "NotebookEdit blocked") || !strings.Contains(tr.Content, "outside") {
		t.Errorf("the model was not told slim's reason; it got %q", tr.Content)
	}
	if got, _ := os.ReadFile(nb); string(got) != notebook {
		t.Errorf("the notebook beside the project was changed:\n%s", got)
	}
}

// TestClaudeOffersNoGrepOrGlob pins down why slim's grep/glob path
// pre-check does not act in this Claude Code release: it offers the model
// no Grep and no Glob tool (searches go through Bash) and answers such a
// call "No such tool available" itself, so no hook is asked, even for a
// path that does not exist. When a release offers them again, this test
// fails: turn it into a test that a missing path is refused by slim.
func TestClaudeOffersNoGrepOrGlob(t *testing.T) {
	p := newClaudeProject(t, map[string]string{"src/a.go": "package a\n\nfunc Alpha() {}\n"})
	r := p.run(
		fp.Calls(fp.Call("Grep", map[string]string{"pattern": "Alpha", "path": filepath.Join(p.dir, "no", "such")})),
		fp.Calls(fp.Call("Glob", map[string]string{"pattern": "**/*.go", "path": filepath.Join(p.dir, "no", "such")})),
		fp.Text("done"),
	)
	if r.exitErr != nil {
		t.Fatalf("claude -p failed: %v", r.exitErr)
	}
	for turn, tool := range []string{"Grep", "Glob"} {
		if tr := r.result(t, turn, 0); !tr.IsError || !strings.Contains(tr.Content, "No such tool available: "+tool) {
			t.Errorf("Claude Code now runs %s (the model got %q): test slim's path pre-check through it here", tool, tr.Content)
		}
	}
	debug, err := os.ReadFile(filepath.Join(p.root, "claude-debug.log"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(debug, []byte("PreToolUse:Grep")) || bytes.Contains(debug, []byte("PreToolUse:Glob")) {
		t.Errorf("slim's PreToolUse ran for Grep or Glob: Claude Code now asks the hooks about them; test the pre-check here")
	}
}
