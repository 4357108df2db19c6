package install

import (
	"fmt"
	"os"
	"path/filepath"
)

// CodexHooks says which hook entries slim puts in Codex's hooks.json: the
// command Codex runs, the PreToolUse matcher (the tools slim may refuse or
// rewrite before they run) and the timeout in seconds. PostToolUse matches
// every tool ("*"), because the loop guard counts them all. hooks.json
// has the layout of Claude Code's hooks (events, matcher groups, command
// entries), so the same careful editor writes both.
type CodexHooks struct {
	Command    string
	PreMatcher string
	Timeout    int
}

// CodexTrust says what the user must do after slim's hooks were added or
// changed: Codex runs a hook it has not seen only once the user trusts it,
// and records that trust against the hook's exact definition.
const CodexTrust = "Codex runs a new or changed hook only after you trust it. Start codex in the project, open /hooks, " +
	"review slim's PreToolUse and PostToolUse hooks and trust them; a project's .codex/hooks.json loads only in a project " +
	"Codex trusts. Until then Codex runs without slim. For a headless run whose hooks you checked, " +
	"codex exec --dangerously-bypass-hook-trust skips the review for that run."

// NeedsTrust reports whether r is a Codex install that changed the hooks
// Codex runs, so that the user has to trust them (CodexTrust).
func NeedsTrust(r Result) bool {
	return r.Kind == "codex" && (r.Action == Created || r.Action == Added || r.Action == Upgraded)
}

// editor is the settings editor's view of h: its entries are recognised and
// written as Claude Code's are.
func (h CodexHooks) editor() ClaudeCodeHooks {
	return ClaudeCodeHooks{Command: h.Command, PreMatcher: h.PreMatcher, Timeout: h.Timeout}
}

// CodexPath returns the hooks file slim's hooks go to:
// <project top>/.codex/hooks.json, or with global hooks.json in
// $CODEX_HOME (~/.codex when it is unset). guard is as for OpenCodePath:
// the project top, or "" for the user's file.
func CodexPath(dir string, global bool, getenv func(string) string) (path, guard string, err error) {
	if global {
		base := getenv("CODEX_HOME")
		if base == "" {
			home := getenv("HOME")
			if home == "" {
				h, err := os.UserHomeDir()
				if err != nil {
					return "", "", fmt.Errorf("user hooks: no CODEX_HOME and no home directory: %w", err)
				}
				home = h
			}
			base = filepath.Join(home, ".codex")
		}
		return filepath.Join(base, "hooks.json"), "", nil
	}
	top, err := projectTop(dir)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(top, ".codex", "hooks.json"), top, nil
}

// Codex adds slim's PreToolUse and PostToolUse hooks to the hooks file at
// path, keeping every other member and hook exactly as written, in order.
// It is idempotent: when slim's entries are already there as they should
// be the file is not rewritten (Unchanged), which also keeps the trust
// Codex recorded for them. Older entries of slim's are replaced
// (Upgraded). A file that is not a JSON object, whose hooks are not shaped
// as Codex reads them, or that is a symbolic link is refused and left
// untouched; below guard no link is followed.
func Codex(path, guard string, h CodexHooks) (Result, error) {
	return installCommandHooks("codex", path, guard, h.editor(), "Codex must trust the new hooks before it runs them")
}

// UninstallCodex removes slim's entries from the hooks file at path and
// nothing else: a matcher group, an event list or the hooks object goes
// only when slim's entries were all it held, and the file only when
// nothing at all is left in it.
func UninstallCodex(path, guard string, h CodexHooks) (Result, error) {
	return uninstallCommandHooks("codex", path, guard, h.editor())
}
