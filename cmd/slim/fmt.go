package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/slimgate/slim/format"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/worktree"
	"github.com/urfave/cli/v2"
)

func init() { register(fmtCommand) }

// codeFormatterFailed is the error code of a run in which a formatter did
// not start, exited non-zero or was killed at its time bound (exit 1).
const codeFormatterFailed = "formatter_failed"

func fmtCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:     "fmt",
		Category: "Format files",
		Usage:    "run on each FILE the formatters OpenCode would run after writing it, and say what they changed",
		UsageText: "slim fmt [--root DIR] [--timeout S] [--json] FILE...\n" +
			"   slim fmt --explain [--root DIR] [--json] FILE...\n\n" +
			"The formatters, their order and their detection follow OpenCode's own table (" + format.HostVersion + ")\n" +
			"and the \"formatter\" key of its opencode.json(c) files: nothing runs unless that key is true or an\n" +
			"object. Each formatter runs in --root (the session directory, default: the working directory) with\n" +
			"$FILE replaced by the file's absolute path, and is killed at --timeout. Files outside the worktree\n" +
			"are refused (exit 5). A formatter that fails is reported and the exit code is 1. Line endings a\n" +
			"formatter flips are reported, never undone.\n\n" +
			"Examples:\n" +
			"   slim fmt --explain src/main.go     # which formatters apply, and why the others do not\n" +
			"   slim fmt src/main.go web/app.ts    # run them; print what ran and what changed\n" +
			"   slim fmt --json --timeout 30 main.go",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "explain", Usage: "say which formatters would run and why the others would not; run none (a probe such as `uv format --help` may run)"},
			&cli.StringFlag{Name: "root", Usage: "the session directory: formatters run there, and relative FILEs resolve against it (default: the working directory)"},
			&cli.Float64Flag{Name: "timeout", Value: format.DefaultTimeout.Seconds(), Usage: "seconds each formatter may run before it is killed with its process group"},
			&cli.BoolFlag{Name: "json", Usage: "print {directory, worktree, files, error}: per file the decisions, and for a run the steps and what changed"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return usageErr("fmt needs at least one FILE")
			}
			if t := c.Float64("timeout"); t <= 0 {
				return usageErr("--timeout must be more than 0 seconds")
			}
			explain := c.Bool("explain")
			h, err := newFormatHost(e, c)
			out := fmtJSON{Files: []any{}}
			if err == nil {
				out.Directory, out.Worktree = h.dir, h.wt
				err = runFmt(e, c, h.host, explain, c.Args().Slice(), &out)
			}
			err = fmtError(err)
			if jsonMode(c) {
				out.Error = errorJSON(err)
				return answerJSON(e, out, err)
			}
			return err
		},
	}
}

// fmtJSON is the wire form of `slim fmt --json`: files holds one
// format.Explanation per FILE with --explain, else one format.Result.
type fmtJSON struct {
	Directory string        `json:"directory"`
	Worktree  string        `json:"worktree"`
	Files     []any         `json:"files"`
	Error     *slimerr.JSON `json:"error,omitempty"`
}

type formatHost struct {
	host    *format.Host
	dir, wt string
}

// newFormatHost builds the session's format.Host from --root and the
// environment the host itself reads.
func newFormatHost(e *env, c *cli.Context) (*formatHost, error) {
	return newFormatHostAt(e, c.String("root"), time.Duration(c.Float64("timeout")*float64(time.Second)))
}

// newFormatHostAt builds the format.Host of the session directory root
// ("" for the working directory), each formatter bounded by timeout.
func newFormatHostAt(e *env, rootFlag string, timeout time.Duration) (*formatHost, error) {
	root, err := rootDir(rootFlag)
	if err != nil {
		return nil, err
	}
	g, err := worktree.NewSessionGuard(root, "", false, worktree.Options{AllowNested: e.cfg.allowNested})
	if err != nil {
		return nil, slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
	}
	opts := readFormatOptions(e.cfg.getenv)
	opts.Path = e.cfg.path
	opts.Timeout = timeout
	h, err := format.NewHost(g, opts)
	if err != nil {
		return nil, err
	}
	return &formatHost{host: h, dir: g.Directory(), wt: g.Worktree()}, nil
}

