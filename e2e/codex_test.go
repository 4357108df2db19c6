package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
	"github.com/slimgate/slim/fixtures/fakeresponses"
)

// codexPinnedVersion is the Codex CLI release these tests are written
// against.
const codexPinnedVersion = "0.171.0"

// codexModel is a model Codex knows without asking a server, one it offers
// apply_patch to (as a freeform tool).
const codexModel = "gpt-5.5"

// codexRunTimeout is the hard cap on one `codex exec`; its process group is
// killed when it is reached. A healthy run takes a few seconds.
const codexRunTimeout = 90 * time.Second

// codexHost is the pinned Codex CLI (SLIM_E2E_CODEX overrides the one in
// node_modules); the version is the last line of its --version, after any
// warnings about its home.
var codexHost = &pinnedHost{
	name: "codex", override: "SLIM_E2E_CODEX", want: codexPinnedVersion,
	env: func() []string { return cleanEnv(filepath.Join(os.TempDir(), "slim-e2e-codex-version")) },
	version: func(out string) string {
		lines := strings.Split(out, "\n")
		return strings.TrimPrefix(lines[len(lines)-1], "codex-cli ")
	},
}

// codexBinary returns the pinned codex binary, or skips/fails the test.
func codexBinary(t *testing.T) string { return codexHost.binary(t) }

// codexProject is one throw-away git project with slim's Codex hooks
// installed by the real `slim hooks install --codex`, and an isolated home
// and CODEX_HOME for the host.
type codexProject struct {
	*hookProject
	codex string // CODEX_HOME
}

func newCodexProject(t *testing.T, files map[string]string) *codexProject {
	t.Helper()
	hp := newHookProject(t, codexBinary(t), files, "--codex", func(p *hookProject) []string {
		return []string{"CODEX_HOME=" + filepath.Join(p.root, "codex-home"), "SLIM_E2E_FAKE_KEY=sk-e2e-dummy"}
	})
	p := &codexProject{hookProject: hp, codex: filepath.Join(hp.root, "codex-home")}
	mustMkdir(t, p.codex)
	return p
}

// codexRun is what one `codex exec` left behind.
type codexRun struct {
	hookRun
	provider *fakeresponses.Server
}

// run starts `codex exec` in the project against a fake provider serving
// script and waits for it. Codex's config points it at the provider and
// trusts the project (whose .codex layer holds slim's hooks only then);
// --dangerously-bypass-hook-trust stands in for the user trusting the new
// hooks in /hooks, which a headless run cannot do.
func (p *codexProject) run(script ...fp.Turn) *codexRun {
	t := p.t
	t.Helper()
	srv, err := fakeresponses.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf("model = %q\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n\n"+
		"[model_providers.fake]\nname = \"fake\"\nbase_url = %q\nenv_key = \"SLIM_E2E_FAKE_KEY\"\nwire_api = \"responses\"\n"+
		"request_max_retries = 0\nstream_max_retries = 0\n\n[projects.%q]\ntrust_level = \"trusted\"\n", codexModel, srv.BaseURL(), p.dir)
	mustWrite(t, filepath.Join(p.codex, "config.toml"), config)
	hr := runHook(p.hookProject, hookCommand{
		host: "codex", run: "codex exec",
		args:      []string{"exec", "--dangerously-bypass-hook-trust", "-s", "workspace-write", "do it"},
		timeout:   codexRunTimeout,
		stdoutLog: "stdout.log", fake: "fake provider",
		outTail: 3000, errTail: 4000,
		seen: func(b *strings.Builder) {
			for _, q := range srv.Requests() {
				fmt.Fprintf(b, "--- request %d %s turn %d tools %v\n", q.Seq, q.Path, q.Turn, q.Tools)
				for _, o := range q.ToolOutputs() {
					fmt.Fprintf(b, "    output %s: %s\n", o.CallID, clip(o.Output, 400))
				}
			}
		},
	}, srv)
	return &codexRun{hookRun: hr, provider: srv}
}

// output is the tool output the model was sent for the i-th call of turn.
func (r *codexRun) output(t *testing.T, turn, i int) string {
	t.Helper()
	return received(t, fakeresponses.CallID(turn, i), r.provider.ToolOutput).Output
}

