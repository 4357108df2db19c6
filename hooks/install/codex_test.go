package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func codexHooks() CodexHooks {
	return CodexHooks{Command: "slim hook --host codex", PreMatcher: "apply_patch", Timeout: 10}
}

// A hooks.json with someone's hooks: slim's entries are added after them,
// a second install changes nothing (not even the file's bytes, which Codex's
// trust is keyed on), and uninstall gives back the file as it was, in the
// installer's indentation.
func TestCodexHooksFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".codex", "hooks.json")
	before := "{\n  \"hooks\": {\n    \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"python3 ~/.codex/hooks/check.py\", \"timeout\": 30}]}],\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]\n  }\n}\n"
	write(t, path, before, 0o644)
	r, err := Codex(path, dir, codexHooks())
	if err != nil || r.Action != Added || r.Kind != "codex" || !NeedsTrust(r) {
		t.Fatalf("install: %+v, %v", r, err)
	}
	got := read(t, path)
	for _, part := range []string{`"command": "python3 ~/.codex/hooks/check.py"`, `"command": "notify-send done"`,
		`"matcher": "apply_patch"`, `"matcher": "*"`, `"timeout": 10`} {
		if !strings.Contains(got, part) {
			t.Errorf("installed file lacks %s:\n%s", part, got)
		}
	}
	if strings.Index(got, "check.py") > strings.Index(got, "apply_patch") {
		t.Errorf("slim's group is not after the user's:\n%s", got)
	}
	fi, _ := os.Stat(path)
	r, err = Codex(path, dir, codexHooks())
	fi2, _ := os.Stat(path)
	if err != nil || r.Action != Unchanged || NeedsTrust(r) || read(t, path) != got || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("second install: %+v, %v", r, err)
	}
	r, err = UninstallCodex(path, dir, codexHooks())
	if err != nil || r.Action != Removed {
		t.Fatalf("uninstall: %+v, %v", r, err)
	}
	after := read(t, path)
	if strings.Contains(after, "slim hook") || !strings.Contains(after, "check.py") || !strings.Contains(after, "notify-send done") {
		t.Fatalf("after uninstall:\n%s", after)
	}
	if r, err := UninstallCodex(path, dir, codexHooks()); err != nil || r.Action != Absent || read(t, path) != after {
		t.Fatalf("second uninstall: %+v, %v", r, err)
	}
}

// An older entry of slim's (another slim path, another matcher) is
// replaced, not doubled, and Codex has to trust the new one.
func TestCodexUpgradesOlderEntries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hooks.json")
	write(t, path, `{"hooks":{"PreToolUse":[{"matcher":"^apply_patch$","hooks":[{"type":"command","command":"/opt/bin/slim hook --host codex","timeout":5}]}]}}`, 0o600)
	r, err := Codex(path, dir, codexHooks())
	if err != nil || r.Action != Upgraded || !NeedsTrust(r) {
		t.Fatalf("install: %+v, %v", r, err)
	}
	got := read(t, path)
	if strings.Contains(got, "/opt/bin/slim") || strings.Count(got, `"command": "slim hook --host codex"`) != 2 {
		t.Fatalf("installed:\n%s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
	}
}

// A fresh install creates the file; uninstall removes it again when only
// slim's hooks were in it. Claude Code's command is not slim's Codex
// entry.
func TestCodexCreatesAndRemovesItsOwnFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".codex", "hooks.json")
	if r, err := Codex(path, dir, codexHooks()); err != nil || r.Action != Created || !NeedsTrust(r) {
		t.Fatalf("install: %+v, %v", r, err)
	}
	if r, err := UninstallCodex(path, dir, codexHooks()); err != nil || r.Action != Removed {
		t.Fatalf("uninstall: %+v, %v", r, err)
	}
	if exists(path) {
		t.Fatal("the file slim created is still there")
	}
	write(t, path, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"slim hook --host claude-code"}]}]}}`, 0o644)
	if r, _ := UninstallCodex(path, dir, codexHooks()); r.Action != Absent {
		t.Fatalf("uninstall took Claude Code's entry: %+v", r)
	}
}

func TestCodexRefusesWhatItCannotRead(t *testing.T) {
	for _, body := range []string{`{"hooks":{"PostToolUse":{}}}`, `{"hooks":[]}`, `[]`, `{"hooks":{}} x`} {
		dir := t.TempDir()
		path := filepath.Join(dir, "hooks.json")
		write(t, path, body, 0o644)
		if _, err := Codex(path, dir, codexHooks()); !isCode(err, CodeUnreadable) {
			t.Errorf("%s: %v, want %s", body, err, CodeUnreadable)
		}
		if _, err := UninstallCodex(path, dir, codexHooks()); read(t, path) != body {
			t.Errorf("%s: the file was changed (%v)", body, err)
		}
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	write(t, target, `{}`, 0o644)
	if err := os.Symlink(target, filepath.Join(dir, "hooks.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := Codex(filepath.Join(dir, "hooks.json"), dir, codexHooks()); err == nil || read(t, target) != `{}` {
		t.Fatalf("a link was followed: %v", err)
	}
}

func TestCodexPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if p, g, err := CodexPath("", true, env(map[string]string{"CODEX_HOME": "/srv/codex", "HOME": "/home/me"})); err != nil || p != "/srv/codex/hooks.json" || g != "" {
		t.Fatalf("CODEX_HOME: %s %s %v", p, g, err)
	}
	if p, _, err := CodexPath("", true, env(map[string]string{"HOME": "/home/me"})); err != nil || p != "/home/me/.codex/hooks.json" {
		t.Fatalf("HOME: %s %v", p, err)
	}
	dir := t.TempDir()
	if p, g, err := CodexPath(dir, false, env(nil)); err != nil || p != filepath.Join(g, ".codex", "hooks.json") {
		t.Fatalf("project: %s %s %v", p, g, err)
	}
}
