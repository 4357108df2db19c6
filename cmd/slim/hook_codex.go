package main

import (
	"encoding/json"
	"fmt"

	"github.com/slimgate/slim/hooks/codex"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/urfave/cli/v2"
)

// hostCodex is the value of `slim hook --host` for Codex CLI, and the phase
// hookFastPath reports for that form so that run reaches runHook without
// building the command tree. It is not a protocol phase: Codex names its
// event in the request.
const hostCodex = "codex"

// codexArgs are the arguments of the command the installer writes into
// Codex's hooks.json and the one hookFastPath recognises.
func codexArgs() []string { return []string{"hook", "--host", hostCodex} }

// runCodexHook answers one Codex hook request the way Codex reads a hook:
// a refusal exits 2 with the reason on stderr (Codex refuses the call only
// when that reason is not empty), a rewritten patch or a loop notice is
// JSON on stdout with exit 0, and a plain pass is exit 0 with nothing
// printed. A request that cannot be read is refused for apply_patch; for
// any other tool its error goes to stderr with exit 3, which Codex takes as
// a failed hook: the call runs.
func runCodexHook(e *env) (err error) {
	d := newDispatcher(e)
	// The task tools follow OpenCode's sessions, and the grep/glob
	// pre-check reads OpenCode's arguments: Codex has neither tool.
	d.Tasks, d.TaskOutput, d.SearchGuard = nil, nil, false
	a := &codex.Adapter{Dispatcher: d, Log: e.log}
	in, raw, rerr := codex.ReadInput(e.stdin)
	if rerr != nil {
		if ans, ok := a.Malformed(raw, rerr); ok {
			return codexAnswer(e, ans)
		}
		return slimerr.New(slimerr.Validation, slimerr.CodeUsage, "%v (slim let the call run)", rerr)
	}
	defer func() {
		if p := recover(); p != nil {
			e.log.Error().Interface("panic", p).Msg("hook: internal failure")
			if in.ToolName == codex.PatchTool && in.HookEventName == codex.PreToolUse {
				ans, _ := a.Malformed(raw, fmt.Errorf("internal failure: %v", p))
				err = codexAnswer(e, ans)
				return
			}
			err = slimerr.New(slimerr.Internal, slimerr.CodeInternal, "hook: internal failure: %v (slim let the call run)", p)
		}
	}()
	ctx := newBudgetContext(d.PatchBudget)
	defer ctx.stop()
	return codexAnswer(e, a.Handle(ctx, in))
}

func codexAnswer(e *env, ans codex.Answer) error {
	if ans.Deny != "" {
		return cli.Exit(ans.Deny, 2)
	}
	if ans.Output == nil {
		return nil
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ans.Output); err != nil {
		return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("hook: write answer: %w", err))
	}
	return nil
}