const codexGreet = "def greet(name):\n    message = \u201cHello, \u201d + name   \n    print(message)\n    return message\n"

// TestCodexStalePatchRescued: a patch whose context line lost the file's
// curly quotes and trailing blanks is rewritten by slim's PreToolUse
// answer (allow with updatedInput), Codex applies the rewritten patch, and
// only the print line changes.
func TestCodexStalePatchRescued(t *testing.T) {
	p := newCodexProject(t, map[string]string{"greet.py": codexGreet})
	stale := "*** Begin Patch\n*** Update File: greet.py\n@@ def greet(name):\n     message = \"Hello, \" + name\n-    print(message)\n+    print(message.upper())\n     return message\n*** End Patch\n"
	r := p.run(fp.Calls(fp.Call("apply_patch", stale)), fp.Text("done"))
	if r.exitErr != nil {
		t.Fatalf("codex exec failed: %v", r.exitErr)
	}
	if out := r.output(t, 0, 0); !strings.Contains(out, "Success") {
		t.Errorf("the patch was not applied; the model got %q", out)
	}
	got, err := os.ReadFile(filepath.Join(p.dir, "greet.py"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(codexGreet, "print(message)", "print(message.upper())", 1); string(got) != want {
		t.Errorf("greet.py\n got %q\nwant %q", got, want)
	}
	if log, _ := os.ReadFile(filepath.Join(p.root, "slim.log")); !strings.Contains(string(log), "apply_patch: rescued") {
		t.Errorf("slim did not rescue the patch (Codex may have matched it alone); slim.log:\n%s", tail(string(log), 2000))
	}
}

// TestCodexOutsidePatchRefused: a patch that adds a file beside the
// project (where Codex's own workspace-write sandbox would let it write,
// since the temporary directory is writable) is refused by slim's
// PreToolUse hook: the file never appears and the model is told slim's
// reason.
func TestCodexOutsidePatchRefused(t *testing.T) {
	p := newCodexProject(t, map[string]string{"a.txt": "a\n"})
	patch := "*** Begin Patch\n*** Add File: ../outside/evil.txt\n+pwned\n*** End Patch\n"
	r := p.run(fp.Calls(fp.Call("apply_patch", patch)), fp.Text("done"))
	if r.exitErr != nil {
		t.Fatalf("codex exec failed: %v", r.exitErr)
	}
	wantAbsent(t, filepath.Join(p.outside, "evil.txt"))
	if out := r.output(t, 0, 0); !strings.Contains(out, "apply_patch blocked") || !strings.Contains(out, "outside") {
		t.Errorf("the model was not told slim's reason; it got %q", out)
	}
}

// TestCodexRepeatedCommandNoticed: the loop guard over Codex: from the 3rd
// identical shell command with an identical result, slim's PostToolUse
// additionalContext carries the notice, which Codex passes on to the
// model.
func TestCodexRepeatedCommandNoticed(t *testing.T) {
	p := newCodexProject(t, map[string]string{"a.txt": "alpha\n"})
	call := fp.Call("exec_command", map[string]string{"cmd": "cat a.txt"})
	r := p.run(fp.Calls(call), fp.Calls(call), fp.Calls(call), fp.Calls(call), fp.Text("done"))
	if r.exitErr != nil {
		t.Fatalf("codex exec failed: %v", r.exitErr)
	}
	const notice = "[REPEATED TOOL CALLS - STOP]"
	for turn := range 4 {
		if out := r.output(t, turn, 0); !strings.Contains(out, "alpha") {
			t.Errorf("command %d did not run: %q", turn+1, out)
		}
	}
	// The request answering turn k has seen the results of k commands.
	seen := map[int]bool{}
	for _, q := range r.provider.Requests() {
		if q.Turn < 0 {
			continue
		}
		seen[q.Turn] = true
		if got := strings.Contains(string(q.Body), notice); got != (q.Turn >= 3) {
			t.Errorf("after %d identical commands: notice shown %v, want %v", q.Turn, got, q.Turn >= 3)
		}
	}
	if !seen[4] {
		t.Errorf("the run did not reach the 5th turn: %v", seen)
	}
}
