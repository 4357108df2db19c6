package codex

import (
	"context"
	"fmt"
	"strings"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/hooks/internal/hookcmd"
	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
)

// Answer is slim's answer to one Codex hook request. Exactly one of its
// forms applies: Deny (exit 2 with the reason on stderr: the call does not
// run and the model sees why), Output (exit 0 with the object on stdout),
// or neither (exit 0 with nothing on stdout: the call runs as it would
// without slim).
type Answer struct {
	Deny   string
	Output *Output
}

// Output is the JSON object Codex reads from a hook's stdout.
type Output struct {
	HookSpecificOutput *Specific `json:"hookSpecificOutput"`
}

// Specific is hookSpecificOutput.
type Specific struct {
	HookEventName string `json:"hookEventName"`
	// PermissionDecision is "allow", and only together with UpdatedInput:
	// Codex takes a rewritten input only with it. slim never answers allow
	// otherwise, so the user's own approval rules still apply.
	PermissionDecision string `json:"permissionDecision,omitempty"`
	// UpdatedInput is the whole replacement tool input (PreToolUse).
	UpdatedInput map[string]any `json:"updatedInput,omitempty"`
	// AdditionalContext is text added for the model (PostToolUse: the loop
	// guard's notice).
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// UpdatedInput returns the rewritten tool input of a, nil when it has none.
func (a Answer) UpdatedInput() map[string]any {
	if a.Output == nil || a.Output.HookSpecificOutput == nil {
		return nil
	}
	return a.Output.HookSpecificOutput.UpdatedInput
}

// candidateTools are Codex's own tools besides apply_patch: the shell,
// under the name hooks see it by.
func candidateTools() []string { return []string{"Bash"} }

// PreToolUseTools are the tools for which PreToolUse can answer anything
// but a plain pass: apply_patch, and those of Codex's other tools the loop
// guard can refuse before they run (today none: it refuses only reading
// and searching tools, which Codex runs through its shell). The
// installer's PreToolUse matcher names exactly these, so that Codex starts
// slim before no other tool; every tool gets PostToolUse, where the loop
// guard counts.
func PreToolUseTools() []string {
	tools := []string{PatchTool}
	for _, t := range candidateTools() {
		if before, _ := loopguard.Phases(t); before {
			tools = append(tools, t)
		}
	}
	return tools
}

// Adapter answers Codex's hook requests with slim's guards.
type Adapter struct {
	// Dispatcher runs apply_patch containment and rescue and the loop
	// guard.
	Dispatcher *hooks.Dispatcher
	Log        zerolog.Logger
}

// Handle answers one decoded request. ctx bounds the apply_patch check.
func (a *Adapter) Handle(ctx context.Context, in *Input) Answer {
	switch in.HookEventName {
	case PreToolUse:
		return a.pre(ctx, in)
	case PostToolUse:
		return a.post(in)
	}
	return Answer{}
}

// Malformed answers a request that did not decode (raw is what was read,
// err why). For apply_patch before it runs it is a refusal that says why:
// a patch slim cannot check does not run. Otherwise ok is false and the
// caller reports err as a failed hook, which lets the call run.
func (a *Adapter) Malformed(raw []byte, err error) (ans Answer, ok bool) {
	event, tool := hookcmd.Peek(raw)
	if event == PostToolUse || tool != PatchTool {
		return Answer{}, false
	}
	a.Log.Info().Err(err).Msg("codex request unreadable; refusing the patch")
	return Answer{Deny: fmt.Sprintf("apply_patch blocked: slim could not check this patch, so it was not applied: %v", err)}, true
}

// host is the dispatcher's view of the Codex process: the session's
// directory is the request's cwd, where Codex resolves a patch's relative
// paths and runs its hooks (a request without one is taken to mean the
// hook's working directory, as in slim's own protocol), on the running
// system's path rules.
func host(in *Input) protocol.Host {
	return protocol.Host{Generation: "v2", Platform: hookcmd.Platform(), Directory: in.Cwd, Cwd: in.Cwd}
}

// args are the tool's arguments as the dispatcher reads them: apply_patch's
// command is its patchText; every other tool's input is passed as it is.
func args(in *Input) map[string]any {
	if in.ToolName != PatchTool {
		return in.ToolInput
	}
	patch, _ := in.ToolInput["command"].(string)
	return map[string]any{"patchText": patch}
}

func (a *Adapter) request(phase protocol.Phase, in *Input) *protocol.Request {
	return &protocol.Request{V: protocol.Version, Phase: phase, Host: host(in),
		Tool: in.ToolName, SessionID: in.SessionID, CallID: in.ToolUseID, Args: args(in)}
}

func (a *Adapter) pre(ctx context.Context, in *Input) Answer {
	resp := a.Dispatcher.HandleContext(ctx, a.request(protocol.Before, in))
	a.logNotes(in, resp)
	switch resp.Action {
	case protocol.Block:
		msg := strings.TrimSpace(resp.Message)
		if msg == "" {
			// Codex takes exit 2 as a refusal only with a reason.
			msg = in.ToolName + " blocked by slim"
		}
		return Answer{Deny: msg}
	case protocol.Mutate:
		return Answer{Output: &Output{HookSpecificOutput: &Specific{HookEventName: PreToolUse,
			PermissionDecision: "allow", UpdatedInput: updatedInput(in, resp.Args)}}}
	}
	return Answer{}
}

// updatedInput is the tool input that carries the dispatcher's new args:
// for apply_patch the original input with command replaced by the
// rewritten patch (any other field kept as Codex sent it).
func updatedInput(in *Input, newArgs map[string]any) map[string]any {
	if in.ToolName != PatchTool {
		return newArgs
	}
	out := make(map[string]any, len(in.ToolInput))
	for k, v := range in.ToolInput {
		out[k] = v
	}
	out["command"] = newArgs["patchText"]
	return out
}

func (a *Adapter) post(in *Input) Answer {
	req := a.request(protocol.After, in)
	req.Output = hookcmd.ResponseText(in.ToolResponse)
	resp := a.Dispatcher.HandleContext(context.Background(), req)
	a.logNotes(in, resp)
	if resp.Action == protocol.Append && resp.Append != "" {
		return Answer{Output: &Output{HookSpecificOutput: &Specific{HookEventName: PostToolUse,
			AdditionalContext: strings.TrimPrefix(resp.Append, "\n")}}}
	}
	return Answer{}
}

func (a *Adapter) logNotes(in *Input, resp protocol.Response) {
	hookcmd.LogNotes(a.Log, in.ToolName, resp, "codex hook")
}
