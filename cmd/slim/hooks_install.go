package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/slimgate/slim/hooks/claudecode"
	"github.com/slimgate/slim/hooks/codex"
	"github.com/slimgate/slim/hooks/gemini"
	"github.com/slimgate/slim/hooks/install"
	"github.com/urfave/cli/v2"
)

func init() { register(hooksCommand) }

func hooksCommand(e *env) *cli.Command {
	flags := func(verb string) []cli.Flag {
		return []cli.Flag{
			&cli.BoolFlag{Name: "opencode", Usage: verb + " the OpenCode plugin (.opencode/plugin/slim.js)"},
			&cli.BoolFlag{Name: "git", Usage: verb + " the git hook shims pre-commit and pre-applypatch"},
			&cli.BoolFlag{Name: "claude-code", Usage: verb + " slim's PreToolUse and PostToolUse hooks in Claude Code's .claude/settings.json"},
			&cli.BoolFlag{Name: "codex", Usage: verb + " slim's PreToolUse and PostToolUse hooks in Codex CLI's .codex/hooks.json"},
			&cli.BoolFlag{Name: "gemini-cli", Usage: verb + " slim's BeforeTool and AfterTool hooks in Gemini CLI's .gemini/settings.json"},
			&cli.BoolFlag{Name: "global", Usage: "with --opencode: the user-wide plugin ($XDG_CONFIG_HOME/opencode/plugin/slim.js); with --claude-code: the user's settings (~/.claude/settings.json); with --codex: the user's hooks (~/.codex/hooks.json); with --gemini-cli: the user's settings (~/.gemini/settings.json)"},
			&cli.BoolFlag{Name: "json", Usage: "print {results: [{kind, path, action, note}]}"},
		}
	}
	return &cli.Command{
		Name:      "hooks",
		Usage:     "install or remove the OpenCode plugin, the Claude Code, Codex and Gemini CLI hooks and the git hook shims",
		UsageText: "slim hooks install|uninstall [--opencode] [--claude-code] [--codex] [--gemini-cli] [--git] [--global]\n\nExample:\n   slim hooks install --opencode --git",
		Subcommands: []*cli.Command{
			{
				Name:  "install",
				Usage: "write the OpenCode plugin, the Claude Code, Codex or Gemini CLI hooks and/or the git hook shims",
				UsageText: "slim hooks install [--opencode [--apply]] [--claude-code] [--codex] [--gemini-cli] [--git] [--global] [--json]\n\n" +
					"The plugin goes to .opencode/plugin/slim.js at the git worktree top (else the current\n" +
					"directory), or with --global to $XDG_CONFIG_HOME/opencode/plugin/slim.js. The git shims go\n" +
					"to the repository's hooks directory (core.hooksPath honoured); an existing hook is moved\n" +
					"to <name>.pre-slim and still runs first. Files slim did not write are never overwritten.\n" +
					"Inside the repository no symbolic link is followed: a link at .opencode, its plugin folder,\n" +
					"slim.js or the hooks directory stops the install (exit 5) before anything is written.\n" +
					"--apply turns on apply mode: the plugin's own apply_patch replaces OpenCode's, and slim writes\n" +
					"the patch itself (every file or none, bytes kept, formatters run); it is recorded in slim.json\n" +
					"beside slim.js, and an install without --apply turns it off again.\n" +
					"--claude-code adds `slim hook --host claude-code` as a PreToolUse and a PostToolUse hook to\n" +
					".claude/settings.json at the worktree top (with --global to ~/.claude/settings.json, or\n" +
					"$CLAUDE_CONFIG_DIR/settings.json), keeping every other setting and hook; a settings file\n" +
					"that is not a JSON object, or is a link, is left untouched (exit 5).\n" +
					"--codex does the same for `slim hook --host codex` in .codex/hooks.json at the worktree top\n" +
					"(with --global $CODEX_HOME/hooks.json, ~/.codex/hooks.json by default) and says what to do\n" +
					"when Codex asks to trust the new hooks.\n" +
					"--gemini-cli does the same for `slim hook --host gemini-cli` as a BeforeTool and an AfterTool\n" +
					"hook in .gemini/settings.json at the worktree top (with --global ~/.gemini/settings.json, or\n" +
					"$GEMINI_CLI_HOME/.gemini/settings.json); Gemini CLI runs a project's hooks only in a trusted folder.\n\n" +
					"Examples:\n   slim hooks install --opencode --git\n   slim hooks install --opencode --apply\n   slim hooks install --opencode --global\n   slim hooks install --claude-code\n   slim hooks install --codex\n   slim hooks install --gemini-cli",
				Flags:  append(flags("install"), &cli.BoolFlag{Name: "apply", Usage: "with --opencode: turn on apply mode (slim applies apply_patch itself, all files or none)"}),
				Action: func(c *cli.Context) error { return runHooks(e, c, true) },
			},
			{
				Name:  "uninstall",
				Usage: "remove what `slim hooks install` wrote and restore chained git hooks",
				UsageText: "slim hooks uninstall [--opencode] [--claude-code] [--codex] [--gemini-cli] [--git] [--global] [--json]\n\n" +
					"Only files slim wrote are removed; a git hook that was moved aside is put back. From\n" +
					"Claude Code's and Gemini CLI's settings and Codex's hooks.json only slim's own hook entries\n" +
					"are removed.\n\n" +
					"Example:\n   slim hooks uninstall --git",
				Flags:  flags("remove"),
				Action: func(c *cli.Context) error { return runHooks(e, c, false) },
			},
		},
	}
}

