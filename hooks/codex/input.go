// Package codex adapts Codex CLI's command hooks to slim's guards.
//
// Codex runs a command for each tool call, before it (PreToolUse) and after
// it (PostToolUse), with one JSON object on stdin: session_id, turn_id, cwd,
// model, hook_event_name, tool_name, tool_input, tool_use_id and, after the
// call, tool_response. Its file edits arrive as the tool apply_patch, whose
// tool_input.command is the whole patch in the Codex patch format, the
// format slim's rescue reads and writes.
//
// Codex reads a hook's answer by its exit code. Exit 0 with nothing on
// stdout lets the call run; exit 0 with hookSpecificOutput whose
// permissionDecision is "allow" and whose updatedInput is the new tool
// input runs the call with that input (Codex accepts updatedInput only
// with "allow", and rejects "ask"); exit 2 with the reason on stderr
// refuses the call and shows the reason to the model. After a call,
// hookSpecificOutput.additionalContext adds text for the model. Any other
// exit code is a failed hook, and the call runs.
//
// The adapter only translates. Each request becomes a request of slim's own
// hook protocol for the dispatcher (package hooks), which runs apply_patch
// containment and rescue and the loop guard exactly as it does for
// OpenCode: apply_patch's command becomes the dispatcher's patchText and a
// rescued patch comes back as the updatedInput's command.
//
// A request the adapter cannot read fails closed for apply_patch (refused,
// saying why) and passes for every other tool, so that a change in Codex's
// payloads can never let an unchecked patch through and can never stop a
// harmless call.
package codex

import (
	"fmt"
	"io"

	"github.com/slimgate/slim/hooks/internal/hookcmd"
	"github.com/slimgate/slim/internal/kinderr"
)

// Kind says what went wrong with a request.
type Kind string

// The kinds of Error.
const (
	// Malformed: the request is not the JSON object Codex sends, or a field
	// it documents has the wrong type or is missing.
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

func malformed(code, format string, args ...any) error {
	return &Error{Kind: Malformed, Code: code, Message: "codex hook request: " + fmt.Sprintf(format, args...)}
}

// requests is how package hookcmd reads this host's requests.
func requests() hookcmd.Host { return hookcmd.Host{Name: "codex", TurnID: true} }

// The hook events the adapter answers. Any other event passes.
const (
	PreToolUse  = hookcmd.PreToolUse
	PostToolUse = hookcmd.PostToolUse
)

// PatchTool is Codex's file-editing tool. Its matcher aliases Edit and
// Write reach hooks under this name.
const PatchTool = "apply_patch"

// MaxRequestBytes bounds one request; a patch that adds a large file
// carries it whole, so the bound is the one of slim's own protocol.
const MaxRequestBytes = hookcmd.MaxRequestBytes

// Input is one hook request from Codex. Fields the adapter does not use
// (transcript_path, model, permission_mode, agent_id, agent_type and
// whatever a later version adds) are accepted and ignored: Codex, not slim,
// decides its payload.
type Input struct {
	SessionID     string
	TurnID        string
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
// have the types Codex documents. hook_event_name is required, tool_name
// and an object tool_input are required for the tool events, and an
// apply_patch call's tool_input.command must be a string (it is the patch).
func Decode(data []byte) (*Input, error) {
	r, err := requests().Decode(data)
	if err != nil {
		return nil, hookcmd.As(err, Malformed)
	}
	in := Input(*r)
	if (in.HookEventName == PreToolUse || in.HookEventName == PostToolUse) && in.ToolName == PatchTool {
		switch in.ToolInput["command"].(type) {
		case string:
		case nil:
			return nil, malformed(CodeMissingField, "field \"tool_input.command\" (the patch) is missing for apply_patch")
		default:
			return nil, malformed(CodeBadField, "field \"tool_input.command\" (the patch) must be a string for apply_patch")
		}
	}
	return &in, nil
}
