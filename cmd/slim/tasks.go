package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/internal/statedir"
	"github.com/slimgate/slim/tasks"
	"github.com/urfave/cli/v2"
)

func init() { register(tasksCommand) }

// tasksConfig builds the task tools' configuration from the environment:
// the state root, the server fallback, its credentials, the orchestrator
// agents and the deadlines (SLIM_TASKS_*_MS).
func tasksConfig(getenv func(string) string) (tasks.Config, error) {
	root, err := statedir.Root()
	if err != nil {
		return tasks.Config{}, slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
	}
	t, err := tasks.TimeoutsFromEnv(getenv)
	if err != nil {
		return tasks.Config{}, err
	}
	cfg := tasks.Config{
		StateDir:  root,
		ServerURL: getenv("SLIM_OPENCODE_URL"),
		Username:  getenv("OPENCODE_SERVER_USERNAME"),
		Password:  getenv("OPENCODE_SERVER_PASSWORD"),
		Timeouts:  t,
		// The crash tests' switch: a point of the send rule at which the
		// process kills itself (see tasks.Config.CrashAt).
		CrashAt: getenv("SLIM_TASKS_CRASH_AT"),
	}
	on, err := onOff(getenv, "SLIM_TASKS_NOTIFY")
	if err != nil {
		return tasks.Config{}, err
	}
	cfg.NoNotify = !on
	if v := strings.TrimSpace(getenv("SLIM_TASKS_ORCHESTRATORS")); v != "" {
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				cfg.OrchestratorAgents = append(cfg.OrchestratorAgents, a)
			}
		}
	}
	return cfg, nil
}

// scopeFlags name a store for the operator commands, which have no
// request: the project directory and the server.
func scopeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "directory", Usage: "the project directory (default: the current directory)"},
		&cli.StringFlag{Name: "server-url", Usage: "the OpenCode server (default: SLIM_OPENCODE_URL)"},
		&cli.StringFlag{Name: "flavor", Value: "v1", Usage: "the server's API: v1 or v2"},
	}
}

func scopeOf(c *cli.Context, cfg tasks.Config) (tasks.HostScope, error) {
	dir := c.String("directory")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return tasks.HostScope{}, slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
		}
		dir = wd
	}
	return tasks.HostScope{Directory: dir, ServerURL: c.String("server-url"), Flavor: c.String("flavor")}, nil
}

