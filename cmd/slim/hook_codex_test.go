package main

import (
	"testing"

	"github.com/slimgate/slim/hooks/protocol"
)

// The forms the hosts' configurations use are answered without building
// the command tree; anything else, even close to them, takes the command
// tree (which reports what is wrong with it).
func TestHookFastPathRecognisesEachHostsForm(t *testing.T) {
	cases := []struct {
		args  []string
		phase protocol.Phase
		fast  bool
	}{
		{[]string{"slim", "hook", "before"}, protocol.Before, true},
		{[]string{"slim", "hook", "after"}, protocol.After, true},
		{[]string{"slim", "hook", "--host", "codex"}, hostCodex, true},
		{[]string{"slim", "hook", "--host=codex"}, hostCodex, true},
		{[]string{"slim", "hook", "--host", "claude-code"}, hostClaudeCode, true},
		{[]string{"slim", "hook", "--host=claude-code"}, hostClaudeCode, true},
		{[]string{"slim", "hook", "--host", "gemini"}, "", false},
		{[]string{"slim", "hook", "--host=Codex"}, "", false},
		{[]string{"slim", "hook", "--host", "codex", "before"}, "", false},
		{[]string{"slim", "--log-level", "error", "hook", "--host", "codex"}, "", false},
	}
	for _, c := range cases {
		phase, fast := hookFastPath(c.args)
		if phase != c.phase || fast != c.fast {
			t.Errorf("hookFastPath(%q) = %q, %v; want %q, %v", c.args, phase, fast, c.phase, c.fast)
		}
	}
}

// The command the installer writes is the form the fast path takes.
func TestCodexInstallCommandTakesTheFastPath(t *testing.T) {
	args := append([]string{"slim"}, codexArgs()...)
	if phase, fast := hookFastPath(args); !fast || phase != hostCodex {
		t.Fatalf("%q: %q, %v", args, phase, fast)
	}
}
