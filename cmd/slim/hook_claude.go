package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/slimgate/slim/hooks/claudecode"
	"github.com/slimgate/slim/internal/slimerr"
)

// hostClaudeCode is the value of `slim hook --host` for Claude Code, and
// the phase hookFastPath reports for that form so that run reaches
// runHook without building the command tree. It is not a protocol phase:
// Claude Code names its event in the request.
const hostClaudeCode = "claude-code"

// claudeCodeArgs are the arguments the command the installer writes into Claude Code's
// settings and the one hookFastPath recognises.
func claudeCodeArgs() []string { return []string{"hook", "--host", hostClaudeCode} }

// runClaudeHook answers one Claude Code hook request: the answer's JSON on
// stdout and exit 0 for every decision, a deny included (Claude Code reads
// permissionDecision only from a command that exits 0). A request that
// cannot be read is denied for the write tools; for any other tool its
// error goes to stderr with exit 3, which Claude Code takes as a
// non-blocking error: the call runs. slim never exits 2 here, which Claude
// Code would take as a refusal.
func runClaudeHook(e *env) (err error) {
	d := newDispatcher(e)
	// The task tools follow OpenCode's sessions; Claude Code's Task tool is
	// not theirs, and no Claude Code tool is apply_patch.
	d.Tasks, d.TaskOutput, d.PatchGuard = nil, nil, false
	a := &claudecode.Adapter{
		Dispatcher:  d,
		ProjectDir:  os.Getenv("CLAUDE_PROJECT_DIR"),
		AllowNested: e.cfg.allowNested,
		Passthrough: d.Outside == "passthrough",
		Log:         e.log,
	}
	in, raw, rerr := claudecode.ReadInput(e.stdin)
	if rerr != nil {
		if out, ok := a.Malformed(raw, rerr); ok {
			return claudeAnswer(e, out)
		}
		return slimerr.New(slimerr.Validation, slimerr.CodeUsage, "%v (slim let the call run)", rerr)
	}
	defer func() {
		if p := recover(); p != nil {
			e.log.Error().Interface("panic", p).Msg("hook: internal failure")
			if claudecode.IsWriteTool(in.ToolName) && in.HookEventName == claudecode.PreToolUse {
				out, _ := a.Malformed(raw, fmt.Errorf("internal failure: %v", p))
				err = claudeAnswer(e, out)
				return
			}
			err = slimerr.New(slimerr.Internal, slimerr.CodeInternal, "hook: internal failure: %v (slim let the call run)", p)
		}
	}()
	ctx := newBudgetContext(d.PatchBudget)
	defer ctx.stop()
	return claudeAnswer(e, a.Handle(ctx, in))
}

func claudeAnswer(e *env, out claudecode.Output) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("hook: write answer: %w", err))
	}
	return nil
}