func tasksCommand(e *env) *cli.Command {
	getenv := e.cfg.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	// operatorText is the action of an operator command that prints one
	// text for its scope.
	operatorText := func(run func(*cli.Context, tasks.Config, tasks.HostScope) (string, error)) cli.ActionFunc {
		return func(c *cli.Context) error {
			cfg, sc, err := operatorScope(c, getenv)
			if err != nil {
				return err
			}
			out, err := run(c, cfg, sc)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(e.stdout, out)
			return err
		}
	}
	// wakeCommand is a command about one orchestrator session's wakes
	// (the gate, the sender): --session S in the scope the flags name,
	// with SLIM_TASKS_WAKE saying whether wakes are on.
	wakeCommand := func(name, usage, prints string, fn func(context.Context, tasks.Config, tasks.HostScope, string, bool) (string, error)) *cli.Command {
		return &cli.Command{
			Name:      name,
			Usage:     usage,
			UsageText: "slim tasks " + name + " --session S [--directory D] [--server-url U]\n\n" + prints,
			Flags:     append(scopeFlags(), &cli.StringFlag{Name: "session", Usage: "the orchestrator session (required)"}),
			Action: operatorText(func(c *cli.Context, cfg tasks.Config, sc tasks.HostScope) (string, error) {
				if c.String("session") == "" {
					return "", usageErr(`Required flag "session" not set`)
				}
				wakes, err := onOff(getenv, "SLIM_TASKS_WAKE")
				if err != nil {
					return "", err
				}
				return fn(c.Context, cfg, sc, c.String("session"), wakes)
			}),
		}
	}
	var subs []*cli.Command
	for _, name := range tasks.ToolNames() {
		subs = append(subs, taskToolCommand(e, name, getenv))
	}
	subs = append(subs,
		&cli.Command{
			Name:      "board",
			Usage:     "print a parent session's background job board",
			UsageText: "slim tasks board --parent SESSION [--record] [--directory D] [--server-url U]",
			Flags: append(scopeFlags(),
				&cli.StringFlag{Name: "parent", Usage: "the orchestrator session (default: every parent)"},
				&cli.BoolFlag{Name: "record", Usage: "remember the finished runs shown, for acknowledgement when the parent goes idle"},
			),
			Action: operatorText(func(c *cli.Context, cfg tasks.Config, sc tasks.HostScope) (string, error) {
				return tasks.Board(cfg, sc, c.String("parent"), c.Bool("record"))
			}),
		},
		&cli.Command{
			Name:      "reconcile",
			Usage:     "observe the host once for every tracked task (or one parent's) and print the board",
			UsageText: "slim tasks reconcile [--parent SESSION] [--directory D] [--server-url U]",
			Flags:     append(scopeFlags(), &cli.StringFlag{Name: "parent", Usage: "only this orchestrator session's tasks"}),
			Action: operatorText(func(c *cli.Context, cfg tasks.Config, sc tasks.HostScope) (string, error) {
				return tasks.Reconcile(c.Context, cfg, sc, c.String("parent"))
			}),
		},
		&cli.Command{
			Name:  "lease",
			Usage: "inspect or break task leases (operators only)",
			Subcommands: []*cli.Command{{
				Name:      "inspect",
				Usage:     "list every lease and op of the scope",
				UsageText: "slim tasks lease inspect [--json] [--directory D] [--server-url U]",
				Flags:     append(scopeFlags(), &cli.BoolFlag{Name: "json", Usage: "print the leases and ops as JSON"}),
				Action: func(c *cli.Context) error {
					cfg, sc, err := operatorScope(c, getenv)
					if err != nil {
						return err
					}
					in, err := tasks.InspectLeases(cfg, sc)
					if err != nil {
						return err
					}
					if jsonMode(c) {
						return e.writeJSON(in)
					}
					fmt.Fprintf(e.stdout, "store: %s\n", in.Store)
					if len(in.Leases) == 0 {
						fmt.Fprintln(e.stdout, "no leases")
					}
					for _, l := range in.Leases {
						fmt.Fprintf(e.stdout, "lease %s: %s, %s, generation %d, owner %s", l.Lease.TaskID, l.Lease.Kind, l.Lease.State, l.Lease.Generation, l.Lease.Owner)
						if l.Lease.Note != "" {
							fmt.Fprintf(e.stdout, ", %s", l.Lease.Note)
						}
						if l.Op != nil {
							fmt.Fprintf(e.stdout, "; op %s %s", l.Op.Kind, l.Op.Phase)
						}
						fmt.Fprintln(e.stdout)
					}
					for _, op := range in.Ops {
						if !op.Phase.Final() {
							fmt.Fprintf(e.stdout, "op %s: %s for %s, %s, owner %s\n", op.ID, op.Kind, op.TaskID, op.Phase, op.Owner)
						}
					}
					return nil
				},
			}, {
				Name:  "break",
				Usage: "release a task's lease that nothing will release by itself",
				UsageText: "slim tasks lease break --task ID [--force] [--confirm-not-admitted] [--directory D] [--server-url U]\n\n" +
					"An orphaned or quarantined lease is kept until evidence or an operator resolves it. Breaking\n" +
					"one is the operator's word that the operation it protected is over.",
				Flags: append(scopeFlags(),
					&cli.StringFlag{Name: "task", Usage: "the task ID (required)"},
					&cli.BoolFlag{Name: "force", Usage: "break a lease whose owner is still running"},
					&cli.BoolFlag{Name: "confirm-not-admitted", Usage: "for a relaunch lease: the revive prompt was not admitted"},
					&cli.BoolFlag{Name: "json", Usage: "print the broken lease"},
				),
				Action: func(c *cli.Context) error {
					if c.String("task") == "" {
						return usageErr(`Required flag "task" not set`)
					}
					cfg, sc, err := operatorScope(c, getenv)
					if err != nil {
						return err
					}
					l, err := tasks.BreakLease(cfg, sc, c.String("task"), c.Bool("force"), c.Bool("confirm-not-admitted"))
					if err != nil {
						return err
					}
					if jsonMode(c) {
						return e.writeJSON(l)
					}
					_, err = fmt.Fprintf(e.stdout, "broke the %s %s lease of %s (generation %d)\n", l.State, l.Kind, l.TaskID, l.Generation)
					return err
				},
			}},
		},
		&cli.Command{
			Name:  "observe",
			Usage: "apply one host event (what the plugin forwards)",
			UsageText: "slim tasks observe --session S [flags] session.deleted|session.status|session.idle|chat.message\n\n" +
				"The flags come before the event type.",
			Flags: append(scopeFlags(),
				&cli.StringFlag{Name: "session", Usage: "the event's session (required)"},
				&cli.StringFlag{Name: "message-id", Usage: "chat.message: the message"},
				&cli.StringFlag{Name: "agent", Usage: "chat.message: the message's agent"},
				&cli.StringFlag{Name: "status", Usage: "session.status: busy, retry or idle"},
				&cli.BoolFlag{Name: "external", Usage: "chat.message: a real user message"},
				&cli.BoolFlag{Name: "fallback", Usage: "session.deleted: the host's fallback teardown (keeps the wait)"},
			),
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageErr("tasks observe: want one event type after the flags (got %d arguments: %q)", c.NArg(), c.Args().Slice())
				}
				cfg, sc, err := operatorScope(c, getenv)
				if err != nil {
					return err
				}
				ev := tasks.Event{Type: c.Args().First(), SessionID: c.String("session"), MessageID: c.String("message-id"),
					Agent: c.String("agent"), Status: c.String("status"), Fallback: c.Bool("fallback")}
				if c.IsSet("external") {
					x := c.Bool("external")
					ev.External = &x
				}
				return tasks.Observe(c.Context, cfg, sc, ev)
			},
		},
		wakeCommand("wake-gate", "say whether a wake prompt may be sent to a session now",
			"Prints allowed or blocked:<reason>.", tasks.Gate),
		wakeCommand("wake", "send an idle orchestrator session one wake prompt, if the wake gate allows it",
			"Prints sent <message ID>, or blocked:<reason> when the gate says no (then nothing is sent).", tasks.Wake),
		&cli.Command{
			Name:   "_settle",
			Hidden: true,
			Usage:  "send one journalled remote write (started by the task tools; not for people)",
			Action: func(c *cli.Context) error {
				cfg, err := tasksConfig(getenv)
				if err != nil {
					return err
				}
				signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
				done := os.NewFile(3, "done")
				var w io.WriteCloser
				if done != nil {
					w = done
				}
				return tasks.Settle(context.Background(), cfg, c.Args().First(), e.stdin, w)
			},
		},
	)
	return &cli.Command{
		Name:  "tasks",
		Usage: "background task control: start, watch, read, message, cancel and revive specialist sessions",
		UsageText: "slim tasks TOOL [--json] < request.json\n\n" +
			"Each tool reads one JSON request on stdin:\n" +
			`   {"args": {...}, "context": {"sessionID", "agent", "callID", "directory"}, "host": {"serverUrl", "flavor"}}` + "\n" +
			"and prints the answer the model reads. Exit codes: 0 answered, 1 the tool failed (the message\n" +
			"is on stderr), 2 usage, 3 the task store cannot be used (nothing was sent to the host).",
		Flags:       []cli.Flag{&cli.BoolFlag{Name: "print-config", Usage: "print the deadlines in effect and exit"}},
		Subcommands: subs,
		Action: func(c *cli.Context) error {
			if !c.Bool("print-config") {
				return usageErr("tasks: want a tool (%s) or an operator command", strings.Join(tasks.ToolNames(), ", "))
			}
			cfg, err := tasksConfig(getenv)
			if err != nil {
				return err
			}
			for _, l := range cfg.Timeouts.Describe() {
				fmt.Fprintln(e.stdout, l)
			}
			return nil
		},
	}
}

