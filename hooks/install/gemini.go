package install

import (
	"fmt"
	"os"
	"path/filepath"
)

// GeminiHooks says which hook entries slim puts in Gemini CLI's
// settings.json: the command Gemini CLI runs, the BeforeTool matcher (a
// regular expression over the tools slim may refuse or change before they
// run) and the timeout in milliseconds, Gemini CLI's unit. AfterTool
// matches every tool ("*"), because the loop guard counts them all. The
// hooks have the layout of Claude Code's (events, matcher groups, command
// entries), so the same careful editor writes both.
type GeminiHooks struct {
	Command    string
	PreMatcher string
	TimeoutMS  int
}

// GeminiProjectNote is the note of a project install: Gemini CLI runs a
// project's hooks only in a folder the user trusts, and warns once about
// project hooks it has not seen.
const GeminiProjectNote = "Gemini CLI runs a project's hooks only in a trusted folder"

func (h GeminiHooks) editor() ClaudeCodeHooks {
	return ClaudeCodeHooks{Command: h.Command, PreMatcher: h.PreMatcher, Timeout: h.TimeoutMS, PreEvent: "BeforeTool", PostEvent: "AfterTool"}
}

// GeminiPath returns the settings file slim's hooks go to:
// <project top>/.gemini/settings.json, or with global the user's
// .gemini/settings.json in $GEMINI_CLI_HOME (the home directory when it is
// unset), where Gemini CLI reads them. guard is as for OpenCodePath: the
// project top, or "" for the user's file.
func GeminiPath(dir string, global bool, getenv func(string) string) (path, guard string, err error) {
	if global {
		home := getenv("GEMINI_CLI_HOME")
		if home == "" {
			home = getenv("HOME")
		}
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", "", fmt.Errorf("user settings: no GEMINI_CLI_HOME and no home directory: %w", err)
			}
			home = h
		}
		return filepath.Join(home, ".gemini", "settings.json"), "", nil
	}
	top, err := projectTop(dir)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(top, ".gemini", "settings.json"), top, nil
}

// Gemini adds slim's BeforeTool and AfterTool hooks to the settings file
// at path, keeping every other setting and hook exactly as written, in
// order, as ClaudeCode does for Claude Code's settings: idempotent
// (Unchanged), slim's older entries replaced (Upgraded), a file that is not
// a JSON object, whose hooks are not shaped as Gemini CLI reads them, or
// that is a symbolic link refused and left untouched. note is the Result's
// note when the file is written.
func Gemini(path, guard string, h GeminiHooks, note string) (Result, error) {
	return installCommandHooks("gemini-cli", path, guard, h.editor(), note)
}

// UninstallGemini removes slim's entries from the settings file at path
// and nothing else, as UninstallClaudeCode does.
func UninstallGemini(path, guard string, h GeminiHooks) (Result, error) {
	return uninstallCommandHooks("gemini-cli", path, guard, h.editor())
}