// readFormatOptions reads where OpenCode keeps its configuration and its
// downloaded programs, from the variables OpenCode itself reads:
// XDG_CONFIG_HOME and XDG_CACHE_HOME (else ~/.config and ~/.cache), HOME,
// OPENCODE_CONFIG, OPENCODE_CONFIG_DIR, OPENCODE_CONFIG_CONTENT,
// OPENCODE_DISABLE_PROJECT_CONFIG, OPENCODE_TEST_MANAGED_CONFIG_DIR (else
// the system's managed directory) and OPENCODE_EXPERIMENTAL(_OXFMT).
func readFormatOptions(getenv func(string) string) format.Options {
	home := getenv("HOME")
	var opts format.Options
	if d := xdgBase(getenv, "XDG_CONFIG_HOME", ".config"); d != "" {
		opts.Config.GlobalDir = filepath.Join(d, "opencode")
	}
	if d := xdgBase(getenv, "XDG_CACHE_HOME", ".cache"); d != "" {
		opts.HostBin = filepath.Join(d, "opencode", "bin")
		opts.HostPackages = filepath.Join(d, "opencode", "packages")
	}
	opts.Config.Home = home
	opts.Config.File = getenv("OPENCODE_CONFIG")
	opts.Config.Dir = getenv("OPENCODE_CONFIG_DIR")
	opts.Config.Content = getenv("OPENCODE_CONFIG_CONTENT")
	switch strings.ToLower(getenv("OPENCODE_DISABLE_PROJECT_CONFIG")) {
	case "1", "true":
		opts.Config.NoProject = true
	}
	opts.Config.ManagedDir = getenv("OPENCODE_TEST_MANAGED_CONFIG_DIR")
	if opts.Config.ManagedDir == "" {
		opts.Config.ManagedDir = managedConfigDir(getenv)
	}
	opts.Config.Getenv = getenv
	oxfmt, set := hostBool(getenv("OPENCODE_EXPERIMENTAL_OXFMT"))
	if !set {
		oxfmt, _ = hostBool(getenv("OPENCODE_EXPERIMENTAL"))
	}
	opts.Experimental = map[string]bool{"oxfmt": oxfmt}
	opts.Env = os.Environ()
	return opts
}

// managedConfigDir is where an administrator's OpenCode config lives.
func managedConfigDir(getenv func(string) string) string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/opencode"
	case "windows":
		pd := getenv("ProgramData")
		if pd == "" {
			pd = `C:\ProgramData`
		}
		return filepath.Join(pd, "opencode")
	}
	return "/etc/opencode"
}

// hostBool reads a switch the way OpenCode reads its experimental ones:
// true, yes, on, 1 or y; false, no, off, 0 or n; set reports whether it
// was either.
func hostBool(v string) (on, set bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1", "y":
		return true, true
	case "false", "no", "off", "0", "n":
		return false, true
	}
	return false, false
}

// runFmt explains or formats each file. Every file is checked before any
// formatter runs, so a file outside the worktree or a missing one stops
// the whole command with nothing formatted.
func runFmt(e *env, c *cli.Context, h *format.Host, explain bool, files []string, out *fmtJSON) error {
	ctx, stop := e.interruptible()
	defer stop()
	text := !jsonMode(c)
	if explain {
		for _, f := range files {
			x, err := h.Explain(ctx, f)
			if err != nil {
				return err
			}
			out.Files = append(out.Files, x)
			if text {
				printExplanation(e.stdout, f, x)
			}
		}
		return nil
	}
	for _, f := range files {
		if err := h.Check(f); err != nil {
			return err
		}
	}
	var failed []string
	runs := 0
	for _, f := range files {
		res, err := h.Run(ctx, f)
		if err != nil {
			return err
		}
		out.Files = append(out.Files, res)
		if text {
			printResult(e.stdout, f, res)
		}
		for _, st := range res.Steps {
			runs++
			if st.Failed {
				failed = append(failed, fmt.Sprintf("%s on %s: %s", st.Name, f, st.Error))
			}
		}
	}
	if len(failed) > 0 {
		return slimerr.New(slimerr.Internal, codeFormatterFailed,
			"%d of %d formatter runs failed; the first: %s", len(failed), runs, failed[0])
	}
	return nil
}

