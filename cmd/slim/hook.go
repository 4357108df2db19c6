package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/hooks/gemini"
	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/internal/statedir"
	"github.com/urfave/cli/v2"
)

func init() { register(hookCommand) }

func hookCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "hook",
		Usage:     "answer one host hook request: JSON request on stdin, JSON response on stdout",
		ArgsUsage: "before|after|event|apply|serve",
		UsageText: "slim hook before|after|event < request.json\n" +
			"slim hook apply   (apply mode: request line, ask line, approval line, result line)\n" +
			"slim hook serve [--sync DIR]   (resident: one {id, phase, request} line in, one {id, answer|error} line out, per call;\n" +
			"                  --sync DIR also takes requests on the FIFO DIR/request and answers them on DIR/reply)\n" +
			"slim hook --host claude-code < request.json\n" +
			"slim hook --host codex < request.json\n" +
			"slim hook --host gemini-cli < request.json\n\n" +
			"Runs the guards for one tool call or host event and prints one response:\n" +
			"{v, action: pass|mutate|block|append, args?, append?, message?, notes?}.\n" +
			"Every decision exits 0; a bad request exits 2 and an internal failure 1, each with\n" +
			"{\"error\": {kind, code, message}} on stdout. SLIM_OUTSIDE=passthrough lets apply_patch\n" +
			"targets that are outside by spelling pass to the host's own prompt; SLIM_ALLOW_NESTED=1\n" +
			"allows nested worktrees. An apply_patch check gets 3/5 of SLIM_HOOK_TIMEOUT_MS (the\n" +
			"plugin's timeout, 5000 by default, so 3 s) and is blocked when it cannot finish in time.\n\n" +
			"slim hook apply is the OpenCode plugin's own apply_patch in apply mode, a conversation of JSON\n" +
			"lines: the request; slim's {action: ask, ask} (the edit permission to ask, with the diff) or a\n" +
			"block; the plugin's {\"approve\": true}; slim's {action: result, title, output, metadata} after\n" +
			"writing every file or none, or a block. Anything but an approval writes nothing.\n\n" +
			"Example:\n" +
			"   echo '{\"v\":1,\"tool\":\"read\",\"sessionID\":\"s1\",\"callID\":\"c1\",\"args\":{\"filePath\":\"a.go\"}}' | slim hook before\n\n" +
			"With --host claude-code, slim is Claude Code's PreToolUse and PostToolUse command (slim hooks\n" +
			"install --claude-code writes it): Claude Code's hook JSON on stdin, its answer on stdout\n" +
			"(permissionDecision deny with the reason, updatedInput, additionalContext; {} to let the call\n" +
			"run). Every answer exits 0; a request slim cannot read denies Edit, MultiEdit, Write and\n" +
			"NotebookEdit and lets any other tool run (exit 3, the error on stderr).\n\n" +
			"With --host codex, slim is Codex CLI's PreToolUse and PostToolUse command (slim hooks install\n" +
			"--codex writes it): Codex's hook JSON on stdin. A refusal exits 2 with the reason on stderr; a\n" +
			"rescued apply_patch is permissionDecision allow with the new patch as updatedInput, a loop notice\n" +
			"additionalContext (JSON on stdout, exit 0); a pass prints nothing. A request slim cannot read\n" +
			"refuses apply_patch and lets any other tool run (exit 3, the error on stderr).\n\n" +
			"With --host gemini-cli, slim is Gemini CLI's BeforeTool and AfterTool command (slim hooks\n" +
			"install --gemini-cli writes it): Gemini CLI's hook JSON on stdin, its answer on stdout with exit 0\n" +
			"(decision deny with the reason, hookSpecificOutput.tool_input for a re-anchored search path,\n" +
			"hookSpecificOutput.additionalContext for a loop notice; {} to let the call run). A request slim\n" +
			"cannot read denies write_file and replace and lets any other tool run with a systemMessage.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "accepted for symmetry; the output is always JSON"},
			&cli.StringFlag{Name: "host", Usage: "answer another host's hook JSON instead of slim's protocol: claude-code, codex or gemini-cli"},
		},
		Action: func(c *cli.Context) error {
			if host := c.String("host"); host != "" {
				if host != hostClaudeCode && host != hostCodex && host != hostGemini {
					return usageErr("hook: unknown --host %q; want claude-code, codex or gemini-cli", host)
				}
				if c.NArg() != 0 {
					return usageErr("hook --host %s takes no phase: the host names its event in the request", host)
				}
				switch host {
				case hostCodex:
					return runCodexHook(e)
				case hostGemini:
					return runGeminiHook(e)
				}
				return runClaudeHook(e)
			}
			if c.NArg() > 1 && c.Args().First() == string(phaseServe) {
				dir, err := serveSyncArg(c.Args().Tail())
				if err != nil {
					return hookFail(e, err)
				}
				return runServe(e, dir)
			}
			if c.NArg() != 1 {
				return hookFail(e, slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook: want exactly one of before, after, event, apply or serve"))
			}
			phase := protocol.Phase(c.Args().First())
			if !phase.Valid() && phase != phaseServe {
				return hookFail(e, slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook: unknown phase %q; want before, after, event, apply or serve", phase))
			}
			return runHook(e, phase)
		},
	}
}

