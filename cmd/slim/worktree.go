package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/worktree"
	"github.com/urfave/cli/v2"
)

func init() { register(worktreeCommand) }

func worktreeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "worktree",
		Usage: "show which checkout a directory belongs to, and check whether paths are inside it",
		UsageText: "slim worktree root [--json] [DIR]\n   slim worktree check [--root DIR] [--json] PATH...\n\n" +
			"Examples:\n" +
			"   slim worktree root\n" +
			"   slim worktree check --root ~/src/app src/main.go ../other/file.txt",
		Subcommands: []*cli.Command{worktreeRootCommand(e), worktreeCheckCommand(e)},
	}
}

// rootJSON is the wire form of `slim worktree root --json`.
type rootJSON struct {
	Directory    string        `json:"directory"`
	Worktree     string        `json:"worktree"`
	GitDir       string        `json:"gitDir"`
	CommonDir    string        `json:"commonDir"`
	Kind         worktree.Kind `json:"kind"`
	Superproject string        `json:"superproject,omitempty"`
}

func worktreeRootCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "root",
		Usage: "print the directory, its worktree top level, git dir and kind (main, linked, submodule or none)",
		UsageText: "slim worktree root [--json] [DIR]\n\n" +
			"Examples:\n" +
			"   slim worktree root                # the working directory\n" +
			"   slim worktree root --json src/lib # {directory, worktree, gitDir, commonDir, kind, superproject}",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print {directory, worktree, gitDir, commonDir, kind, superproject}"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageErr("worktree root takes at most one directory")
			}
			dir := c.Args().First()
			if dir == "" {
				dir = "."
			}
			info, err := worktree.Resolve(dir)
			if err != nil {
				return usageErr("worktree root: %v", err)
			}
			for _, n := range info.Notes {
				fmt.Fprintf(e.stderr, "note: %s\n", n)
			}
			if jsonMode(c) {
				return e.writeJSON(rootJSON{info.Directory, info.Worktree, info.GitDir, info.CommonDir, info.Kind, info.Superproject})
			}
			lines := [][2]string{
				{"directory", info.Directory},
				{"worktree", orNone(info.Worktree)},
				{"git dir", orNone(info.GitDir)},
				{"kind", string(info.Kind)},
			}
			if info.CommonDir != "" && info.CommonDir != info.GitDir {
				lines = append(lines, [2]string{"common dir", info.CommonDir})
			}
			if info.Superproject != "" {
				lines = append(lines, [2]string{"superproject", info.Superproject})
			}
			for _, l := range lines {
				if _, err := fmt.Fprintf(e.stdout, "%-13s %s\n", l[0]+":", l[1]); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// checkJSON is the wire form of `slim worktree check --json`.
type checkJSON struct {
	Directory string             `json:"directory"`
	Worktree  string             `json:"worktree"`
	Verdicts  []worktree.Verdict `json:"verdicts"`
	Error     *slimerr.JSON      `json:"error,omitempty"`
}

func worktreeCheckCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "check",
		Usage: "decide for each PATH whether a session at --root may write it: exit 0 when all are inside, " +
			"5 when any is outside, inside a nested worktree or submodule, or inside the git directory",
		UsageText: "slim worktree check [--root DIR] [--json] PATH...\n\n" +
			"Relative paths resolve against --root (default: the working directory). The allowed area is that\n" +
			"directory plus its worktree top level. SLIM_ALLOW_NESTED=1 lets paths inside nested worktrees count.\n\n" +
			"Examples:\n" +
			"   slim worktree check src/new.go            # exit 0: inside\n" +
			"   slim worktree check ../elsewhere/f.txt    # exit 5: outside the workspace root\n" +
			"   slim worktree check --json .git/config    # exit 5, code git_dir",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "the session directory (default: the working directory)"},
			&cli.BoolFlag{Name: "json", Usage: "print {directory, worktree, verdicts, error}"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErr("worktree check needs at least one PATH")
			}
			root := c.String("root")
			if root == "" {
				root = "."
			}
			abs, err := filepath.Abs(root)
			if err != nil {
				return usageErr("--root: %v", err)
			}
			info, err := worktree.Resolve(abs)
			if err != nil {
				return usageErr("--root: %v", err)
			}
			for _, n := range info.Notes {
				fmt.Fprintf(e.stderr, "note: %s\n", n)
			}
			if st, err := os.Stat(abs); err != nil || !st.IsDir() {
				return usageErr("--root %s is not a directory", root)
			}
			g, err := worktree.NewGuard(abs, info.Worktree, worktree.Options{
				AllowNested: e.cfg.allowNested,
				GitDir:      info.GitDir,
				CommonDir:   info.CommonDir,
			})
			if err != nil {
				return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
			}
			out := checkJSON{Directory: g.Directory(), Worktree: g.Worktree()}
			var first *worktree.Verdict
			bad := 0
			for _, p := range c.Args().Slice() {
				v := g.Check(p)
				out.Verdicts = append(out.Verdicts, v)
				if !v.Inside {
					bad++
					if first == nil {
						first = &out.Verdicts[len(out.Verdicts)-1]
					}
				}
			}
			var blockErr error
			if first != nil {
				blockErr = checkError(*first, bad, len(out.Verdicts))
				out.Error = slimerr.ToJSON(classify(blockErr))
			}
			if jsonMode(c) {
				if err := e.writeJSON(out); err != nil {
					return err
				}
				return blockErr
			}
			for _, v := range out.Verdicts {
				for _, w := range v.Warnings {
					fmt.Fprintf(e.stderr, "warning: %s\n", w)
				}
				if v.Inside {
					fmt.Fprintf(e.stdout, "inside: %s\n", v.Input)
					continue
				}
				fmt.Fprintf(e.stderr, "blocked: %s\n", checkLine(v))
			}
			return blockErr
		},
	}
}

// checkLine is the one line `worktree check` prints for an offending path:
// the path as given, where it really leads, why it is refused, the code.
func checkLine(v worktree.Verdict) string {
	target := v.Physical
	if target == "" {
		target = v.Abs
	}
	return fmt.Sprintf("%s (%s): %s [%s]", v.Input, target, v.Reason, v.Code)
}

// checkError is the blocked error for the first offending verdict, with a
// count when there are several, and what to do next.
func checkError(v worktree.Verdict, bad, total int) error {
	msg := "worktree check blocked: " + checkLine(v)
	if bad > 1 {
		msg = fmt.Sprintf("worktree check blocked: %d of %d paths are not inside; the first is %s", bad, total, checkLine(v))
	}
	switch v.Code {
	case worktree.CodeNested:
		msg += ". Work on it from a session opened in that worktree, or set SLIM_ALLOW_NESTED=1 to allow it from here"
	case worktree.CodeGitDir:
		msg += ". Change the repository through git commands, not by writing its files"
	case worktree.CodeInvalidPath:
		msg += ". Use a shorter, valid UTF-8 path"
	default:
		msg += ". Keep writes inside the session directory and its worktree"
	}
	if v.Code == worktree.CodeInvalidPath {
		return slimerr.New(slimerr.Validation, v.Code, "%s", msg)
	}
	return slimerr.New(slimerr.Blocked, v.Code, "%s", msg)
}
