package codex

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/hooks/internal/hookcmd/hookcmdtest"
	"github.com/slimgate/slim/hooks/loopguard"
)

// greet is the file the stale payloads were written against: its context
// line has curly quotes and trailing blanks the model's patch lost.
const greet = "def greet(name):\n    message = \u201cHello, \u201d + name   \n    print(message)\n    return message\n\n\ndef main():\n    greet(\"world\")\n"

// project is a git repository with greet.py, twice.py (one line at two
// places), a link "linked" to a directory outside it, and that outside
// directory.
type project struct {
	root, out, home string
	w               *hookcmdtest.Workspace
	a               *Adapter
}

func newProject(t *testing.T) *project {
	t.Helper()
	files := map[string]string{"greet.py": greet, "twice.py": "def a():\n    x = 1\n\n\ndef b():\n    x = 1\n"}
	w := hookcmdtest.NewWorkspace(t, []string{"docs"}, files)
	p := &project{root: w.Root, out: w.Out, home: w.Home, w: w}
	store := loopguard.NewStore(w.State, loopguard.StoreOptions{})
	p.a = &Adapter{Dispatcher: &hooks.Dispatcher{PatchGuard: true, Loop: &loopguard.Guard{Store: store}}}
	return p
}

// payload reads a documented-shape request from testdata with the
// project's paths filled in.
func (p *project) payload(t *testing.T, name string) []byte {
	t.Helper()
	return p.w.Payload(t, name)
}

