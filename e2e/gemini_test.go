package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/fakegemini"
	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// geminiPinnedVersion is the Gemini CLI release these tests are written
// against (e2e/package.json pins the same).
const geminiPinnedVersion = "0.61.0"

// geminiModel is named on the command line, so that Gemini CLI sends every
// turn to it and asks no model router first.
const geminiModel = "gemini-2.5-pro"

// geminiRunTimeout is the hard cap on one `gemini -p`; its process group is
// killed when it is reached. A healthy run takes a few seconds.
const geminiRunTimeout = 90 * time.Second

// geminiHost is the pinned Gemini CLI (SLIM_E2E_GEMINI overrides the one in
// node_modules); --version prints the version alone.
var geminiHost = &pinnedHost{
	name: "gemini", override: "SLIM_E2E_GEMINI", want: geminiPinnedVersion,
	env: func() []string {
		return append(cleanEnv(filepath.Join(os.TempDir(), "slim-e2e-gemini-version")), geminiSwitches()...)
	},
	version: func(out string) string {
		lines := strings.Split(out, "\n")
		return strings.TrimSpace(lines[len(lines)-1])
	},
}

// geminiBinary returns the pinned gemini binary, or skips/fails the test.
func geminiBinary(t *testing.T) string { return geminiHost.binary(t) }

// geminiSwitches are the environment of every Gemini CLI run: a dummy API
// key (the fake never checks it), and no relaunch of itself with a larger
// heap (one Node start instead of two).
func geminiSwitches() []string {
	return []string{"GEMINI_API_KEY=e2e-dummy", "GEMINI_CLI_NO_RELAUNCH=true"}
}

// geminiOptions are the user's own Gemini CLI settings a test runs with.
type geminiOptions struct {
	// noLoopDetection turns off Gemini CLI's own loop detection
	// (model.disableLoopDetection), which stops the 5th identical call in
	// a row before it runs, and so before slim's loop guard refuses the
	// 6th.
	noLoopDetection bool
}

// geminiProject is one throw-away git project with slim's Gemini CLI hooks
// installed by the real `slim hooks install --gemini-cli`, in a folder the
// user trusts, and an isolated home holding the user's settings.
type geminiProject struct{ *hookProject }

func newGeminiProject(t *testing.T, files map[string]string, opts geminiOptions) *geminiProject {
	t.Helper()
	hp := newHookProject(t, geminiBinary(t), files, "--gemini-cli",
		func(p *hookProject) []string { return geminiSwitches() }, ".gemini")
	p := &geminiProject{hp}
	// The user's settings: an API key as the way to sign in (Gemini CLI
	// reads GOOGLE_GEMINI_BASE_URL for it), nothing sent anywhere but the
	// model requests.
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	if opts.noLoopDetection {
		settings["model"] = map[string]any{"disableLoopDetection": true}
	}
	p.writeJSON(filepath.Join(p.home, ".gemini", "settings.json"), settings)
	// What the user does once in the interactive trust dialog: Gemini CLI
	// runs a project's hooks only in a trusted folder.
	p.writeJSON(filepath.Join(p.home, ".gemini", "trustedFolders.json"), map[string]string{p.dir: "TRUST_FOLDER"})
	return p
}

func (p *geminiProject) writeJSON(path string, v any) {
	p.t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		p.t.Fatal(err)
	}
	mustWrite(p.t, path, string(b)+"\n")
}

// geminiRun is what one `gemini -p` left behind.
type geminiRun struct {
	hookRun
	provider *fakegemini.Server
}

