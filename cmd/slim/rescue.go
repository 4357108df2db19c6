package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/rescue"
	"github.com/urfave/cli/v2"
)

func init() { register(rescueCommand) }

func rescueCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "rescue",
		Usage: "check a Codex-format patch against the files, rescue stale chunks, and print, apply or diff the result",
		UsageText: "slim rescue [--root DIR] [--apply [--expect STATE] [--format] | --dry-run --diff] [--json] [--outside=block|passthrough] [PATCH|-]\n\n" +
			"Examples:\n" +
			"   slim rescue fix.patch > fixed.patch      # print the patch the host should apply\n" +
			"   slim rescue --apply fix.patch            # write every file or none\n" +
			"   slim rescue --apply --format fix.patch   # and run OpenCode's formatters on what was written\n" +
			"   slim rescue --dry-run --diff - < fix.patch\n" +
			"   slim rescue --json fix.patch             # decision, repairs, strategies",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", Usage: "the session directory patch paths resolve against (default: the working directory)"},
			&cli.BoolFlag{Name: "apply", Usage: "write the files, all or none"},
			&cli.BoolFlag{Name: "dry-run", Usage: "with --diff: show what --apply would write, write nothing"},
			&cli.BoolFlag{Name: "diff", Usage: "with --dry-run: print a unified diff"},
			&cli.StringFlag{Name: "expect", Usage: "with --apply: the \"state\" of a --dry-run --diff --json run; write nothing unless every file read is as it was then"},
			&cli.BoolFlag{Name: "format", Usage: "with --apply: after writing, run on each written file the formatters OpenCode would run (see slim fmt)"},
			&cli.BoolFlag{Name: "json", Usage: "print the decision and diagnostics as one JSON object"},
			&cli.StringFlag{Name: "outside", Usage: "targets outside the workspace: block, or passthrough (hand the patch on untouched; env SLIM_OUTSIDE)"},
		},
		Action: func(c *cli.Context) error {
			asJSON := jsonMode(c)
			res, err := runRescue(e, c)
			if asJSON {
				out := struct {
					*rescue.Result
					Diff      string               `json:"diff,omitempty"`
					Formatted []hooks.FormatReport `json:"formatted,omitempty"`
					Error     *slimerr.JSON        `json:"error,omitempty"`
				}{Result: res}
				if res == nil {
					return err // usage errors: run prints the JSON error
				}
				if err == nil && c.Bool("format") {
					out.Formatted = formatWritten(e, c, res)
				}
				out.Diff, out.Error = res.Diff, errorJSON(err)
				return answerJSON(e, out, err)
			}
			if err != nil {
				return err
			}
			if err := printRescue(e, c, res); err != nil {
				return err
			}
			if c.Bool("format") {
				printFormatted(e.stdout, formatWritten(e, c, res))
			}
			return nil
		},
	}
}

// runRescue checks the flags, reads the patch and runs the engine. A nil
// Result means a usage error.
func runRescue(e *env, c *cli.Context) (*rescue.Result, error) {
	apply, dry, diff := c.Bool("apply"), c.Bool("dry-run"), c.Bool("diff")
	switch {
	case dry != diff:
		return nil, usageErr("--dry-run and --diff go together")
	case apply && dry:
		return nil, usageErr("--apply cannot be combined with --dry-run --diff")
	case !apply && (c.IsSet("expect") || c.Bool("format")):
		return nil, usageErr("--expect and --format go with --apply")
	}
	outside := c.String("outside")
	switch outside {
	case "", rescue.OutsideBlock, rescue.OutsidePassthrough:
	default:
		return nil, usageErr("--outside must be block or passthrough, not %q", outside)
	}
	if outside == "" {
		// The flag wins over SLIM_OUTSIDE; an unknown value of the variable
		// is refused by the engine.
		outside = e.cfg.outside
	}
	if c.NArg() > 1 {
		return nil, usageErr("rescue takes one patch file (or - for stdin)")
	}
	data, err := readPatch(e, c.Args().First())
	if err != nil {
		return nil, err
	}
	root, err := rootDir(c.String("root"))
	if err != nil {
		return nil, err
	}
	ctx := e.ctx
	if apply {
		// An interrupt or a termination request rolls the files back
		// instead of leaving part of the patch applied; only SIGKILL can.
		var stop context.CancelFunc
		ctx, stop = e.interruptible()
		defer stop()
	}
	var pause func(int)
	if apply {
		pause = applyPause(ctx, e.cfg.getenv("SLIM_APPLY_PAUSE_MS"))
	}
	return rescue.Process(data, rescue.Options{
		BeforeWrite: pause,
		Directory:   root,
		Outside:     outside,
		AllowNested: e.cfg.allowNested,
		Apply:       apply,
		DryRunDiff:  dry && diff,
		Expect:      c.String("expect"),
		Report:      jsonMode(c) || c.Bool("format"),
		Context:     ctx,
	})
}