func (p *project) decode(t *testing.T, name string) *Input {
	t.Helper()
	in, err := Decode(p.payload(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return in
}

// answer decodes a payload and answers it as `slim hook --host codex` does.
func (p *project) answer(t *testing.T, name string) Answer {
	t.Helper()
	return p.a.Handle(context.Background(), p.decode(t, name))
}

// TestDocumentedPayloads answers the requests of testdata, written in the
// documented shape, and those of testdata/recorded, which the real Codex
// CLI sent slim's hooks in the end-to-end runs (the README there says how
// they are recorded again).
func TestDocumentedPayloads(t *testing.T) {
	cases := []struct {
		payload string
		want    string // "pass", "rewrite", "deny"
		reason  string // a part of the refusal
	}{
		{"pre_apply_patch_exact", "pass", ""},
		{"pre_apply_patch_add_inside", "pass", ""},
		{"pre_apply_patch_stale", "rewrite", ""},
		{"pre_apply_patch_outside", "deny", "outside"},
		{"pre_apply_patch_parent", "deny", "outside"},
		{"pre_apply_patch_git_dir", "deny", "git directory"},
		{"pre_apply_patch_through_link", "deny", "outside"},
		{"pre_apply_patch_ambiguous", "deny", "apply_patch verification failed"},
		{"pre_apply_patch_garbage", "deny", "apply_patch validation failed"},
		{"pre_bash", "pass", ""},
		{"post_bash", "pass", ""},
		{"post_apply_patch", "pass", ""},
		{"post_mcp", "pass", ""},
		{"session_start", "pass", ""},
		{"recorded/pre_apply_patch_stale", "rewrite", ""},
		{"recorded/pre_apply_patch_outside", "deny", "apply_patch blocked: patch contains path outside workspace root"},
		{"recorded/post_apply_patch", "pass", ""},
		{"recorded/post_bash", "pass", ""},
	}
	for _, c := range cases {
		t.Run(c.payload, func(t *testing.T) {
			p := newProject(t)
			ans := p.answer(t, c.payload)
			got := "pass"
			switch {
			case ans.Deny != "" && ans.Output != nil:
				t.Fatalf("both a refusal and an output: %+v", ans)
			case ans.Deny != "":
				got = "deny"
			case ans.UpdatedInput() != nil:
				got = "rewrite"
			case ans.Output != nil:
				t.Fatalf("unexpected output %+v", ans.Output.HookSpecificOutput)
			}
			if got != c.want {
				t.Fatalf("answer %s (%+v), want %s", got, ans, c.want)
			}
			if !strings.Contains(ans.Deny, c.reason) {
				t.Fatalf("refusal %q, want it to hold %q", ans.Deny, c.reason)
			}
		})
	}
}

// The stale patch comes back as Codex's updatedInput, with allow (the
// only decision Codex takes it with): the context line carries the file's
// curly quotes and trailing blanks, so Codex changes only the print line,
// and the rewritten patch is one slim then passes unchanged.
func TestStalePatchRescuedAsUpdatedInput(t *testing.T) {
	for _, name := range []string{"pre_apply_patch_stale", "recorded/pre_apply_patch_stale"} {
		t.Run(name, func(t *testing.T) { testStalePatchRescued(t, name) })
	}
}

func testStalePatchRescued(t *testing.T, name string) {
	p := newProject(t)
	ans := p.answer(t, name)
	s := ans.Output.HookSpecificOutput
	if s.HookEventName != PreToolUse || s.PermissionDecision != "allow" {
		t.Fatalf("answer %+v, want PreToolUse allow", s)
	}
	want := "*** Begin Patch\n*** Update File: greet.py\n@@ def greet(name):\n     message = \u201cHello, \u201d + name   \n-    print(message)\n+    print(message.upper())\n     return message\n*** End Patch\n"
	if got := s.UpdatedInput["command"]; got != want {
		t.Fatalf("command\n%q\nwant\n%q", got, want)
	}
	if len(s.UpdatedInput) != 1 {
		t.Fatalf("updatedInput %v: want only command", s.UpdatedInput)
	}
	in := p.decode(t, name)
	in.ToolInput["command"] = want
	if again := p.a.Handle(context.Background(), in); again.Deny != "" || again.Output != nil {
		t.Fatalf("the rescued patch is not passed as it is: %+v", again)
	}
	b, err := json.Marshal(ans.Output)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"*** Begin Patch\n`) {
		t.Fatalf("encoded as %s", b)
	}
}

// Fields of apply_patch's input other than command are kept in the
// rewritten input as Codex sent them.
func TestUpdatedInputKeepsOtherFields(t *testing.T) {
	p := newProject(t)
	in := p.decode(t, "pre_apply_patch_stale")
	in.ToolInput["justification"] = "make it loud"
	got := p.a.Handle(context.Background(), in).UpdatedInput()
	if got["justification"] != "make it loud" || !strings.Contains(got["command"].(string), "\u201cHello") {
		t.Fatalf("updatedInput %v", got)
	}
}

// The ambiguous patch is refused with the candidate lines, and the files
// are left as they were.
func TestAmbiguousPatchNamesCandidates(t *testing.T) {
	p := newProject(t)
	ans := p.answer(t, "pre_apply_patch_ambiguous")
	if !strings.Contains(ans.Deny, "Candidates at lines 2, 6.") {
		t.Fatalf("refusal %q does not name lines 2 and 6", ans.Deny)
	}
	b, _ := os.ReadFile(filepath.Join(p.root, "twice.py"))
	if string(b) != "def a():\n    x = 1\n\n\ndef b():\n    x = 1\n" {
		t.Fatalf("twice.py changed: %q", b)
	}
}

// The loop guard counts in PostToolUse on tool_input: identical Bash
// results get the notice as additionalContext from the 3rd; Bash is never
// refused before it runs; a different command breaks the run.
func TestLoopGuardThroughCodex(t *testing.T) {
	p := newProject(t)
	var notices []bool
	for i := 0; i < 7; i++ {
		if ans := p.answer(t, "pre_bash"); ans.Deny != "" || ans.Output != nil {
			t.Fatalf("bash %d not passed: %+v", i+1, ans)
		}
		ans := p.answer(t, "post_bash")
		has := ans.Output != nil && strings.Contains(ans.Output.HookSpecificOutput.AdditionalContext, loopguard.Marker)
		if has && ans.Output.HookSpecificOutput.HookEventName != PostToolUse {
			t.Fatalf("notice under %q", ans.Output.HookSpecificOutput.HookEventName)
		}
		if ans.Deny != "" {
			t.Fatalf("a PostToolUse refused: %q", ans.Deny)
		}
		notices = append(notices, has)
	}
	want := []bool{false, false, true, true, true, true, true}
	for i := range want {
		if notices[i] != want[i] {
			t.Fatalf("notices %v, want %v", notices, want)
		}
	}
	in := p.decode(t, "post_bash")
	in.ToolInput["command"] = "ls -la docs"
	if ans := p.a.Handle(context.Background(), in); ans.Output != nil {
		t.Fatalf("a different command gets a notice: %+v", ans.Output.HookSpecificOutput)
	}
}

// The Bash results a real Codex CLI sent (PostToolUse only: the
// installer's PreToolUse matcher names apply_patch alone) get the notice
// from the 3rd identical one.
func TestRecordedBashResultsNoticed(t *testing.T) {
	p := newProject(t)
	for i := 0; i < 4; i++ {
		ans := p.answer(t, "recorded/post_bash")
		has := ans.Output != nil && ans.Output.HookSpecificOutput.HookEventName == PostToolUse &&
			strings.Contains(ans.Output.HookSpecificOutput.AdditionalContext, loopguard.Marker)
		if has != (i >= 2) || ans.Deny != "" {
			t.Fatalf("result %d: notice %v, refusal %q; want a notice from the 3rd and no refusal", i+1, has, ans.Deny)
		}
	}
}

func TestMalformedRequests(t *testing.T) {
	cases := []struct {
		name, raw string
		deny      bool
	}{
		{"cut-off apply_patch", `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin`, true},
		{"apply_patch input not an object", `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":"x"}`, true},
		{"apply_patch command not a string", `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":["a"]}}`, true},
		{"apply_patch without command", `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{}}`, true},
		{"apply_patch without an event", `{"tool_name":"apply_patch","tool_input":{}}`, true},
		{"cut-off Bash", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":`, false},
		{"apply_patch after it ran", `{"hook_event_name":"PostToolUse","tool_name":"apply_patch","tool_input":[]}`, false},
		{"nothing readable", `not json`, false},
		{"empty", ``, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t)
			in, err := Decode([]byte(c.raw))
			var ans Answer
			ok := false
			if err != nil {
				ans, ok = p.a.Malformed([]byte(c.raw), err)
			} else {
				ans, ok = p.a.Handle(context.Background(), in), true
			}
			if ok != c.deny || (c.deny && ans.Deny == "") {
				t.Fatalf("ok=%v answer %+v, want deny=%v (err %v)", ok, ans, c.deny, err)
			}
			if c.deny && !strings.Contains(ans.Deny, "slim could not check this patch") {
				t.Fatalf("reason %q", ans.Deny)
			}
		})
	}
}

