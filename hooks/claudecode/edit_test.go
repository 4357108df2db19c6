package claudecode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editRequest is a PreToolUse request for tool with the given input.
func editRequest(root, tool string, input map[string]any) *Input {
	return &Input{SessionID: "s1", Cwd: root, HookEventName: PreToolUse, ToolName: tool, ToolUseID: "toolu_1", ToolInput: input}
}

func TestEditRescue(t *testing.T) {
	const file = "def greet(name):\n    message = “Hello, ” + name   \n    print(message)\n    return message\n"
	cases := []struct {
		name     string
		content  string // the file; file when empty
		old, new string
		// wantOld and wantNew are the rescued input; both empty: the call
		// passes untouched.
		wantOld, wantNew string
		refusal          string // a part of the deny reason
	}{
		{
			name: "straight quotes where the file has curly ones, trailing spaces lost",
			old:  "    message = \"Hello, \" + name\n", new: "    message = \"Hi, \" + name\n",
			wantOld: "    message = “Hello, ” + name   \n", wantNew: "    message = \"Hi, \" + name\n",
		},
		{
			name: "several lines, without a final newline",
			old:  "    message = \"Hello, \" + name\n    print(message)", new: "    print(name)",
			wantOld: "    message = “Hello, ” + name   \n    print(message)", wantNew: "    print(name)",
		},
		{
			name:    "indentation: tabs in the file, spaces in the edit; the new lines follow the mapping",
			content: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			old:     "    if x {\n        return 1\n    }\n", new: "    if x {\n        return 2\n    }\n",
			wantOld: "\tif x {\n\t\treturn 1\n\t}\n", wantNew: "\tif x {\n\t\treturn 2\n\t}\n",
		},
		{
			name:    "indentation: a prefix the edit lost; every new line gets it, a blank one stays blank",
			content: "class A:\n    def f(self):\n        return 1\n",
			old:     "def f(self):\n    return 1\n", new: "def f(self):\n    return 2\n\ndef g(self):\n    pass\n",
			wantOld: "    def f(self):\n        return 1\n", wantNew: "    def f(self):\n        return 2\n\n    def g(self):\n        pass\n",
		},
		{
			name: "an old_string in the file as written is Claude Code's own case",
			old:  "    print(message)\n", new: "    print(message.upper())\n",
		},
		{
			name: "an old_string no tolerant comparison places passes",
			old:  "    print(other)\n", new: "    print(x)\n",
		},
		{
			name:    "a line the author remembers wrongly is not drift: a stale-context rescue is not taken",
			content: "def f():\n    one = 1\n    two = 2\n    three = 3\n    four = 4\n",
			old:     "    one = 1\n    two = 22\n    three = 3\n    four = 4\n", new: "    one = 1\n    four = 4\n",
		},
		{
			name:    "a blank last line the file does not have is not drift: the retry without it is not taken",
			content: "x = 1\ny = 1\n",
			old:     "x = 1\n\n", new: "x = 2\n\n",
		},
		{
			name:    "an edit already made is left to Claude Code",
			content: "x = 1\ny = “b”\n",
			old:     "y = \"a\"\n", new: "y = \"b\"\n",
		},
		{
			name:    "a drifted old_string that fits two places is denied with their lines",
			content: "a = 1\nx = “q”\nb = 2\nx = “q”\n",
			old:     "x = \"q\"\n", new: "x = \"r\"\n",
			refusal: "fits 2 places, at lines 2, 4",
		},
		{
			name:    "a file with CR line ends is left to Claude Code",
			content: "x = “q”\r\ny = 1\r\n",
			old:     "x = \"q\"\n", new: "x = \"r\"\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t)
			target := filepath.Join(p.root, "src", "app.py")
			content := c.content
			if content == "" {
				content = file
			}
			if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			input := map[string]any{"file_path": target, "old_string": c.old, "new_string": c.new}
			out := p.a.Handle(context.Background(), editRequest(p.root, "Edit", input))
			switch {
			case c.refusal != "":
				if out.Decision() != "deny" || !strings.Contains(out.HookSpecificOutput.PermissionDecisionReason, c.refusal) {
					t.Fatalf("want a deny naming %q, got %+v", c.refusal, out.HookSpecificOutput)
				}
			case c.wantOld == "":
				if out.HookSpecificOutput != nil {
					t.Fatalf("want a pass, got %+v", out.HookSpecificOutput)
				}
			default:
				if out.HookSpecificOutput == nil || out.Decision() != "" {
					t.Fatalf("want updatedInput without a decision, got %+v", out.HookSpecificOutput)
				}
				got := out.HookSpecificOutput.UpdatedInput
				if got["old_string"] != c.wantOld || got["new_string"] != c.wantNew || got["file_path"] != target {
					t.Fatalf("updatedInput\n got old %q new %q\nwant old %q new %q", got["old_string"], got["new_string"], c.wantOld, c.wantNew)
				}
				// The rescued edit, done as Claude Code does it, changes
				// exactly the meant lines.
				if strings.Count(content, c.wantOld) != 1 {
					t.Fatalf("rescued old_string occurs %d times", strings.Count(content, c.wantOld))
				}
			}
			if b, _ := os.ReadFile(target); string(b) != content {
				t.Errorf("the hook wrote the file")
			}
		})
	}
}

func TestMultiEditRescuesEachEditAgainstTheTextBeforeIt(t *testing.T) {
	p := newProject(t)
	target := filepath.Join(p.root, "src", "app.py")
	content := "x = “a”\ny = 1\n"
	if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	input := map[string]any{"file_path": target, "edits": []any{
		map[string]any{"old_string": "y = 1", "new_string": "y = “b”"},
		// Sees the first edit's result: y's new curly quotes.
		map[string]any{"old_string": "y = \"b\"\n", "new_string": "y = 2\n"},
		map[string]any{"old_string": "x = \"a\"\n", "new_string": "x = 3\n", "note": "kept"},
	}}
	out := p.a.Handle(context.Background(), editRequest(p.root, "MultiEdit", input))
	if out.HookSpecificOutput == nil {
		t.Fatal("not rescued")
	}
	edits := out.HookSpecificOutput.UpdatedInput["edits"].([]any)
	want := []map[string]any{
		{"old_string": "y = 1", "new_string": "y = “b”"},
		{"old_string": "y = “b”\n", "new_string": "y = 2\n"},
		{"old_string": "x = “a”\n", "new_string": "x = 3\n", "note": "kept"},
	}
	for i, w := range want {
		got := edits[i].(map[string]any)
		for k, v := range w {
			if got[k] != v {
				t.Errorf("edit %d %s = %q, want %q", i+1, k, got[k], v)
			}
		}
	}
	if input["edits"].([]any)[1].(map[string]any)["old_string"] != "y = \"b\"\n" {
		t.Error("the request's own input was changed")
	}
}