// readPatch reads the patch from the named file or stdin ("" or "-"),
// refusing, without reading it whole, a patch above rescue.MaxPatchSize.
func readPatch(e *env, name string) ([]byte, error) {
	var r io.Reader = e.stdin
	if name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageErr("cannot read the patch: %v", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > rescue.MaxPatchSize {
			return nil, rescue.PatchTooLarge(rescue.MaxPatchSize)
		}
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, rescue.MaxPatchSize+1))
	if err != nil {
		return nil, usageErr("cannot read the patch: %v", err)
	}
	if len(data) > rescue.MaxPatchSize {
		return nil, rescue.PatchTooLarge(rescue.MaxPatchSize)
	}
	return data, nil
}

// printRescue writes the text-mode output: the patch to hand on, the diff,
// or a summary of what was applied; one stderr line per rescued chunk.
func printRescue(e *env, c *cli.Context, res *rescue.Result) error {
	for _, ch := range res.Chunks {
		if ch.Rescued() {
			fmt.Fprintf(e.stderr, "slim: %s:%d: %s\n", ch.Path, ch.Line, ch.Strategy)
		}
	}
	switch {
	case c.Bool("dry-run"):
		_, err := io.WriteString(e.stdout, res.Diff)
		return err
	case c.Bool("apply"):
		for _, f := range res.Files {
			switch {
			case f.Op == "add":
				fmt.Fprintf(e.stdout, "A %s\n", f.Path)
			case f.Op == "delete":
				fmt.Fprintf(e.stdout, "D %s\n", f.Path)
			case f.Move != "":
				fmt.Fprintf(e.stdout, "R %s -> %s\n", f.Path, f.Move)
			default:
				fmt.Fprintf(e.stdout, "M %s\n", f.Path)
			}
		}
		return nil
	}
	if res.PatchText != nil {
		_, err := io.WriteString(e.stdout, *res.PatchText)
		return err
	}
	return nil
}

// formatWritten runs, after a successful apply, the formatters OpenCode
// would run on each file the patch wrote (see formatFiles).
func formatWritten(e *env, c *cli.Context, res *rescue.Result) []hooks.FormatReport {
	return formatFiles(e, c.String("root"), res.Written())
}

// printFormatted prints one line per formatted file, after the apply's
// own lines.
func printFormatted(w io.Writer, files []hooks.FormatReport) {
	for _, f := range files {
		switch {
		case f.Error != "":
			fmt.Fprintf(w, "%s: %s\n", f.Path, f.Error)
		case f.Changed && f.EOLFlipped:
			fmt.Fprintf(w, "%s: formatted by %s; line endings %s -> %s\n", f.Path, strings.Join(f.Formatters, ", "), f.EOLBefore, f.EOLAfter)
		case f.Changed:
			fmt.Fprintf(w, "%s: formatted by %s\n", f.Path, strings.Join(f.Formatters, ", "))
		default:
			fmt.Fprintf(w, "%s: unchanged by %s\n", f.Path, strings.Join(f.Formatters, ", "))
		}
	}
}

// applyPause reads SLIM_APPLY_PAUSE_MS, a knob for tests of interruption:
// an apply of several files waits that long before each file after the
// first, so that a test can stop it half-way (SIGTERM) and see the first
// file put back. The wait ends early when ctx ends. Unset or not a
// positive number: no pause.
func applyPause(ctx context.Context, v string) func(int) {
	ms, err := strconv.Atoi(v)
	if err != nil || ms <= 0 {
		return nil
	}
	return func(i int) {
		if i == 0 {
			return
		}
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}
