package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/urfave/cli/v2"
)

// Set by the linker (-X main.version=... -X main.commit=...); without
// them, slim version reads the build information instead (versionInfo).
var (
	version = "dev"
	commit  = "none"
)

// commandBuilders holds one constructor per top-level command. Each command
// file registers itself in an init function, so the command files can be
// written independently; the constructors run only when the app is built.
var commandBuilders []func(*env) *cli.Command

func register(b func(*env) *cli.Command) { commandBuilders = append(commandBuilders, b) }

// commandCategories groups the commands in `slim --help`, so that the
// commands people run (rescue, worktree, hooks install) stand apart from the
// ones the plugin and the git hook shims run (hook, git-hook). The help
// lists the groups in the order of their names.
var commandCategories = map[string]string{
	"rescue":   "Check patches and paths",
	"worktree": "Check patches and paths",
	"search":   "Search code",
	"fetch":    "Fetch the web",
	"tasks":    "Background tasks",
	"doctor":   "Maintenance",
	"hooks":    "Install into OpenCode and git",
	"loop":     "Maintenance",
	"version":  "Maintenance",
	"hook":     "Run by the OpenCode plugin and the git hook shims",
	"git-hook": "Run by the OpenCode plugin and the git hook shims",
}

// env is what a command needs from the process: streams, environment and the
// logger. Tests run the whole CLI in-process through run.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	log    zerolog.Logger
	// ctx is the context every command's work runs under: never done for
	// a process of its own, and ended by the plugin's cancel frame when
	// the resident slim runs the command (served).
	ctx context.Context
	// served is set when the resident slim (slim hook serve) runs the
	// command for the plugin, beside other requests in the same process:
	// then the command installs no signal handler and changes no setting
	// of the process (the resident owns both).
	served bool
	// cfg holds the SLIM_* settings, read once by run.
	cfg settings
	// printedJSON is set by a command that already wrote its own JSON object
	// (errors included), so run does not print a second one.
	printedJSON bool
	// badCommand is set when the first argument names no command.
	badCommand string
}

// jsonMode reports whether --json was given on the command or globally.
func jsonMode(c *cli.Context) bool {
	for _, cc := range c.Lineage() {
		if cc.Bool("json") {
			return true
		}
	}
	return false
}

// writeJSON prints v as one JSON object on its own line.
func (e *env) writeJSON(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	e.printedJSON = true
	return enc.Encode(v)
}

// interruptible returns the context a command's interruptible work runs
// under (a fetch, a search, a write), with its cancel function. As a
// process of its own, an interrupt or a termination request ends it: a
// search stops and a write in progress is rolled back instead of being
// left half done. Served by the resident slim, the plugin's cancel frame
// (or a signal to the resident) ends it the same way.
func (e *env) interruptible() (context.Context, context.CancelFunc) {
	if e.served {
		return context.WithCancel(e.ctx)
	}
	return signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
}

// usageErr classifies a command-line mistake (exit 2).
func usageErr(format string, args ...any) error {
	return slimerr.New(slimerr.Usage, slimerr.CodeUsage, format, args...)
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:                 "slim",
		Usage:                "git-aware worktree guard and patch gateway for AI coding agents",
		HideHelpCommand:      true,
		EnableBashCompletion: false,
		Reader:               e.stdin,
		Writer:               e.stdout,
		ErrWriter:            e.stderr,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout, errors included"},
			&cli.StringFlag{Name: "log-level", Value: "", Usage: "log level for stderr (or SLIM_LOG_FILE): debug, info, warn, error; quiet by default", EnvVars: []string{"SLIM_LOG_LEVEL"}},
		},
		Before: func(c *cli.Context) error {
			if e.served {
				// The resident slim's logger, opened once for all its runs.
				return nil
			}
			l, err := newLogger(c.String("log-level"), e.cfg.logFile, e.stderr)
			if err != nil {
				return err
			}
			e.log = l
			return nil
		},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usageErr("%v", err)
		},
		CommandNotFound: func(c *cli.Context, name string) {
			e.badCommand = name
			fmt.Fprintf(e.stderr, "slim: unknown command %q; run 'slim --help'\n", name)
		},
		ExitErrHandler: func(*cli.Context, error) {}, // run maps errors to exit codes
	}
	for _, b := range commandBuilders {
		cmd := b(e)
		setUsageErrors(cmd)
		if cmd.Category == "" {
			cmd.Category = commandCategories[cmd.Name]
		}
		app.Commands = append(app.Commands, cmd)
	}
	sort.Slice(app.Commands, func(i, j int) bool { return app.Commands[i].Name < app.Commands[j].Name })
	return app
}