// run starts `gemini -p` in the project against a fake Gemini API serving
// script, with edits approved automatically (--approval-mode auto_edit, so
// that every refusal is slim's or Gemini CLI's own checks') and flags
// added, and waits for it.
func (p *geminiProject) run(flags []string, script ...fp.Turn) *geminiRun {
	t := p.t
	t.Helper()
	srv, err := fakegemini.Start(script)
	if err != nil {
		t.Fatal(err)
	}
	hr := runHook(p.hookProject, hookCommand{
		host: "gemini", run: "gemini -p",
		args:      append([]string{"-p", "do it", "-m", geminiModel, "--approval-mode", "auto_edit"}, flags...),
		env:       []string{"GOOGLE_GEMINI_BASE_URL=" + srv.BaseURL()},
		timeout:   geminiRunTimeout,
		stdoutLog: "stdout.log", keepRequests: true, fake: "fake Gemini API",
		outTail: 3000, errTail: 4000,
		seen: func(b *strings.Builder) {
			for _, q := range srv.Requests() {
				fmt.Fprintf(b, "--- request %d %s %s turn %d tools %d contents %d\n", q.Seq, q.HTTPMethod, q.Path, q.Turn, len(q.Tools), len(q.Contents))
			}
			for _, fr := range srv.Responses() {
				fmt.Fprintf(b, "--- result %s (%s, error %v): %s\n", fr.ID, fr.Name, fr.IsError(), clip(fr.Output(), 400))
			}
		},
	}, srv)
	if hr.exitErr != nil {
		t.Fatalf("gemini -p failed: %v", hr.exitErr)
	}
	// Every request the CLI made must be one the fake serves: one it does
	// not (a new start-up call) would be answered 404 and could change
	// the run.
	for _, q := range srv.Unserved() {
		t.Errorf("Gemini CLI asked the fake for %s %s, which it does not serve", q.HTTPMethod, q.Path)
	}
	return &geminiRun{hookRun: hr, provider: srv}
}

// result is what the model was sent for the i-th call of turn.
func (r *geminiRun) result(t *testing.T, turn, i int) fakegemini.FunctionResponse {
	t.Helper()
	return received(t, fakegemini.CallID(turn, i), r.provider.Response)
}

// TestGeminiOutsideWriteDenied: a write_file beside the project, in a
// directory the user added to Gemini CLI's workspace (--include-directories,
// so Gemini CLI's own workspace check lets it through), is denied by slim's
// BeforeTool hook: the file never appears and the model is told slim's
// reason. The same run without slim's hooks writes it, so the row passes
// only because slim acted.
func TestGeminiOutsideWriteDenied(t *testing.T) {
	p := newGeminiProject(t, map[string]string{"a.txt": "a\n"}, geminiOptions{})
	target := filepath.Join(p.outside, "evil.txt")
	script := []fp.Turn{
		fp.Calls(fp.Call("write_file", map[string]string{"file_path": target, "content": "pwned\n"})),
		fp.Text("done"),
	}
	flags := []string{"--include-directories", p.outside}
	r := p.run(flags, script...)
	wantAbsent(t, target)
	fr := r.result(t, 0, 0)
	if !fr.IsError() || !strings.Contains(fr.Output(), "Tool execution blocked: write_file blocked") || !strings.Contains(fr.Output(), "outside") {
		t.Errorf("the model was not told slim's reason; it got %q", fr.Output())
	}

	p.slim("hooks", "uninstall", "--gemini-cli")
	r = p.run(flags, script...)
	if got, err := os.ReadFile(target); err != nil || string(got) != "pwned\n" {
		t.Fatalf("without slim's hooks the write should have run (so that the denial above is slim's): %q, %v; the model got %q",
			got, err, r.result(t, 0, 0).Output())
	}
}

// TestGeminiRepeatedReadsStopped: the loop guard over Gemini CLI, with the
// host's own loop detection off: from the 3rd identical read_file on, the
// result carries slim's notice (AfterTool additionalContext, which Gemini
// CLI appends to the result), and the 6th and 7th are refused before they
// run (BeforeTool deny).
func TestGeminiRepeatedReadsStopped(t *testing.T) {
	p := newGeminiProject(t, map[string]string{"a.txt": "alpha\n"}, geminiOptions{noLoopDetection: true})
	read := fp.Calls(fp.Call("read_file", map[string]string{"file_path": "a.txt"}))
	r := p.run(nil, read, read, read, read, read, read, read, fp.Text("done"))
	const notice = "[REPEATED TOOL CALLS - STOP]"
	for turn := range 5 {
		fr := r.result(t, turn, 0)
		out := fr.Output()
		if fr.IsError() || !strings.HasPrefix(out, "alpha\n") {
			t.Errorf("read %d did not run: %q", turn+1, out)
		}
		if got := strings.Contains(out, notice); got != (turn >= 2) {
			t.Errorf("read %d: notice shown %v, want %v: %q", turn+1, got, turn >= 2, out)
		}
	}
	for turn := 5; turn < 7; turn++ {
		fr := r.result(t, turn, 0)
		if out := fr.Output(); !fr.IsError() || !strings.Contains(out, "Tool execution blocked: Refusing to execute \"read\"") || strings.Contains(out, "alpha") {
			t.Errorf("read %d was not refused by slim: %q", turn+1, out)
		}
	}
}

