package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/search"
	"github.com/slimgate/slim/worktree"
	"github.com/urfave/cli/v2"
)

func init() {
	registerSearch(grepCommand)
	registerSearch(globCommand)
}

// searchFlags are the flags grep and glob share.
func searchFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "path", Usage: "the directory (or, for grep, the file) to search, relative to --root (default: --root itself)"},
		&cli.StringFlag{Name: "root", Usage: "the project (session) directory (default: the working directory)"},
		&cli.BoolFlag{Name: "allow-outside", Usage: "let --path lie outside the session directory and its worktree (refused by default)"},
		&cli.BoolFlag{Name: "no-fallback", Usage: "fail (exit 1) when ripgrep is missing instead of using slim's built-in search"},
		&cli.BoolFlag{Name: "no-hidden", Usage: "skip hidden files and directories (searched by default, as OpenCode does)"},
		&cli.IntFlag{Name: "limit", Value: search.DefaultLimit, Usage: "show at most this many results (all are counted)"},
		&cli.DurationFlag{Name: "timeout", Value: search.DefaultTimeout, Usage: "stop the search after this long and report what was found"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
	}
}

func grepCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "grep",
		Usage: "search file contents with a regular expression, through ripgrep, as OpenCode's grep tool does",
		UsageText: "slim search grep [--path P] [--include GLOB] [--root DIR] [--json] PATTERN\n\n" +
			"Prints \"Found N matches\", then each file (most recently modified first) with its\n" +
			"\"  Line N: text\" lines; at most --limit matches are shown, all are counted. \"No files found\"\n" +
			"(exit 0) when nothing matches. Hidden files are searched, ignore files honoured, .git never.\n" +
			"A path outside the session directory and its worktree is refused (exit 5) unless\n" +
			"--allow-outside; a missing path is exit 4; a bad pattern exit 3.\n\n" +
			"Examples:\n" +
			"   slim search grep 'func \\w+Handler' --include '*.go'\n" +
			"   slim search grep --path src --json TODO",
		Flags: append(searchFlags(),
			&cli.StringFlag{Name: "include", Usage: "only files matching this glob (\"*.js\", \"*.{ts,tsx}\"); without a slash it matches names at any depth"},
		),
		Action: func(c *cli.Context) error { return runSearch(e, c, "grep") },
	}
}

func globCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "glob",
		Usage: "list files whose path matches a glob, through ripgrep, as OpenCode's glob tool does",
		UsageText: "slim search glob [--path DIR] [--root DIR] [--json] PATTERN\n\n" +
			"Prints the matching files as absolute paths, most recently modified first; at most --limit are\n" +
			"shown, all are counted. \"No files found\" (exit 0) when nothing matches. A pattern without a\n" +
			"slash matches file names at any depth; with one it is anchored at the search directory.\n\n" +
			"Examples:\n" +
			"   slim search glob '*.go'\n" +
			"   slim search glob --path src '**/*_test.go'",
		Flags:  searchFlags(),
		Action: func(c *cli.Context) error { return runSearch(e, c, "glob") },
	}
}

// searchJSON is the wire form of `slim search grep|glob --json`.
type searchJSON struct {
	Tool           string         `json:"tool"`
	Pattern        string         `json:"pattern"`
	Include        string         `json:"include,omitempty"`
	Target         *search.Target `json:"target,omitempty"`
	Engine         string         `json:"engine,omitempty"`
	Ripgrep        string         `json:"ripgrep,omitempty"`
	FallbackReason string         `json:"fallbackReason,omitempty"`
	Total          int            `json:"total"`
	Truncated      bool           `json:"truncated"`
	TimedOut       bool           `json:"timedOut,omitempty"`
	Partial        bool           `json:"partial,omitempty"`
	Matches        []search.Match `json:"matches,omitempty"`
	Files          []string       `json:"files,omitempty"`
	Output         string         `json:"output,omitempty"`
	Error          *slimerr.JSON  `json:"error,omitempty"`
}

// searchArgs are the parsed arguments of grep and glob.
type searchArgs struct {
	pattern, path, root, include string
	allowOutside, noFallback     bool
	noHidden, json               bool
	limit                        int
	timeout                      time.Duration
}