// errorJSON is the "error" member of a command's --json answer: nil when
// the work succeeded.
func errorJSON(err error) *slimerr.JSON {
	if err == nil {
		return nil
	}
	return slimerr.ToJSON(classify(err))
}

// answerJSON writes out, the --json answer of a command whose work ended
// with err (already in out's error member), and returns err; a failed write
// is the command's error only when the work itself succeeded.
func answerJSON(e *env, out any, err error) error {
	if werr := e.writeJSON(out); werr != nil && err == nil {
		return werr
	}
	return err
}

// rootDir is the session directory a --root flag names: the working
// directory when empty, made absolute, and required to be a directory.
func rootDir(root string) (string, error) {
	var err error
	if root == "" {
		if root, err = os.Getwd(); err != nil {
			return "", slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
		}
	}
	if root, err = filepath.Abs(root); err != nil {
		return "", usageErr("--root: %v", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return "", usageErr("--root %s is not a directory", root)
	}
	return root, nil
}

// setUsageErrors makes flag errors in every subcommand usage errors (exit 2).
func setUsageErrors(cmd *cli.Command) {
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = func(c *cli.Context, err error, isSub bool) error { return usageErr("%v", err) }
	}
	for _, s := range cmd.Subcommands {
		setUsageErrors(s)
	}
}

// newLogger builds the stderr (or SLIM_LOG_FILE) logger. Quiet unless a
// level is asked for; with a log file (SLIM_LOG_FILE) and no level, info and
// above go to the file.
func newLogger(level, logFile string, stderr io.Writer) (zerolog.Logger, error) {
	out := stderr
	if p := logFile; p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return zerolog.Nop(), slimerr.Wrap(slimerr.Usage, slimerr.CodeUsage, fmt.Errorf("SLIM_LOG_FILE: %w", err))
		}
		out = f
		if level == "" {
			level = "info"
		}
	}
	if level == "" {
		return zerolog.Nop(), nil
	}
	lv, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || lv == zerolog.NoLevel {
		return zerolog.Nop(), usageErr("--log-level: unknown level %q (want debug, info, warn or error)", level)
	}
	return zerolog.New(out).Level(lv).With().Timestamp().Str("pid", fmt.Sprint(os.Getpid())).Logger(), nil
}

// run executes the CLI and returns the exit code. It is main without
// os.Exit, so testscript can run it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runCLI(&env{ctx: context.Background(), stdin: stdin, stdout: stdout, stderr: stderr}, args)
}

// runCLI is run for an env whose streams, context and served flag the
// caller set: the settings and the logger are its own.
func runCLI(e *env, args []string) int {
	e.cfg = readSettings(os.Getenv)
	if !e.served {
		e.log = zerolog.Nop()
	}
	stderr := e.stderr
	var err error
	if phase, ok := hookFastPath(args); ok {
		// The hook runs on every tool call: skip building the whole command
		// tree for its one fixed form, `slim hook PHASE`.
		if e.log, err = newLogger(e.cfg.logLevel, e.cfg.logFile, stderr); err == nil {
			err = runHook(e, phase)
		}
	} else {
		err = newApp(e).RunContext(e.ctx, args)
	}
	if err == nil && e.badCommand != "" {
		err = usageErr("unknown command %q", e.badCommand)
		if !wantJSON(args) {
			return 2
		}
	}
	if err == nil {
		return 0
	}
	var exitCoder cli.ExitCoder
	if errors.As(err, &exitCoder) && slimerrOf(err) == nil {
		// cli.Exit from a command: already decided.
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(stderr, msg)
		}
		return exitCoder.ExitCode()
	}
	se := classify(err)
	if wantJSON(args) {
		if !e.printedJSON {
			e.writeJSON(map[string]any{"error": slimerr.ToJSON(se)})
		}
	} else if se.Message != "" {
		msg := se.Message
		if se.Kind == slimerr.Usage || se.Kind == slimerr.Internal {
			msg = "slim: " + msg
		}
		fmt.Fprintln(stderr, msg)
	}
	e.log.Debug().Str("kind", string(se.Kind)).Str("code", se.Code).Msg(se.Message)
	return se.Kind.ExitCode()
}

func slimerrOf(err error) *slimerr.Error {
	var se *slimerr.Error
	if errors.As(err, &se) {
		return se
	}
	return nil
}

// wantJSON looks for --json among the arguments before any "--", so errors
// raised before flags are parsed still honour it.
func wantJSON(args []string) bool {
	for _, a := range args[1:] {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "-json" || a == "--json=true" {
			return true
		}
	}
	return false
}