// A request larger than slim reads is cut off; the tool named before the
// input still decides: apply_patch is refused.
func TestTooLargePatchIsRefused(t *testing.T) {
	p := newProject(t)
	raw := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"` + strings.Repeat("a", 1000)
	ans, ok := p.a.Malformed([]byte(raw), malformed(CodeTooLarge, "too large"))
	if !ok || ans.Deny == "" {
		t.Fatalf("ok=%v %+v", ok, ans)
	}
}

func TestDecodeKeepsFields(t *testing.T) {
	p := newProject(t)
	in := p.decode(t, "post_mcp")
	if in.SessionID == "" || in.TurnID == "" || in.Cwd != p.root || in.ToolUseID == "" || in.ToolName != "mcp__docs__search" {
		t.Fatalf("%+v", in)
	}
	if in.ToolInput["limit"] != json.Number("5") {
		t.Fatalf("limit %#v: numbers must stay as written", in.ToolInput["limit"])
	}
	if _, err := Decode([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{},"cwd":7}`)); err == nil {
		t.Fatal("a cwd of the wrong type was accepted")
	}
	if _, err := Decode([]byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}} {}`)); err == nil {
		t.Fatal("data after the object was accepted")
	}
}

func TestPreToolUseToolsNamesTheGuardedTools(t *testing.T) {
	if got := strings.Join(PreToolUseTools(), "|"); got != "apply_patch" {
		t.Fatalf("PreToolUseTools = %s", got)
	}
}

func TestPostOutputEncodesAsCodexReadsIt(t *testing.T) {
	b, _ := json.Marshal(Output{HookSpecificOutput: &Specific{HookEventName: PostToolUse, AdditionalContext: "stop"}})
	if string(b) != `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"stop"}}` {
		t.Fatalf("%s", b)
	}
}
