package claudecode

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/hooks/internal/hookcmd"
	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
)

// Output is the JSON object Claude Code reads from a hook's stdout. The
// zero Output ({}) lets the call go on as it would without slim: slim never
// answers "allow", which would skip the user's own permission prompt.
type Output struct {
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is hookSpecificOutput.
type Specific struct {
	HookEventName string `json:"hookEventName"`
	// PermissionDecision is "deny" (the call does not run; the reason is
	// shown to the model) or "ask" (Claude Code asks the user, showing the
	// reason); empty leaves the decision to Claude Code. PreToolUse only.
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// UpdatedInput is the whole replacement tool input (PreToolUse).
	UpdatedInput map[string]any `json:"updatedInput,omitempty"`
	// AdditionalContext is text added for the model (PostToolUse: the loop
	// guard's notice).
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// Decision returns the permission decision of o, "" when it has none.
func (o Output) Decision() string {
	if o.HookSpecificOutput == nil {
		return ""
	}
	return o.HookSpecificOutput.PermissionDecision
}

// writeTools are the Claude Code tools that write a file, each with the
// tool_input field that names it. Their containment is checked before they
// run, and they fail closed.
func writeTools() map[string]string {
	return map[string]string{"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path", "NotebookEdit": "notebook_path"}
}

// IsWriteTool reports whether tool is one of Claude Code's file-writing
// tools (Edit, MultiEdit, Write, NotebookEdit), matched exactly.
func IsWriteTool(tool string) bool {
	_, ok := writeTools()[tool]
	return ok
}

// dispatcherTool is the name under which the dispatcher sees a Claude Code
// tool: Grep and Glob are its grep and glob (the path pre-check reads only
// "path", which both hosts spell alike); every other tool keeps its name,
// which the loop guard reads without regard to case (Read is its read).
func dispatcherTool(tool string) string {
	switch tool {
	case "Grep":
		return "grep"
	case "Glob":
		return "glob"
	}
	return tool
}

// PreToolUseTools are the tools for which PreToolUse can answer anything
// but a plain pass: the write tools, Grep and Glob, and those of Claude
// Code's reading tools the loop guard can refuse (Read). The installer's
// PreToolUse matcher names exactly these, so that Claude Code starts slim
// before no other tool; every tool gets PostToolUse, where the loop guard
// counts.
func PreToolUseTools() []string {
	tools := []string{"Edit", "MultiEdit", "Write", "NotebookEdit", "Grep", "Glob"}
	for _, t := range []string{"Read", "LS", "Bash", "WebFetch", "WebSearch"} {
		if before, _ := loopguard.Phases(dispatcherTool(t)); before {
			tools = append(tools, t)
		}
	}
	return tools
}

// Adapter answers Claude Code's hook requests with slim's guards.
type Adapter struct {
	// Dispatcher runs the path pre-check and the loop guard. Its
	// apply_patch guard never sees a Claude Code call (no tool of Claude
	// Code's is named apply_patch).
	Dispatcher *hooks.Dispatcher
	// ProjectDir is the session's directory, which Claude Code gives its
	// hooks as CLAUDE_PROJECT_DIR; empty means the request's cwd.
	ProjectDir string
	// AllowNested lets write targets in nested worktrees and submodules
	// count as inside.
	AllowNested bool
	// Passthrough turns a write whose target is outside by its spelling
	// alone into "ask" (Claude Code's own permission prompt) instead of a
	// deny. Targets that are outside only through a link are denied.
	Passthrough bool
	Log         zerolog.Logger
}

// Handle answers one decoded request.
func (a *Adapter) Handle(ctx context.Context, in *Input) Output {
	switch in.HookEventName {
	case PreToolUse:
		return a.pre(ctx, in)
	case PostToolUse:
		return a.post(in)
	}
	return Output{}
}

// Malformed answers a request that did not decode (raw is what was read,
// err why). For a write tool before it runs it is a deny that says why: a
// write slim cannot check does not run. Otherwise (a request whose tool
// cannot be read included) ok is false and the caller reports err as a
// non-blocking error, which lets the call run.
func (a *Adapter) Malformed(raw []byte, err error) (out Output, ok bool) {
	event, tool := hookcmd.Peek(raw)
	if event == PostToolUse || !IsWriteTool(tool) {
		return Output{}, false
	}
	a.Log.Info().Err(err).Str("tool", tool).Msg("claude-code request unreadable; denying the write")
	return deny(fmt.Sprintf("slim could not check this %s call, so it was not run: %v", tool, err)), true
}

func deny(reason string) Output {
	return Output{HookSpecificOutput: &Specific{HookEventName: PreToolUse, PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// host is the dispatcher's view of the Claude Code process: paths resolve
// against the directory the way Node's path.resolve does (Claude Code's
// paths are absolute), on the running system's path rules.
func (a *Adapter) host(in *Input) protocol.Host {
	dir := a.ProjectDir
	if dir == "" {
		dir = in.Cwd
	}
	return protocol.Host{Generation: "v2", Platform: hookcmd.Platform(), Directory: dir, Cwd: in.Cwd}
}

func (a *Adapter) request(phase protocol.Phase, in *Input) *protocol.Request {
	return &protocol.Request{V: protocol.Version, Phase: phase, Host: a.host(in),
		Tool: dispatcherTool(in.ToolName), SessionID: in.SessionID, CallID: in.ToolUseID, Args: in.ToolInput}
}

func (a *Adapter) pre(ctx context.Context, in *Input) Output {
	if field, ok := writeTools()[in.ToolName]; ok {
		if out, stop := a.contain(in, field); stop {
			return out
		}
	}
	resp := a.Dispatcher.HandleContext(ctx, a.request(protocol.Before, in))
	a.logNotes(in, resp)
	switch resp.Action {
	case protocol.Block:
		return deny(resp.Message)
	case protocol.Mutate:
		return Output{HookSpecificOutput: &Specific{HookEventName: PreToolUse, UpdatedInput: resp.Args}}
	}
	if in.ToolName == "Edit" || in.ToolName == "MultiEdit" {
		return a.rescueEdit(in)
	}
	return Output{}
}

// rescueEdit answers an Edit or MultiEdit whose target is inside: a
// drifted old_string rescued (updatedInput), one that fits several places
// denied with their lines, anything else passed (see edit.go).
func (a *Adapter) rescueEdit(in *Input) Output {
	target, _ := in.ToolInput["file_path"].(string)
	if !filepath.IsAbs(target) {
		target = filepath.Join(a.host(in).Directory, target)
	}
	res := rescueEdits(in.ToolName, target, in.ToolInput)
	switch {
	case res.refusal != "":
		a.Log.Info().Str("tool", in.ToolName).Str("target", target).Msg("drifted edit is ambiguous; denied")
		return deny(res.refusal)
	case res.updated != nil:
		a.Log.Info().Str("tool", in.ToolName).Str("target", target).Strs("notes", res.notes).Msg("edit rescued")
		return Output{HookSpecificOutput: &Specific{HookEventName: PreToolUse, UpdatedInput: res.updated}}
	}
	return Output{}
}

// contain checks the target of a write tool. stop is true when the answer
// is out: a deny (outside, into .git, through a link out, or a target slim
// cannot read or check) or, with Passthrough, an ask.
func (a *Adapter) contain(in *Input, field string) (out Output, stop bool) {
	c := hookcmd.CheckWrite(a.Log, a.host(in).Directory, in.ToolName, in.ToolInput, field, a.AllowNested, a.Passthrough)
	switch {
	case c.Refusal == "":
		return Output{}, false
	case c.Ask:
		return Output{HookSpecificOutput: &Specific{HookEventName: PreToolUse, PermissionDecision: "ask", PermissionDecisionReason: c.Refusal}}, true
	}
	return deny(c.Refusal), true
}

func (a *Adapter) post(in *Input) Output {
	req := a.request(protocol.After, in)
	req.Output = hookcmd.ResponseText(in.ToolResponse)
	resp := a.Dispatcher.HandleContext(context.Background(), req)
	a.logNotes(in, resp)
	if resp.Action == protocol.Append && resp.Append != "" {
		return Output{HookSpecificOutput: &Specific{HookEventName: PostToolUse, AdditionalContext: strings.TrimPrefix(resp.Append, "\n")}}
	}
	return Output{}
}

func (a *Adapter) logNotes(in *Input, resp protocol.Response) {
	hookcmd.LogNotes(a.Log, in.ToolName, resp, "claude-code hook")
}
