package claudecode

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/hooks/internal/hookcmd/hookcmdtest"
	"github.com/slimgate/slim/hooks/loopguard"
)

// project is a git repository with src/app.py, a link "linked" to a
// directory outside it, and that outside directory.
type project struct {
	root, out, home string
	w               *hookcmdtest.Workspace
	a               *Adapter
}

func newProject(t *testing.T) *project {
	t.Helper()
	w := hookcmdtest.NewWorkspace(t, []string{"src", "docs"}, map[string]string{"src/app.py": "def greet(name):\n    print(name)\n"})
	p := &project{root: w.Root, out: w.Out, home: w.Home, w: w}
	store := loopguard.NewStore(w.State, loopguard.StoreOptions{})
	p.a = &Adapter{Dispatcher: &hooks.Dispatcher{SearchGuard: true, Loop: &loopguard.Guard{Store: store}}}
	return p
}

// payload reads a documented-shape request from testdata with the
// project's paths filled in.
func (p *project) payload(t *testing.T, name string) []byte {
	t.Helper()
	return p.w.Payload(t, name)
}

// answer decodes a payload and answers it as `slim hook --host
// claude-code` does, failing the test on a request that does not decode.
func (p *project) answer(t *testing.T, name string) Output {
	t.Helper()
	in, err := Decode(p.payload(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p.a.Handle(context.Background(), in)
}

// TestDocumentedPayloads answers the requests of testdata, written in the
// documented shape, and those of testdata/recorded, which the real Claude
// Code sent slim's hooks in the end-to-end runs (the README there says how
// they are recorded again).
func TestDocumentedPayloads(t *testing.T) {
	cases := []struct {
		payload  string
		decision string // "" pass, "deny", "ask"
		reason   string // a part of the reason
	}{
		{"pre_edit_inside", "", ""},
		{"pre_write_new_inside", "", ""},
		{"pre_edit_outside", "deny", "outside"},
		{"pre_multiedit_outside", "deny", "outside"},
		{"pre_notebookedit_outside", "deny", "outside"},
		{"pre_write_git_dir", "deny", "git directory"},
		{"pre_write_through_link", "deny", "outside"},
		{"pre_write_no_path", "deny", "tool_input.file_path is missing"},
		{"pre_grep_inside", "", ""},
		{"pre_grep_missing_path", "deny", "no/such/dir"},
		{"pre_glob_inside", "", ""},
		{"pre_read", "", ""},
		{"pre_bash", "", ""},
		{"post_read", "", ""},
		{"post_bash", "", ""},
		{"post_write", "", ""},
		{"session_end", "", ""},
		{"recorded/pre_write_outside", "deny", "Write blocked: patch contains path outside workspace root"},
		{"recorded/pre_notebookedit_outside", "deny", "NotebookEdit blocked: patch contains path outside workspace root"},
		{"recorded/pre_edit_inside", "", ""},
		{"recorded/post_edit", "", ""},
		{"recorded/pre_read", "", ""},
		{"recorded/post_read", "", ""},
		{"recorded/post_read_notebook", "", ""},
	}
	for _, c := range cases {
		t.Run(c.payload, func(t *testing.T) {
			p := newProject(t)
			out := p.answer(t, c.payload)
			if got := out.Decision(); got != c.decision {
				t.Fatalf("decision %q, want %q (%+v)", got, c.decision, out.HookSpecificOutput)
			}
			if c.decision == "" {
				if out.HookSpecificOutput != nil {
					t.Fatalf("a pass must be the empty answer, got %+v", out.HookSpecificOutput)
				}
				return
			}
			s := out.HookSpecificOutput
			if s.HookEventName != PreToolUse || !strings.Contains(s.PermissionDecisionReason, c.reason) {
				t.Fatalf("answer %+v, want a %s reason holding %q", s, PreToolUse, c.reason)
			}
		})
	}
}

// A write the host would prompt for by itself (outside by its spelling)
// is handed to Claude Code's prompt with passthrough; one that is outside
// only through a link stays denied, because the prompt would show an
// inside path.
func TestPassthroughAsksOnlyForSpelledOutsideTargets(t *testing.T) {
	p := newProject(t)
	p.a.Passthrough = true
	if got := p.answer(t, "pre_edit_outside").Decision(); got != "ask" {
		t.Errorf("outside by spelling: %q, want ask", got)
	}
	if got := p.answer(t, "pre_write_through_link").Decision(); got != "deny" {
		t.Errorf("outside through a link: %q, want deny", got)
	}
}

// The loop guard counts in PostToolUse on tool_input: identical Read
// results get the notice as additionalContext from the 3rd, and the
// PreToolUse of the next identical Read after the 5th is denied; a
// different input breaks the run. Both with the documented requests and
// with those a real Claude Code sent.
func TestLoopGuardThroughClaudeCode(t *testing.T) {
	for _, dir := range []string{"", "recorded/"} {
		t.Run("testdata/"+dir, func(t *testing.T) { testLoopGuardThroughClaudeCode(t, dir) })
	}
}

func testLoopGuardThroughClaudeCode(t *testing.T, dir string) {
	p := newProject(t)
	var notices []bool
	for i := 0; i < 5; i++ {
		if got := p.answer(t, dir+"pre_read").Decision(); got != "" {
			t.Fatalf("read %d refused early: %q", i+1, got)
		}
		out := p.answer(t, dir+"post_read")
		has := out.HookSpecificOutput != nil && strings.Contains(out.HookSpecificOutput.AdditionalContext, loopguard.Marker)
		if has && out.HookSpecificOutput.HookEventName != PostToolUse {
			t.Fatalf("notice under %q", out.HookSpecificOutput.HookEventName)
		}
		notices = append(notices, has)
	}
	if want := []bool{false, false, true, true, true}; !slices.Equal(notices, want) {
		t.Fatalf("notices %v, want %v", notices, want)
	}
	out := p.answer(t, dir+"pre_read")
	if out.Decision() != "deny" || !strings.Contains(out.HookSpecificOutput.PermissionDecisionReason, "Refusing to execute") {
		t.Fatalf("6th identical read: %+v, want the loop refusal", out.HookSpecificOutput)
	}
	// Another file: not the same call.
	in, _ := Decode(p.payload(t, dir+"pre_read"))
	in.ToolInput["file_path"] = filepath.Join(p.root, "docs", "other.md")
	if got := p.a.Handle(context.Background(), in).Decision(); got != "" {
		t.Fatalf("a different read is refused: %q", got)
	}
}

// Bash is counted and noticed but never refused.
func TestLoopGuardNeverRefusesBash(t *testing.T) {
	p := newProject(t)
	for i := 0; i < 7; i++ {
		if got := p.answer(t, "pre_bash").Decision(); got != "" {
			t.Fatalf("bash %d refused: %q", i+1, got)
		}
		out := p.answer(t, "post_bash")
		if i >= 2 && (out.HookSpecificOutput == nil || !strings.Contains(out.HookSpecificOutput.AdditionalContext, loopguard.Marker)) {
			t.Fatalf("bash %d: no notice", i+1)
		}
	}
}

// A stale absolute Grep path is re-anchored by the dispatcher's
// pre-check; the answer is updatedInput with every other field kept.
func TestGrepPathReanchoredAsUpdatedInput(t *testing.T) {
	p := newProject(t)
	in, err := Decode(p.payload(t, "pre_grep_inside"))
	if err != nil {
		t.Fatal(err)
	}
	// The same repository, spelt as it was at another place.
	in.ToolInput["path"] = "/home/someone/old/repo/src"
	s := p.a.Handle(context.Background(), in).HookSpecificOutput
	if s == nil || s.PermissionDecision != "" || s.UpdatedInput == nil {
		t.Fatalf("answer %+v, want updatedInput and no permission decision", s)
	}
	want := map[string]any{"pattern": "def greet", "path": filepath.Join(p.root, "src"), "glob": "*.py",
		"output_mode": "content", "-n": true, "head_limit": json.Number("20")}
	if !reflect.DeepEqual(s.UpdatedInput, want) {
		t.Fatalf("updatedInput %v, want %v", s.UpdatedInput, want)
	}
}

func TestMalformedRequests(t *testing.T) {
	cases := []struct {
		name, raw string
		deny      bool
	}{
		{"bad JSON for Write", `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":`, true},
		{"tool_input not an object for Edit", `{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":"x"}`, true},
		{"file_path of the wrong type", `{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":7}}`, true},
		{"no event for NotebookEdit", `{"tool_name":"NotebookEdit","tool_input":{}}`, true},
		{"bad JSON for Read", `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":`, false},
		{"a Write after it ran", `{"hook_event_name":"PostToolUse","tool_name":"Write","tool_input":[]}`, false},
		{"nothing readable", `not json`, false},
		{"empty", ``, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t)
			in, err := Decode([]byte(c.raw))
			var out Output
			ok := false
			if err != nil {
				out, ok = p.a.Malformed([]byte(c.raw), err)
			} else {
				out, ok = p.a.Handle(context.Background(), in), true
			}
			if ok != c.deny || (c.deny && out.Decision() != "deny") {
				t.Fatalf("ok=%v decision %q, want deny=%v (err %v)", ok, out.Decision(), c.deny, err)
			}
			if c.deny && !strings.Contains(out.HookSpecificOutput.PermissionDecisionReason, "slim could not check") {
				t.Fatalf("reason %q", out.HookSpecificOutput.PermissionDecisionReason)
			}
		})
	}
}

// A request larger than slim reads is cut off; the tool named before the
// input still decides: a Write is denied.
func TestTooLargeWriteIsDenied(t *testing.T) {
	p := newProject(t)
	head := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/x","content":"`
	raw := head + strings.Repeat("a", 1000)
	out, ok := p.a.Malformed([]byte(raw), &Error{Kind: Malformed, Code: CodeTooLarge, Message: "too large"})
	if !ok || out.Decision() != "deny" {
		t.Fatalf("ok=%v %+v", ok, out)
	}
}

func TestPreToolUseToolsNamesTheGuardedTools(t *testing.T) {
	got := strings.Join(PreToolUseTools(), "|")
	if got != "Edit|MultiEdit|Write|NotebookEdit|Grep|Glob|Read" {
		t.Fatalf("PreToolUseTools = %s", got)
	}
}

func TestOutputEncodesAsClaudeCodeReadsIt(t *testing.T) {
	b, _ := json.Marshal(deny("no"))
	if string(b) != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}` {
		t.Fatalf("%s", b)
	}
	b, _ = json.Marshal(Output{})
	if string(b) != `{}` {
		t.Fatalf("pass encodes as %s", b)
	}
}
