package install

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func geminiHooks() GeminiHooks {
	return GeminiHooks{Command: "slim hook --host gemini-cli", PreMatcher: "^(write_file|replace)$", TimeoutMS: 10000}
}

// A settings.json with other settings and someone's BeforeTool hook:
// slim's entries go under BeforeTool and AfterTool (not Claude Code's
// event names), with the timeout in milliseconds; a second install changes
// nothing, and uninstall leaves the user's settings and hook as they were.
func TestGeminiSettingsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".gemini", "settings.json")
	before := "{\n  \"general\": {\"vimMode\": true},\n  \"hooks\": {\n    \"BeforeTool\": [{\"matcher\": \"run_shell_command\", \"hooks\": [{\"type\": \"command\", \"command\": \"./audit.sh\", \"timeout\": 5000}]}]\n  }\n}\n"
	write(t, path, before, 0o644)
	r, err := Gemini(path, dir, geminiHooks(), GeminiProjectNote)
	if err != nil || r.Action != Added || r.Kind != "gemini-cli" || r.Note != GeminiProjectNote {
		t.Fatalf("install: %+v, %v", r, err)
	}
	got := read(t, path)
	var s struct {
		General map[string]any
		Hooks   map[string][]struct {
			Matcher string
			Hooks   []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if err := json.Unmarshal([]byte(got), &s); err != nil {
		t.Fatalf("installed file is not JSON: %v\n%s", err, got)
	}
	if len(s.Hooks) != 2 || s.General["vimMode"] != true {
		t.Fatalf("want exactly BeforeTool and AfterTool besides the other settings:\n%s", got)
	}
	bt, at := s.Hooks["BeforeTool"], s.Hooks["AfterTool"]
	if len(bt) != 2 || bt[0].Hooks[0].Command != "./audit.sh" || bt[1].Matcher != geminiHooks().PreMatcher ||
		bt[1].Hooks[0].Command != "slim hook --host gemini-cli" || bt[1].Hooks[0].Timeout != 10000 {
		t.Fatalf("BeforeTool %+v", bt)
	}
	if len(at) != 1 || at[0].Matcher != "*" || at[0].Hooks[0].Type != "command" {
		t.Fatalf("AfterTool %+v", at)
	}
	if r, err := Gemini(path, dir, geminiHooks(), GeminiProjectNote); err != nil || r.Action != Unchanged || read(t, path) != got {
		t.Fatalf("second install: %+v, %v", r, err)
	}
	r, err = UninstallGemini(path, dir, geminiHooks())
	if err != nil || r.Action != Removed {
		t.Fatalf("uninstall: %+v, %v", r, err)
	}
	after := read(t, path)
	if strings.Contains(after, "slim hook") || strings.Contains(after, "AfterTool") || !strings.Contains(after, "./audit.sh") || !strings.Contains(after, "vimMode") {
		t.Fatalf("after uninstall:\n%s", after)
	}
}

func TestGeminiPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"GEMINI_CLI_HOME wins", map[string]string{"GEMINI_CLI_HOME": "/g", "HOME": "/h"}, "/g/.gemini/settings.json"},
		{"else HOME", map[string]string{"HOME": "/h"}, "/h/.gemini/settings.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, guard, err := GeminiPath(t.TempDir(), true, env(c.env))
			if err != nil || guard != "" || path != filepath.FromSlash(c.want) {
				t.Fatalf("GeminiPath = %q, %q, %v; want %q", path, guard, err, c.want)
			}
		})
	}
}