// TestGeminiOwnLoopDetectionFirst: with Gemini CLI's own loop detection on
// (its default), slim's notice still reaches the model on the 3rd and 4th
// identical read_file, but Gemini CLI stops the 5th before it runs (it
// counts calls as they stream in, slim counts results), so slim's refusal
// of the 6th is never needed. Pinned so that a change on either side shows.
func TestGeminiOwnLoopDetectionFirst(t *testing.T) {
	p := newGeminiProject(t, map[string]string{"a.txt": "alpha\n"}, geminiOptions{})
	read := fp.Calls(fp.Call("read_file", map[string]string{"file_path": "a.txt"}))
	r := p.run(nil, read, read, read, read, read, read, fp.Text("done"))
	for turn := 2; turn < 4; turn++ {
		if out := r.result(t, turn, 0).Output(); !strings.Contains(out, "[REPEATED TOOL CALLS - STOP]") {
			t.Errorf("read %d: no notice from slim: %q", turn+1, out)
		}
	}
	if fr, ok := r.provider.Response(fakegemini.CallID(4, 0)); ok {
		t.Errorf("the 5th identical read ran (Gemini CLI's loop detection did not stop it): %q", fr.Output())
	}
	var detected, refused bool
	for _, q := range r.provider.Requests() {
		detected = detected || bytes.Contains(q.Body, []byte("Potential loop detected"))
		refused = refused || bytes.Contains(q.Body, []byte("Refusing to execute"))
	}
	if !detected || refused {
		t.Errorf("Gemini CLI's loop message sent %v (want true), slim's refusal sent %v (want false)", detected, refused)
	}
}

// TestGeminiMissingSearchPath: a grep_search or glob on a directory that
// does not exist is answered by Gemini CLI itself ("Path does not exist"),
// which checks dir_path when it builds the call, before any BeforeTool hook
// runs: slim's path pre-check ("Search path does not exist: ... (from
// ...)") never sees it. The write_file beside the project in the same run
// is denied by slim, which shows its hooks were running.
func TestGeminiMissingSearchPath(t *testing.T) {
	p := newGeminiProject(t, map[string]string{"a.txt": "alpha\n"}, geminiOptions{})
	target := filepath.Join(p.outside, "evil.txt")
	r := p.run([]string{"--include-directories", p.outside},
		fp.Calls(fp.Call("grep_search", map[string]string{"pattern": "alpha", "dir_path": "nowhere"})),
		fp.Calls(fp.Call("glob", map[string]string{"pattern": "*.txt", "dir_path": "nowhere"})),
		fp.Calls(fp.Call("write_file", map[string]string{"file_path": target, "content": "x\n"})),
		fp.Text("done"))
	missing := filepath.Join(p.dir, "nowhere")
	for turn, want := range []string{"Path does not exist: " + missing, "Search path does not exist " + missing} {
		fr := r.result(t, turn, 0)
		if out := fr.Output(); !fr.IsError() || !strings.Contains(out, want) || strings.Contains(out, "(from ") {
			t.Errorf("call %d: got %q, want Gemini CLI's own %q", turn+1, out, want)
		}
	}
	wantAbsent(t, target)
	if out := r.result(t, 2, 0).Output(); !strings.Contains(out, "Tool execution blocked: write_file blocked") {
		t.Errorf("the write beside the project was not denied by slim: %q", out)
	}
}