// claudeHookTimeout is the timeout, in seconds, slim's entries give Claude
// Code and Codex for one hook run: far above what a check takes, and well
// below the hosts' own defaults (a minute for Claude Code, ten for Codex),
// so that a slim that hangs (a state file on a stalled disk) costs
// seconds, after which the call runs.
const claudeHookTimeout = 10

// geminiHookTimeoutMS is the same bound for Gemini CLI, which counts hook
// timeouts in milliseconds (its own default is a minute).
const geminiHookTimeoutMS = claudeHookTimeout * 1000

func runHooks(e *env, c *cli.Context, installing bool) error {
	if c.NArg() > 0 {
		return usageErr("hooks %s takes no arguments (got %q)", c.Command.Name, c.Args().First())
	}
	doOpenCode, doGit, doClaude, doCodex, global := c.Bool("opencode"), c.Bool("git"), c.Bool("claude-code"), c.Bool("codex"), c.Bool("global")
	doGemini := c.Bool("gemini-cli")
	if !doOpenCode && !doGit && !doClaude && !doCodex && !doGemini {
		if !global {
			return usageErr("say what to %s: --opencode, --claude-code, --codex, --gemini-cli, --git, or several (for example: slim hooks %s --opencode --git)", c.Command.Name, c.Command.Name)
		}
		doOpenCode = true
	}
	if c.Bool("apply") && !doOpenCode {
		return usageErr("--apply goes with --opencode: it turns on the OpenCode plugin's apply mode")
	}
	if global && doGit {
		return usageErr("--global applies to the OpenCode plugin and the Claude Code, Codex and Gemini CLI hooks; git hooks are installed per repository")
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("current directory: %w", err)
	}
	var results []install.Result
	finish := func(err error) error {
		if jsonMode(c) {
			if err == nil {
				return e.writeJSON(map[string]any{"results": results})
			}
			return err
		}
		for _, r := range results {
			line := fmt.Sprintf("%s %s: %s", r.Kind, r.Action, r.Path)
			if r.Note != "" {
				line += " (" + r.Note + ")"
			}
			fmt.Fprintln(e.stdout, line)
		}
		for _, r := range results {
			if install.NeedsTrust(r) {
				fmt.Fprintln(e.stdout, install.CodexTrust)
				break
			}
		}
		return err
	}
	if doOpenCode {
		path, guard, err := install.OpenCodePath(cwd, global, os.Getenv)
		if err != nil {
			return finish(err)
		}
		var r, settings install.Result
		if installing {
			r, err = install.OpenCode(path, guard)
			if err == nil {
				settings, err = install.OpenCodeSettings(path, guard, c.Bool("apply"))
			}
		} else {
			// The settings go first: the plugin folder is removed only
			// when nothing is left in it.
			settings, err = install.OpenCodeSettings(path, guard, false)
			if err == nil {
				r, err = install.UninstallOpenCode(path, guard)
			}
		}
		for _, x := range []install.Result{r, settings} {
			if x.Action != "" {
				results = append(results, x)
			}
		}
		if err != nil {
			return finish(err)
		}
	}
	if doClaude {
		path, guard, err := install.ClaudeCodePath(cwd, global, os.Getenv)
		if err != nil {
			return finish(err)
		}
		h := install.ClaudeCodeHooks{
			Command:    "slim " + strings.Join(claudeCodeArgs(), " "),
			PreMatcher: strings.Join(claudecode.PreToolUseTools(), "|"),
			Timeout:    claudeHookTimeout,
		}
		var r install.Result
		if installing {
			r, err = install.ClaudeCode(path, guard, h)
		} else {
			r, err = install.UninstallClaudeCode(path, guard, h)
		}
		if r.Action != "" {
			results = append(results, r)
		}
		if err != nil {
			return finish(err)
		}
	}
	if doCodex {
		path, guard, err := install.CodexPath(cwd, global, os.Getenv)
		if err != nil {
			return finish(err)
		}
		h := install.CodexHooks{
			Command:    "slim " + strings.Join(codexArgs(), " "),
			PreMatcher: strings.Join(codex.PreToolUseTools(), "|"),
			Timeout:    claudeHookTimeout,
		}
		var r install.Result
		if installing {
			r, err = install.Codex(path, guard, h)
		} else {
			r, err = install.UninstallCodex(path, guard, h)
		}
		if r.Action != "" {
			results = append(results, r)
		}
		if err != nil {
			return finish(err)
		}
	}
	if doGemini {
		path, guard, err := install.GeminiPath(cwd, global, os.Getenv)
		if err != nil {
			return finish(err)
		}
		h := install.GeminiHooks{
			Command:    "slim " + strings.Join(geminiArgs(), " "),
			PreMatcher: gemini.BeforeToolMatcher(),
			TimeoutMS:  geminiHookTimeoutMS,
		}
		note := ""
		if !global {
			note = install.GeminiProjectNote
		}
		var r install.Result
		if installing {
			r, err = install.Gemini(path, guard, h, note)
		} else {
			r, err = install.UninstallGemini(path, guard, h)
		}
		if r.Action != "" {
			results = append(results, r)
		}
		if err != nil {
			return finish(err)
		}
	}
	if doGit {
		dir, guard, err := install.GitHooksDir(cwd)
		if err != nil {
			return finish(err)
		}
		var rs []install.Result
		if installing {
			rs, err = install.Git(dir, guard)
		} else {
			rs, err = install.UninstallGit(dir, guard)
		}
		for _, r := range rs {
			if r.Action != "" {
				results = append(results, r)
			}
		}
		if err != nil {
			return finish(err)
		}
	}
	return finish(nil)
}