// parseSearchArgs reads the flags and the pattern. Flags may also follow
// the pattern (slim search grep PATTERN --path src), as in the synopsis:
// urfave/cli stops at the first argument, so what follows it is parsed
// again with the same flags.
func parseSearchArgs(c *cli.Context) (searchArgs, error) {
	a := searchArgs{
		path: c.String("path"), root: c.String("root"), include: c.String("include"),
		allowOutside: c.Bool("allow-outside"), noFallback: c.Bool("no-fallback"),
		noHidden: c.Bool("no-hidden"), json: jsonMode(c),
		limit: c.Int("limit"), timeout: c.Duration("timeout"),
	}
	args := c.Args().Slice()
	if len(args) == 0 {
		return a, usageErr("search %s needs a PATTERN", c.Command.Name)
	}
	a.pattern = args[0]
	if len(args) > 1 {
		set := flag.NewFlagSet(c.Command.Name, flag.ContinueOnError)
		set.SetOutput(io.Discard)
		for _, f := range c.Command.Flags {
			if err := f.Apply(set); err != nil {
				return a, err
			}
		}
		if err := set.Parse(args[1:]); err != nil {
			return a, usageErr("search %s: %v", c.Command.Name, err)
		}
		if set.NArg() > 0 {
			return a, usageErr("search %s takes exactly one PATTERN, got also %q; put -- before a pattern that starts with -", c.Command.Name, set.Args())
		}
		set.Visit(func(f *flag.Flag) {
			g := f.Value.(flag.Getter).Get()
			switch f.Name {
			case "path":
				a.path = g.(string)
			case "root":
				a.root = g.(string)
			case "include":
				a.include = g.(string)
			case "allow-outside":
				a.allowOutside = g.(bool)
			case "no-fallback":
				a.noFallback = g.(bool)
			case "no-hidden":
				a.noHidden = g.(bool)
			case "json":
				a.json = g.(bool)
			case "limit":
				a.limit = g.(int)
			case "timeout":
				a.timeout = g.(time.Duration)
			}
		})
	}
	return a, nil
}

func runSearch(e *env, c *cli.Context, tool string) error {
	a, err := parseSearchArgs(c)
	out := searchJSON{Tool: tool, Pattern: a.pattern, Include: a.include}
	if err == nil {
		err = doSearch(e, a, tool, &out)
	}
	if a.json {
		out.Error = errorJSON(err)
		return answerJSON(e, out, err)
	}
	if err != nil {
		return err
	}
	_, werr := fmt.Fprintln(e.stdout, out.Output)
	return werr
}

func doSearch(e *env, a searchArgs, tool string, out *searchJSON) error {
	abs, err := rootDir(a.root)
	if err != nil {
		return err
	}
	// Reading a nested worktree or submodule is harmless, and a search of
	// the whole project descends into it anyway.
	guard, err := worktree.NewSessionGuard(abs, "", false, worktree.Options{AllowNested: true})
	if err != nil {
		return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
	}
	target, err := search.ResolveTarget(tool, a.path, search.TargetOptions{
		Directory:    abs,
		Guard:        guard,
		AllowOutside: a.allowOutside,
	})
	if err != nil {
		if se, ok := search.AsError(err); ok && se.Code == search.CodeOutside {
			se.Message += ", or pass --allow-outside to search there anyway"
		}
		return err
	}
	out.Target = &target
	for _, n := range target.Notes {
		fmt.Fprintf(e.stderr, "note: %s\n", n)
	}

	rg, findErr := search.FindRipgrep(search.FindOptions{
		Explicit:     e.cfg.rg,
		ExplicitFrom: "SLIM_RG",
		PathList:     e.cfg.path,
		OpenCodeBin:  e.cfg.openCodeBin,
	})
	var rgp *search.Ripgrep
	reason := ""
	switch {
	case findErr == nil:
		rgp = &rg
		out.Ripgrep = rg.Path
	case e.cfg.rg != "" || a.noFallback:
		return findErr
	default:
		reason = "ripgrep (rg) was not found on PATH or in OpenCode's bin directory"
	}

	ctx, stop := e.interruptible()
	defer stop()
	timeout := a.timeout
	if timeout <= 0 {
		timeout = search.DefaultTimeout
	}
	limit := a.limit
	if limit <= 0 {
		return usageErr("--limit must be at least 1, got %d", limit)
	}
	var (
		text string
		ri   search.RunInfo
	)
	switch tool {
	case "grep":
		res, err := search.Grep(ctx, search.GrepOptions{
			Pattern: out.Pattern, Target: target, Include: out.Include, Limit: limit, Timeout: timeout,
			NoHidden: a.noHidden, Ripgrep: rgp, FallbackReason: reason,
		})
		if err != nil {
			return interrupted(ctx, err)
		}
		text, ri = res.Text(), res.RunInfo
		out.Total, out.Matches = res.Total, res.Matches
	default:
		res, err := search.Glob(ctx, search.GlobOptions{
			Pattern: out.Pattern, Target: target, Limit: limit, Timeout: timeout,
			NoHidden: a.noHidden, Ripgrep: rgp, FallbackReason: reason,
		})
		if err != nil {
			return interrupted(ctx, err)
		}
		text, ri = res.Text(), res.RunInfo
		out.Total, out.Files = res.Total, res.Files
	}
	out.Engine, out.FallbackReason = ri.Engine, ri.FallbackReason
	out.Truncated, out.TimedOut, out.Partial = ri.Truncated, ri.TimedOut, ri.Partial
	out.Output = text
	return nil
}

// interrupted reports a search stopped by SIGINT or SIGTERM as such.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return slimerr.New(slimerr.Internal, "interrupted", "search interrupted by a signal; ripgrep was stopped")
	}
	return err
}