// runHook reads, validates and answers one request. The apply_patch
// budget counts from here, so the time spent reading the request is part of
// it.
func runHook(e *env, phase protocol.Phase) (err error) {
	switch phase {
	case hostClaudeCode:
		return runClaudeHook(e)
	case hostCodex:
		return runCodexHook(e)
	case hostGemini:
		return runGeminiHook(e)
	case protocol.Apply:
		return runApplyHook(e)
	case phaseServe:
		return runServe(e, "")
	}
	d := newDispatcher(e)
	ctx := newBudgetContext(d.PatchBudget)
	defer ctx.stop()
	req, err := protocol.ReadRequest(e.stdin)
	if tl := (*protocol.TooLargeError)(nil); errors.As(err, &tl) {
		if resp, ok := d.TooLarge(phase, tl); ok {
			return hookAnswer(e, resp)
		}
	}
	if req, err = checkHookRequest(req, err, phase); err != nil {
		return hookFail(e, err.(*slimerr.Error))
	}
	defer func() {
		if p := recover(); p != nil {
			e.log.Error().Interface("panic", p).Msg("hook: internal failure")
			err = hookFail(e, slimerr.New(slimerr.Internal, slimerr.CodeInternal, "hook: internal failure: %v", p))
		}
	}()
	return hookAnswer(e, d.HandleContext(ctx, req))
}

// checkHookRequest completes a decoded request (err is Decode's) with the
// phase it was sent for and checks it; a request slim cannot act on is a
// usage error (*slimerr.Error), the answer `slim hook` gives it. The apply
// phase is a conversation, answered only by runApplyHook.
func checkHookRequest(req *protocol.Request, err error, phase protocol.Phase) (*protocol.Request, error) {
	if err == nil {
		err = req.Validate(phase)
	}
	if err == nil && req.Phase == protocol.Apply {
		err = errors.New("the apply phase is not served: run slim hook apply")
	}
	if err != nil {
		return nil, &slimerr.Error{Kind: slimerr.Usage, Code: slimerr.CodeUsage, Message: err.Error(), Err: err}
	}
	return req, nil
}

// budgetContext is a context that ends at deadline, and whose timer is
// started only when Done or Err is first asked for. Only the apply_patch
// check waits on the budget, so a hook call for any other tool leaves it
// unstarted, which matters on every call: a process's first timer sets up
// the runtime's network poller (three system calls) and wakes a second
// thread.
type budgetContext struct {
	deadline time.Time
	once     sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
}

// newBudgetContext returns a context that ends budget from now.
func newBudgetContext(budget time.Duration) *budgetContext {
	return &budgetContext{deadline: time.Now().Add(budget)}
}

func (c *budgetContext) started() context.Context {
	c.once.Do(func() { c.ctx, c.cancel = context.WithDeadline(context.Background(), c.deadline) })
	return c.ctx
}

func (c *budgetContext) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *budgetContext) Done() <-chan struct{}       { return c.started().Done() }
func (c *budgetContext) Err() error                  { return c.started().Err() }
func (c *budgetContext) Value(key any) any           { return c.started().Value(key) }

// stop ends the context and releases its timer; a context that was never
// started ends as cancelled, without starting one.
func (c *budgetContext) stop() {
	c.once.Do(func() { c.ctx, c.cancel = context.WithCancel(context.Background()) })
	c.cancel()
}

func hookAnswer(e *env, resp protocol.Response) error {
	e.printedJSON = true
	if err := protocol.Encode(e.stdout, resp); err != nil {
		return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
	}
	return nil
}

// defaultHookTimeout is the plugin's own default for SLIM_HOOK_TIMEOUT_MS.
const defaultHookTimeout = 5 * time.Second

// patchBudget is the time an apply_patch check may take: 3/5 of the
// plugin's timeout (SLIM_HOOK_TIMEOUT_MS, which the plugin passes on in the
// environment), so slim answers block with its reason well before the
// plugin would kill it.
func patchBudget(e *env) time.Duration {
	timeout := defaultHookTimeout
	if v := e.cfg.hookTimeout; v != "" {
		// The plugin reads the value with parseInt: after blanks and a plus
		// sign, the leading digits count.
		digits := strings.TrimPrefix(strings.TrimLeft(v, " \t\r\n"), "+")
		for i, c := range digits {
			if c < '0' || c > '9' {
				digits = digits[:i]
				break
			}
		}
		if n, err := strconv.ParseInt(digits, 10, 64); err == nil && n > 0 && n <= 1<<40 {
			timeout = time.Duration(n) * time.Millisecond
		} else {
			e.log.Warn().Str("SLIM_HOOK_TIMEOUT_MS", v).Msg("not a positive number of milliseconds; using the plugin's default")
		}
	}
	return timeout * 3 / 5
}

