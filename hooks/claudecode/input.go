// Package claudecode adapts Claude Code's command hooks to slim's guards.
//
// Claude Code runs a command for each tool call, before it (PreToolUse) and
// after it (PostToolUse), with one JSON object on stdin: session_id, cwd,
// hook_event_name, tool_name, tool_input, tool_use_id and, after the call,
// tool_response. It reads one JSON object from stdout when the command exits
// 0: hookSpecificOutput.permissionDecision "deny" with a reason refuses the
// call and shows the reason to the model, updatedInput replaces the tool's
// input, and additionalContext adds text for the model after a call.
//
// The adapter only translates. Each request becomes a request of slim's own
// hook protocol for the dispatcher (package hooks), which runs the grep/glob
// path pre-check and the loop guard exactly as it does for OpenCode; the
// containment of the write tools (Edit, MultiEdit, Write, NotebookEdit) is
// decided by package worktree, the same check that guards apply_patch
// targets. The dispatcher's answer is then worded the way Claude Code reads
// it: a block becomes a deny with the reason, a mutate becomes
// updatedInput, an appended loop notice becomes additionalContext.
//
// A request the adapter cannot read fails closed for the write tools (a
// deny that says why) and passes for every other tool, so that a change in
// Claude Code's payloads can never let an unchecked write through and can
// never stop a harmless call.
package claudecode

import (
	"io"

	"github.com/slimgate/slim/hooks/internal/hookcmd"
	"github.com/slimgate/slim/internal/kinderr"
)

// Kind says what went wrong with a request.
type Kind string

// The kinds of Error.
const (
	// Malformed: the request is not the JSON object Claude Code sends, or
	// a field it documents has the wrong type or is missing.
	Malformed Kind = "malformed"
)

// Error is this package's error; its Code is stable.
type Error = kinderr.Error[Kind]

// Codes of Error.
const (
	CodeBadJSON      = hookcmd.CodeBadJSON      // not one JSON object
	CodeBadField     = hookcmd.CodeBadField     // a known field of the wrong type
	CodeMissingField = hookcmd.CodeMissingField // a field the event needs is absent
	CodeTooLarge     = hookcmd.CodeTooLarge     // more than MaxRequestBytes
)

// requests is how package hookcmd reads this host's requests.
func requests() hookcmd.Host { return hookcmd.Host{Name: "claude-code"} }

// The hook events the adapter answers. Any other event passes.
const (
	PreToolUse  = hookcmd.PreToolUse
	PostToolUse = hookcmd.PostToolUse
)

// MaxRequestBytes bounds one request; a Write of a large file carries its
// whole content, so the bound is the one of slim's own protocol.
const MaxRequestBytes = hookcmd.MaxRequestBytes

// Input is one hook request from Claude Code. Fields the adapter does not
// use (transcript_path, permission_mode, prompt_id, effort and whatever a
// later version adds) are accepted and ignored: Claude Code, not slim,
// decides its payload.
type Input struct {
	SessionID     string
	Cwd           string
	HookEventName string
	ToolName      string
	ToolUseID     string
	// ToolInput is the tool's input object, numbers kept as written
	// (json.Number), so that a rewritten input and the loop guard's
	// fingerprints see exactly what the model sent.
	ToolInput map[string]any
	// ToolResponse is the tool's result (PostToolUse only), any JSON value.
	ToolResponse any
}

// ReadInput reads at most MaxRequestBytes+1 bytes of r and decodes them.
// The bytes read come back with the error, for Malformed.
func ReadInput(r io.Reader) (*Input, []byte, error) {
	return hookcmd.ReadInput(requests(), r, Malformed, Decode)
}

// Decode parses one request: exactly one JSON object whose known fields
// have the types Claude Code documents. hook_event_name and tool_name are
// required for the tool events, and tool_input must then be an object.
func Decode(data []byte) (*Input, error) {
	r, err := requests().Decode(data)
	if err != nil {
		return nil, hookcmd.As(err, Malformed)
	}
	return &Input{SessionID: r.SessionID, Cwd: r.Cwd, HookEventName: r.HookEventName, ToolName: r.ToolName,
		ToolUseID: r.ToolUseID, ToolInput: r.ToolInput, ToolResponse: r.ToolResponse}, nil
}
