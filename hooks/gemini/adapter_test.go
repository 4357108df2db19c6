package gemini

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/hooks/internal/hookcmd/hookcmdtest"
	"github.com/slimgate/slim/hooks/loopguard"
)

// project is a git repository with src/app.py and docs/, a link "linked" to
// a directory outside it, and that outside directory.
type project struct {
	w *hookcmdtest.Workspace
	a *Adapter
}

func newProject(t *testing.T) *project {
	t.Helper()
	w := hookcmdtest.NewWorkspace(t, []string{"src", "docs"}, map[string]string{"src/app.py": "def greet(name):\n    print(name)\n"})
	store := loopguard.NewStore(w.State, loopguard.StoreOptions{})
	return &project{w: w, a: &Adapter{Dispatcher: &hooks.Dispatcher{SearchGuard: true, Loop: &loopguard.Guard{Store: store}}}}
}

func (p *project) decode(t *testing.T, name string) *Input {
	t.Helper()
	in, err := Decode(p.w.Payload(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return in
}

// answer decodes a payload and answers it as `slim hook --host gemini-cli`
// does.
func (p *project) answer(t *testing.T, name string) Output {
	t.Helper()
	return p.a.Handle(context.Background(), p.decode(t, name))
}

// TestDocumentedPayloads answers the requests of testdata, written in the
// documented shape, and those of testdata/recorded, which the real Gemini
// CLI sent slim's hooks in the end-to-end runs (the README there says how
// they are recorded again).
func TestDocumentedPayloads(t *testing.T) {
	cases := []struct {
		payload  string
		decision string // "" passes
		reason   string // a part of the refusal
	}{
		{"pre_write_file_inside", "", ""},
		{"pre_write_file_outside", "deny", "outside"},
		{"pre_write_file_git_dir", "deny", "git directory"},
		{"pre_write_file_through_link", "deny", "outside"},
		{"pre_write_file_no_path", "deny", "tool_input.file_path is missing"},
		{"pre_replace_inside", "", ""},
		{"pre_replace_outside", "deny", "outside"},
		{"pre_glob_inside", "", ""},
		{"pre_grep_search_missing_dir", "deny", "no/such/dir"},
		{"pre_search_file_content_missing_dir", "deny", "no/such/dir"},
		{"pre_read_file", "", ""},
		{"pre_run_shell_command", "", ""},
		{"post_read_file", "", ""},
		{"post_run_shell_command", "", ""},
		{"post_write_file", "", ""},
		{"post_mcp", "", ""},
		{"session_start", "", ""},
		{"recorded/pre_write_file_outside", "deny", "write_file blocked: patch contains path outside workspace root"},
		{"recorded/pre_read_file", "", ""},
		{"recorded/post_read_file", "", ""},
	}
	for _, c := range cases {
		t.Run(c.payload, func(t *testing.T) {
			out := newProject(t).answer(t, c.payload)
			if out.Decision != c.decision {
				t.Fatalf("decision %q, want %q (%+v)", out.Decision, c.decision, out)
			}
			if c.decision == "" {
				if b, _ := json.Marshal(out); string(b) != "{}" {
					t.Fatalf("a pass must be the empty answer, got %s", b)
				}
				return
			}
			if !strings.Contains(out.Reason, c.reason) {
				t.Fatalf("reason %q, want one holding %q", out.Reason, c.reason)
			}
		})
	}
}

// The answer is the JSON Gemini CLI reads: decision and reason at the top
// level, the rest under hookSpecificOutput.
func TestDenyIsGeminiJSON(t *testing.T) {
	b, err := json.Marshal(newProject(t).answer(t, "pre_write_file_outside"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["decision"] != "deny" || got["reason"] == "" || len(got) != 2 {
		t.Fatalf("answer %s, want exactly decision deny and a reason", b)
	}
}

// With passthrough, a target outside by its spelling goes to Gemini CLI's
// own confirmation; one outside through a link is still denied.
func TestPassthroughAsks(t *testing.T) {
	p := newProject(t)
	p.a.Passthrough = true
	if out := p.answer(t, "pre_write_file_outside"); out.Decision != "ask" || out.Reason == "" {
		t.Fatalf("outside by spelling: %+v, want ask with a reason", out)
	}
	if out := p.answer(t, "pre_write_file_through_link"); out.Decision != "deny" {
		t.Fatalf("outside through a link: %+v, want deny", out)
	}
}

// A search whose dir_path is missing but exists under the session
// directory is re-anchored: the new path goes back as dir_path, in the
// whole tool_input with every other argument as the call had it, since
// Gemini CLI builds the call from the answer's tool_input alone.
func TestSearchReanchoredAsDirPath(t *testing.T) {
	p := newProject(t)
	for _, tool := range []string{"glob", "grep_search"} {
		t.Run(tool, func(t *testing.T) {
			in := p.decode(t, "pre_glob_inside")
			in.ToolName = tool
			in.ToolInput["dir_path"] = filepath.Join(string(filepath.Separator)+"no-such-base", filepath.Base(p.w.Root), "src")
			out := p.a.Handle(context.Background(), in)
			s := out.HookSpecificOutput
			if out.Decision != "" || s == nil || s.HookEventName != BeforeTool {
				t.Fatalf("answer %+v, want a tool_input change", out)
			}
			want := map[string]any{}
			for k, v := range in.ToolInput {
				want[k] = v
			}
			want["dir_path"] = filepath.Join(p.w.Root, "src")
			if got, _ := json.Marshal(s.ToolInput); string(got) != mustJSON(t, want) || len(want) < 2 {
				t.Fatalf("tool_input %s, want the call's input with dir_path changed, %s", got, mustJSON(t, want))
			}
		})
	}
}

// Both with the documented requests and with those a real Gemini CLI sent.
func TestLoopGuardThroughGemini(t *testing.T) {
	for _, dir := range []string{"", "recorded/"} {
		t.Run("testdata/"+dir, func(t *testing.T) { testLoopGuardThroughGemini(t, dir) })
	}
}

func testLoopGuardThroughGemini(t *testing.T, dir string) {
	p := newProject(t)
	var notices []bool
	for i := 0; i < 5; i++ {
		if got := p.answer(t, dir+"pre_read_file").Decision; got != "" {
			t.Fatalf("read %d refused early: %q", i+1, got)
		}
		out := p.answer(t, dir+"post_read_file")
		has := out.HookSpecificOutput != nil && strings.Contains(out.HookSpecificOutput.AdditionalContext, loopguard.Marker)
		if has && out.HookSpecificOutput.HookEventName != AfterTool {
			t.Fatalf("notice under %q", out.HookSpecificOutput.HookEventName)
		}
		notices = append(notices, has)
	}
	if want := []bool{false, false, true, true, true}; !slices.Equal(notices, want) {
		t.Fatalf("notices %v, want %v", notices, want)
	}
	if out := p.answer(t, dir+"pre_read_file"); out.Decision != "deny" || !strings.Contains(out.Reason, "Refusing to execute") {
		t.Fatalf("6th identical read: %+v, want the loop refusal", out)
	}
	in := p.decode(t, dir+"pre_read_file")
	in.ToolInput["file_path"] = filepath.Join(p.w.Root, "docs", "other.md")
	if got := p.a.Handle(context.Background(), in).Decision; got != "" {
		t.Fatalf("a different read is refused: %q", got)
	}
}

// The shell is counted and noticed but never refused.
func TestLoopGuardNeverRefusesShell(t *testing.T) {
	p := newProject(t)
	for i := 0; i < 7; i++ {
		if got := p.answer(t, "pre_run_shell_command").Decision; got != "" {
			t.Fatalf("shell %d refused: %q", i+1, got)
		}
		out := p.answer(t, "post_run_shell_command")
		if i >= 2 && (out.HookSpecificOutput == nil || !strings.Contains(out.HookSpecificOutput.AdditionalContext, loopguard.Marker)) {
			t.Fatalf("shell %d: no notice", i+1)
		}
	}
}

// An unreadable request refuses a write before it runs and lets anything
// else run, telling the user.
func TestMalformed(t *testing.T) {
	a := newProject(t).a
	cases := []struct {
		raw      string
		decision string
	}{
		{`{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":"x"}`, "deny"},
		{`{"hook_event_name":"BeforeTool","tool_name":"replace","tool_input":{"file_path":`, "deny"},
		{`{"hook_event_name":"AfterTool","tool_name":"write_file","tool_input":7}`, ""},
		{`{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":[]}`, ""},
		{`not json`, ""},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.raw))
		if err == nil {
			t.Fatalf("%s decoded", c.raw)
		}
		if e, ok := err.(*Error); !ok || e.Kind != Malformed {
			t.Fatalf("%s: error %T %v, want a Malformed *Error", c.raw, err, err)
		}
		out := a.Malformed([]byte(c.raw), err)
		if out.Decision != c.decision {
			t.Fatalf("%s: decision %q, want %q", c.raw, out.Decision, c.decision)
		}
		if c.decision == "" && out.SystemMessage == "" {
			t.Fatalf("%s: a pass of an unreadable request must tell the user", c.raw)
		}
	}
}

// The installer's BeforeTool matcher starts slim for the tools it checks
// and for no other, as Gemini CLI tests it (an unanchored regular
// expression).
func TestBeforeToolMatcher(t *testing.T) {
	m := BeforeToolMatcher()
	for tool, want := range map[string]bool{"write_file": true, "replace": true, "glob": true, "grep_search": true,
		"search_file_content": true, "read_file": true, "read_many_files": false, "run_shell_command": false, "my_replace_tool": false} {
		if got := matches(t, m, tool); got != want {
			t.Errorf("matcher %q on %s: %v, want %v", m, tool, got, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