// newDispatcher wires the guards with the process's settings.
func newDispatcher(e *env) *hooks.Dispatcher {
	d := &hooks.Dispatcher{
		PatchGuard:  true,
		SearchGuard: true,
		Outside:     e.cfg.outside,
		AllowNested: e.cfg.allowNested,
		PatchBudget: patchBudget(e),
		Log:         e.log,
	}
	d.Tasks = func(h protocol.Host, ev protocol.EventInfo) error { return observeTaskEvent(e, h, ev) }
	d.TaskOutput = func(h protocol.Host, sid string, args, output any) (string, error) {
		return observeNativeTask(e, h, sid, args, output)
	}
	if d.Outside != "" && d.Outside != "block" && d.Outside != "passthrough" {
		e.log.Warn().Str("SLIM_OUTSIDE", d.Outside).Msg("unknown value; blocking")
		d.Outside = "block"
	}
	if root, err := statedir.Root(); err != nil {
		e.log.Warn().Err(err).Msg("loop guard off: no state directory")
	} else {
		d.Loop = &loopguard.Guard{Store: loopguard.NewStore(root, loopguard.StoreOptions{Log: e.log})}
	}
	return d
}

// hookFail prints the JSON error object that `slim hook` always puts on
// stdout, and returns err for the exit code.
func hookFail(e *env, err *slimerr.Error) error {
	if werr := e.writeJSON(map[string]any{"error": slimerr.ToJSON(classify(err))}); werr != nil {
		return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("hook: write error: %w", werr))
	}
	return err
}

// hookFastPath recognises exactly `slim hook before|after|event|apply|serve`, the forms
// the plugin uses, and `slim hook --host claude-code` (or --host=claude-code),
// the form the Claude Code settings use, and `slim hook --host codex`
// (or --host=codex), the form Codex's hooks.json uses, and `slim hook
// --host gemini-cli`, the form Gemini CLI's settings use, so run can answer
// them without building the command tree. For the other hosts it reports
// the phase hostClaudeCode, hostCodex or hostGemini, which runHook hands to that
// host's adapter. The plugin's form is tested first, so the other hosts
// cost it nothing.
func hookFastPath(args []string) (protocol.Phase, bool) {
	if len(args) == 3 && args[1] == "hook" {
		p := protocol.Phase(args[2])
		if p.Valid() || p == phaseServe {
			return p, true
		}
		switch args[2] {
		case "--host=" + hostClaudeCode:
			return hostClaudeCode, true
		case "--host=" + hostCodex:
			return hostCodex, true
		case "--host=" + hostGemini:
			return hostGemini, true
		}
		return "", false
	}
	if len(args) == 4 && args[1] == "hook" && args[2] == "--host" && (args[3] == hostClaudeCode || args[3] == hostCodex || args[3] == hostGemini) {
		return protocol.Phase(args[3]), true
	}
	return "", false
}

// phaseServe is `slim hook serve`, the resident form of the hook phases
// (hook_serve.go); like the hosts' forms it is not a protocol phase.
const phaseServe protocol.Phase = "serve"

// hostGemini is the value of `slim hook --host` for Gemini CLI, and the
// phase hookFastPath reports for that form. It is not a protocol phase:
// Gemini CLI names its event in the request.
const hostGemini = "gemini-cli"

// geminiArgs are the arguments of the command the installer writes into
// Gemini CLI's settings and the one hookFastPath recognises.
func geminiArgs() []string { return []string{"hook", "--host", hostGemini} }

// runGeminiHook answers one Gemini CLI hook request: the answer's JSON on
// stdout and exit 0 for every decision, a deny included. Gemini CLI takes
// plain text with an exit code other than 0 or 1 as a refusal, so slim
// answers even a request it cannot read with JSON and exit 0: a deny for
// the write tools, a systemMessage that lets any other call run.
func runGeminiHook(e *env) (err error) {
	d := newDispatcher(e)
	// The task tools follow OpenCode's sessions, and no Gemini CLI tool is
	// apply_patch.
	d.Tasks, d.TaskOutput, d.PatchGuard = nil, nil, false
	a := &gemini.Adapter{Dispatcher: d, AllowNested: e.cfg.allowNested, Passthrough: d.Outside == "passthrough", Log: e.log}
	in, raw, rerr := gemini.ReadInput(e.stdin)
	if rerr != nil {
		return geminiAnswer(e, a.Malformed(raw, rerr))
	}
	defer func() {
		if p := recover(); p != nil {
			e.log.Error().Interface("panic", p).Msg("hook: internal failure")
			err = geminiAnswer(e, a.Malformed(raw, fmt.Errorf("internal failure: %v", p)))
		}
	}()
	ctx := newBudgetContext(d.PatchBudget)
	defer ctx.stop()
	return geminiAnswer(e, a.Handle(ctx, in))
}

func geminiAnswer(e *env, out gemini.Output) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("hook: write answer: %w", err))
	}
	return nil
}
