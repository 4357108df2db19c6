package main

import (
	"strings"

	"github.com/slimgate/slim/hooks/githook"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/urfave/cli/v2"
)

func init() { register(gitHookCommand) }

func gitHookCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "git-hook",
		Usage: "run slim's checks for a git hook (called by the shims `slim hooks install --git` writes)",
		UsageText: "slim git-hook pre-commit|pre-applypatch\n\n" +
			"Checks what is staged against HEAD: paths and symlink targets that leave the worktree or\n" +
			"enter a nested worktree or .git, line endings flipped against HEAD, and unresolved conflict\n" +
			"markers. Exit 0 when clean, 5 with one line per finding on stderr, 1 on an internal error.\n\n" +
			"Example:\n   slim git-hook pre-commit",
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 {
				return usageErr("git-hook needs a hook name: %s", strings.Join(githook.Hooks, " or "))
			}
			name := c.Args().First()
			if !githook.KnownHook(name) {
				return usageErr("git-hook: unknown hook %q (known: %s)", name, strings.Join(githook.Hooks, ", "))
			}
			findings, err := githook.Run(name, githook.Options{AllowNested: e.cfg.allowNested})
			if err != nil {
				return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
			}
			if len(findings) == 0 {
				return nil
			}
			// One stderr line per finding.
			lines := make([]string, 0, len(findings))
			for _, f := range findings {
				lines = append(lines, "slim "+name+": "+f.String())
			}
			code := findings[0].Code
			if code == "" {
				code = findings[0].Check
			}
			return slimerr.New(slimerr.Blocked, code, "%s", strings.Join(lines, "\n"))
		},
	}
}