func operatorScope(c *cli.Context, getenv func(string) string) (tasks.Config, tasks.HostScope, error) {
	cfg, err := tasksConfig(getenv)
	if err != nil {
		return cfg, tasks.HostScope{}, err
	}
	sc, err := scopeOf(c, cfg)
	return cfg, sc, err
}

// taskToolCommand is one model-facing tool: a request on stdin, the
// model's answer on stdout, a refusal on stderr with exit 1.
// taskToolUsage is each tool's one-line help.
var taskToolUsage = map[string]string{
	"task":          "start a specialist in a new child session, in the background (task)",
	"status":        "show a task's live state, last activity and whether it may be stuck (task_status)",
	"result":        "print a finished task's final answer (task_result)",
	"message":       "queue a note for a running task without starting a run (task_message)",
	"cancel":        "abort a task's current run and verify it stayed stopped (task_cancel)",
	"revive":        "resume a retained task with a new instruction (task_revive)",
	"wait-for-user": "arm the parent's wait for the user (wait_for_user)",
}

func taskToolCommand(e *env, name string, getenv func(string) string) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     taskToolUsage[name],
		UsageText: "slim tasks " + name + " [--json] < request.json",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print {status, state, task_id, generation, alias, status_uncertain, message} (or {status: error, error})"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("tasks %s takes no arguments; the request is read from stdin", name)
			}
			cfg, err := tasksConfig(getenv)
			if err != nil {
				return err
			}
			req, err := tasks.ReadRequest(e.stdin)
			if err != nil {
				return err
			}
			ctx, stop := e.interruptible()
			defer stop()
			res, err := tasks.Call(ctx, cfg, name, req)
			if te, ok := tasks.AsError(err); ok && te.Kind == tasks.Tool {
				if jsonMode(c) {
					e.writeJSON(map[string]any{"status": "error", "error": te.Message})
				} else {
					fmt.Fprintln(e.stderr, te.Message)
				}
				return cli.Exit("", 1)
			}
			if err != nil {
				return err
			}
			if jsonMode(c) {
				return e.writeJSON(res)
			}
			_, err = fmt.Fprintln(e.stdout, res.Text)
			return err
		},
	}
}

