package main

import (
	"io"
	"strings"

	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/search/astgrep"
	"github.com/urfave/cli/v2"
)

func init() {
	registerSearch(searchASTCommand)
	registerSearch(searchReplaceCommand)
}

// listFlag is a repeatable string flag that, unlike cli.StringSliceFlag,
// never splits a value at commas: a path or glob may hold one.
type listFlag []string

func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }
func (l *listFlag) String() string     { return strings.Join(*l, " ") }

func listOf(c *cli.Context, name string) []string {
	if l, ok := c.Generic(name).(*listFlag); ok && l != nil {
		return append([]string(nil), (*l)...)
	}
	return nil
}

// queryFlags are the flags search and replace share.
func queryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "pattern", Aliases: []string{"p"}, Usage: "the AST pattern, with $VAR and $$$ metavariables; it must parse as one complete node"},
		&cli.StringFlag{Name: "lang", Aliases: []string{"l"}, Usage: "the language: " + strings.Join(astgrep.Languages, ", ")},
		&cli.GenericFlag{Name: "paths", Value: &listFlag{}, Usage: "a file or directory to search, relative to --root (repeat the flag for more; PATH arguments work too; default .)"},
		&cli.GenericFlag{Name: "globs", Value: &listFlag{}, Usage: "include files matching a glob, or exclude them with a leading ! (repeatable)"},
		&cli.StringFlag{Name: "root", Usage: "the project directory ast-grep runs in, which paths resolve against (default: the working directory)"},
		&cli.GenericFlag{Name: "node-bin", Value: &listFlag{}, Usage: "a node_modules/.bin directory to look for ast-grep in, after PATH (repeatable; the OpenCode plugin passes the project's)"},
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object"},
	}
}

func searchASTCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "ast",
		Usage: "structural search with ast-grep: matches grouped by file, at most 500 listed",
		UsageText: "slim search ast --pattern P --lang L [--paths P]... [--globs G]... [--context N] [--root DIR] [--json] [PATH...]\n\n" +
			"Examples:\n" +
			"   slim search ast -p 'if err != nil { return $E }' -l go\n" +
			"   slim search ast -p 'console.log($$$A)' -l typescript --globs '!**/*.test.ts' src\n" +
			"   slim search ast -p 'def $F($$$A)' -l python --context 2",
		Flags: append(queryFlags(),
			&cli.IntFlag{Name: "context", Aliases: []string{"C"}, Usage: "lines of context around each match"},
		),
		Action: func(c *cli.Context) error {
			var res *astgrep.SearchResult
			bin, q, err := astQuery(e, c)
			if err == nil {
				ctx, stop := e.interruptible()
				defer stop()
				res, err = astgrep.Search(ctx, astgrep.SearchOptions{Query: q, Context: c.Int("context")})
			}
			if jsonMode(c) {
				return answerJSON(e, struct {
					*astgrep.SearchResult
					Binary *astgrep.Binary `json:"binary,omitempty"`
					Error  *slimerr.JSON   `json:"error,omitempty"`
				}{SearchResult: res, Binary: bin, Error: errorJSON(err)}, err)
			}
			if err != nil {
				return err
			}
			_, err = io.WriteString(e.stdout, res.Output)
			return err
		},
	}
}

func searchReplaceCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "replace",
		Usage: "structural replace with ast-grep, inside the worktree only: a dry-run diff, or --apply to write every file or none",
		UsageText: "slim search replace --pattern P --rewrite R --lang L [--paths P]... [--globs G]... [--apply] [--root DIR] [--json] [PATH...]\n\n" +
			"Examples:\n" +
			"   slim search replace -p 'fmt.Errorf($M)' -r 'errors.New($M)' -l go          # show the diff\n" +
			"   slim search replace -p 'print($$$A)' -r 'log($$$A)' -l python --apply src\n\n" +
			"Every path and glob root must lie inside the worktree, as must every file ast-grep\n" +
			"reports; otherwise nothing runs or is written (exit 5). Files keep their line endings,\n" +
			"final newline and byte order mark. An interrupt during --apply restores every file.",
		Flags: append(queryFlags(),
			&cli.StringFlag{Name: "rewrite", Aliases: []string{"r"}, Usage: "the replacement, with the pattern's metavariables (\"\" deletes each match)"},
			&cli.BoolFlag{Name: "apply", Usage: "write the files, all or none (default: a dry run that prints the diff)"},
			&cli.GenericFlag{Name: "approved", Value: &listFlag{}, Usage: "with --apply: a file the write may change (repeatable); a change to any other file refuses the whole replace"},
		),
		Action: func(c *cli.Context) error {
			var res *astgrep.ReplaceResult
			bin, q, err := astQuery(e, c)
			if err == nil && !c.IsSet("rewrite") {
				err = usageErr("--rewrite is required (use --rewrite '' to delete each match)")
			}
			apply := c.Bool("apply")
			if err == nil && c.IsSet("approved") && !apply {
				err = usageErr("--approved goes with --apply")
			}
			if err == nil {
				ctx, stop := e.interruptible()
				defer stop()
				opts := astgrep.ReplaceOptions{Query: q, Rewrite: c.String("rewrite"), Apply: apply, AllowNested: e.cfg.allowNested}
				if c.IsSet("approved") {
					opts.Approved = listOf(c, "approved")
				}
				res, err = astgrep.Replace(ctx, opts)
			}
			if jsonMode(c) {
				return answerJSON(e, struct {
					*astgrep.ReplaceResult
					Binary *astgrep.Binary `json:"binary,omitempty"`
					Error  *slimerr.JSON   `json:"error,omitempty"`
				}{ReplaceResult: res, Binary: bin, Error: errorJSON(err)}, err)
			}
			if err != nil {
				return err
			}
			text := res.Output
			if !res.Applied && res.Diff != "" {
				text += "\n" + res.Diff
			}
			_, err = io.WriteString(e.stdout, text)
			return err
		},
	}
}

// astQuery checks the flags shared by search and replace and locates the
// ast-grep binary.
func astQuery(e *env, c *cli.Context) (*astgrep.Binary, astgrep.Query, error) {
	var q astgrep.Query
	q.Pattern, q.Lang = c.String("pattern"), c.String("lang")
	switch {
	case q.Pattern == "":
		return nil, q, usageErr("--pattern is required")
	case q.Lang == "":
		return nil, q, usageErr("--lang is required (one of %s)", strings.Join(astgrep.Languages, ", "))
	case !astgrep.ValidLanguage(q.Lang):
		return nil, q, usageErr("--lang %q is not one of the languages slim passes to ast-grep: %s", q.Lang, strings.Join(astgrep.Languages, ", "))
	case c.IsSet("context") && c.Int("context") < 0:
		return nil, q, usageErr("--context must not be negative")
	}
	q.Paths = append(listOf(c, "paths"), c.Args().Slice()...)
	q.Globs = listOf(c, "globs")
	root, err := rootDir(c.String("root"))
	if err != nil {
		return nil, q, err
	}
	q.Dir = root
	bin, err := astgrep.Locate(astgrep.LocateOptions{Explicit: e.cfg.astGrep, Path: e.cfg.path, NodeBins: listOf(c, "node-bin")})
	if err != nil {
		return nil, q, err
	}
	q.Binary = bin.Path
	return &bin, q, nil
}