// printResult prints one line per file: what ran and what changed, then a
// line per failed formatter.
func printResult(w io.Writer, file string, r *format.Result) {
	var ran []string
	for _, st := range r.Steps {
		ran = append(ran, st.Name)
	}
	switch {
	case !r.Enabled:
		fmt.Fprintf(w, "%s: not formatted: formatting is off in the OpenCode configuration\n", file)
	case r.DetectionError != "":
		fmt.Fprintf(w, "%s: not formatted: %s\n", file, r.DetectionError)
	case len(r.Steps) == 0:
		fmt.Fprintf(w, "%s: not formatted: no formatter applies to %s here (slim fmt --explain says why)\n", file, extWords(r.Extension))
	case r.Changed:
		line := fmt.Sprintf("%s: changed by %s (%d -> %d bytes)", file, strings.Join(ran, ", "), r.BytesBefore, r.BytesAfter)
		if r.EOLFlipped {
			line += fmt.Sprintf("; line endings %s -> %s (reported, not undone)", r.EOLBefore, r.EOLAfter)
		}
		fmt.Fprintln(w, line)
	default:
		fmt.Fprintf(w, "%s: unchanged by %s\n", file, strings.Join(ran, ", "))
	}
	for _, st := range r.Steps {
		if st.Failed {
			fmt.Fprintf(w, "  %s failed: %s\n", st.Name, st.Error)
		}
	}
}

// printExplanation prints the decisions for one file: the formatters that
// run with their commands, the ones that do not with the reason, and the
// ones for other extensions on one line.
func printExplanation(w io.Writer, file string, x *format.Explanation) {
	if !x.Enabled {
		fmt.Fprintf(w, "%s: nothing runs: formatting is off (no OpenCode configuration sets \"formatter\" to true or to an object)\n", file)
		return
	}
	from := "formatter: true or an object"
	if n := len(x.ConfigFrom); n > 0 {
		from = "set in " + strings.Join(x.ConfigFrom, ", ")
	}
	fmt.Fprintf(w, "%s (%s): formatting on, %s\n", file, extWords(x.Extension), from)
	var other []string
	for _, d := range x.Formatters {
		switch {
		case d.Runs:
			fmt.Fprintf(w, "  runs  %s: %s\n        %s\n", d.Name, strings.Join(d.Command, " "), d.Detail)
		case d.Reason == format.ReasonExtension:
			other = append(other, d.Name)
		default:
			fmt.Fprintf(w, "  skip  %s: %s\n", d.Name, d.Detail)
		}
	}
	if len(other) > 0 {
		fmt.Fprintf(w, "  not for %s: %s\n", extWords(x.Extension), strings.Join(other, ", "))
	}
	if x.DetectionError != "" {
		fmt.Fprintf(w, "  nothing runs: %s\n", x.DetectionError)
	}
}

func extWords(ext string) string {
	if ext == "" {
		return "a name without an extension"
	}
	return ext
}

// fmtError gives the format package's errors their CLI kind; the
// worktree's refusals and the command's own errors pass as they are.
func fmtError(err error) error {
	if errors.Is(err, context.Canceled) {
		return slimerr.New(slimerr.Internal, "interrupted", "slim fmt was interrupted: the running formatter was killed with its process group, and the file is as it left it")
	}
	if fe, ok := format.AsError(err); ok {
		return &slimerr.Error{Kind: cliKind(fe.Kind), Code: fe.Code, Message: fe.Message, Err: err}
	}
	return err
}