// observeTaskEvent hands one forwarded host event to the background task
// tools, for a project whose task store exists (a project that never ran
// a task pays one stat). Events without a server or directory are not
// theirs.
func observeTaskEvent(e *env, h protocol.Host, ev protocol.EventInfo) error {
	switch ev.Type {
	case "session.deleted", "session.status", "session.idle", "chat.message":
	default:
		return nil
	}
	cfg, sc, ok, err := hookTaskScope(e, h)
	if !ok || err != nil {
		return err
	}
	tev := tasks.Event{Type: ev.Type, SessionID: ev.SessionID, MessageID: ev.MessageID, Agent: ev.Agent, Status: ev.Status}
	if ev.External != "" {
		x := ev.External == "true"
		tev.External = &x
	}
	return tasks.ObserveTracked(context.Background(), cfg, sc, tev)
}

// hookTaskScope is the task scope of a hook request's host: its directory
// and its server (SLIM_OPENCODE_URL when the host names none). ok is false
// when either is missing: then the request is not the task tools'.
func hookTaskScope(e *env, h protocol.Host) (tasks.Config, tasks.HostScope, bool, error) {
	getenv := e.cfg.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	server := h.ServerURL
	if server == "" {
		server = getenv("SLIM_OPENCODE_URL")
	}
	if h.Directory == "" || server == "" {
		return tasks.Config{}, tasks.HostScope{}, false, nil
	}
	cfg, err := tasksConfig(getenv)
	return cfg, tasks.HostScope{Directory: h.Directory, ServerURL: server, Flavor: h.Generation}, err == nil, err
}

// observeNativeTask hands one call of the host's own task tool to the
// background task tools, which track the subagent session it started, and
// returns what the model is to be told when they cannot.
func observeNativeTask(e *env, h protocol.Host, sessionID string, args, output any) (string, error) {
	text, isText := output.(string)
	if !isText || sessionID == "" {
		return "", nil
	}
	cfg, sc, ok, err := hookTaskScope(e, h)
	if !ok || err != nil {
		return "", err
	}
	a, _ := args.(map[string]any)
	str := func(k string) string { s, _ := a[k].(string); return s }
	bg, _ := a["background"].(bool)
	return tasks.ObserveNativeTask(context.Background(), cfg, sc, tasks.NativeTask{
		Parent: sessionID, Agent: str("subagent_type"), Description: str("description"), Prompt: str("prompt"), Background: bg, Output: text,
	})
}

// onOff reads a switch that is on unless the environment turns it off:
// 1, true, yes or on (or nothing) is on, 0, false, no or off is off, and
// anything else is a usage error rather than a guess.
func onOff(getenv func(string) string, name string) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(getenv(name))); v {
	case "", "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	default:
		return false, slimerr.New(slimerr.Usage, slimerr.CodeUsage, "%s=%q: want 1 or 0 (true/false, yes/no, on/off)", name, v)
	}
}
