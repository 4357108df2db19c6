package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func claudeHooks() ClaudeCodeHooks {
	return ClaudeCodeHooks{Command: "slim hook --host claude-code", PreMatcher: "Edit|Write", Timeout: 10}
}

func TestClaudeCodeSettingsEdits(t *testing.T) {
	cases := []struct {
		name, before string
		action       string
		after        string // "" = the file as installed must contain these parts
		contains     []string
		absent       []string
	}{
		{name: "an older entry of slim's, under another path and matcher, is replaced",
			before:   `{"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"/opt/bin/slim hook --host claude-code","timeout":5}]}]}}`,
			action:   Upgraded,
			contains: []string{`"matcher": "Edit|Write"`, `"matcher": "*"`},
			absent:   []string{"/opt/bin/slim"}},
		{name: "slim's entry inside someone's group leaves the group and its other hook",
			before:   `{"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"./log.sh"},{"type":"command","command":"slim hook --host claude-code"}]}]}}`,
			action:   Upgraded,
			contains: []string{`"command": "./log.sh"`}},
		{name: "a command that only mentions slim is not slim's",
			before:   `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo slim hook --host claude-code"}]}]}}`,
			action:   Added,
			contains: []string{`"command": "echo slim hook --host claude-code"`}},
		{name: "an empty file is an empty object", before: "", action: Added},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".claude", "settings.json")
			write(t, path, c.before, 0o600)
			r, err := ClaudeCode(path, dir, claudeHooks())
			if err != nil || r.Action != c.action {
				t.Fatalf("install: %+v, %v; want %s", r, err, c.action)
			}
			got := read(t, path)
			for _, s := range c.contains {
				if !strings.Contains(got, s) {
					t.Errorf("installed file lacks %s:\n%s", s, got)
				}
			}
			for _, s := range c.absent {
				if strings.Contains(got, s) {
					t.Errorf("installed file still has %s:\n%s", s, got)
				}
			}
			if n := strings.Count(got, `"command": "slim hook --host claude-code"`); n != 2 {
				t.Errorf("slim's command appears %d times, want 2 (one per event):\n%s", n, got)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
			}
			if r, err := ClaudeCode(path, dir, claudeHooks()); err != nil || r.Action != Unchanged || read(t, path) != got {
				t.Fatalf("second install: %+v, %v", r, err)
			}
		})
	}
}

func TestClaudeCodeRefusesWhatItCannotRead(t *testing.T) {
	for _, body := range []string{
		`{"hooks":{"PreToolUse":{}}}`,
		`{"hooks":[]}`,
		`{"hooks":{},"hooks":{}}`,
		`{"hooks":{"PreToolUse":[7]}}`,
		`[]`,
		`{} {}`,
		`// comment
{}`,
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "settings.json")
		write(t, path, body, 0o644)
		_, err := ClaudeCode(path, dir, claudeHooks())
		if !isCode(err, CodeUnreadable) {
			t.Errorf("%s: %v, want %s", body, err, CodeUnreadable)
		}
		if read(t, path) != body {
			t.Errorf("%s: the file was changed", body)
		}
		if _, err := UninstallClaudeCode(path, dir, claudeHooks()); read(t, path) != body {
			t.Errorf("%s: uninstall changed the file (%v)", body, err)
		}
	}
}
