// Package gemini adapts Gemini CLI's command hooks to slim's guards.
//
// Gemini CLI runs a command for each tool call, before it (BeforeTool) and
// after it (AfterTool), with one JSON object on stdin: session_id,
// transcript_path, cwd, hook_event_name, timestamp, tool_name, tool_input
// and, after the call, tool_response ({llmContent, returnDisplay, error}).
// It sends no call id. Its file tools are write_file {file_path, content}
// and replace {file_path, old_string, new_string, ...}; its searches are
// glob {pattern, dir_path} and grep_search {pattern, dir_path, ...}, which
// older versions called search_file_content; read_file reads a file.
//
// Gemini CLI reads a hook's answer from stdout (stderr when stdout is
// empty). JSON on exit 0 is the answer: decision "deny" (or "block") with
// a reason refuses the call and shows the reason to the model; decision
// "ask" asks the user; hookSpecificOutput.tool_input becomes the call's
// arguments (the whole input: Gemini CLI builds the call from it alone);
// after the call hookSpecificOutput.additionalContext is
// appended to what the model sees; systemMessage is shown to the user.
// Plain text on exit 0 or 1 lets the call run, and plain text on any other
// exit code refuses it, so slim always answers JSON with exit 0: a crash
// that printed only an error would otherwise refuse a harmless call.
//
// The adapter only translates. Each request becomes a request of slim's
// own hook protocol for the dispatcher (package hooks), which runs the
// grep/glob path pre-check and the loop guard as it does for OpenCode
// (dir_path is the dispatcher's path; read_file, grep_search and glob are
// its read, grep and glob); the write tools' containment is checked here,
// against the session directory, as for Claude Code.
//
// A request the adapter cannot read is refused for write_file and replace
// before they run, and passes, with a message for the user, for every
// other tool: a change in Gemini CLI's payloads can never let an unchecked
// write through and can never stop a harmless call.
package gemini

import (
	"io"

	"github.com/slimgate/slim/hooks/internal/hookcmd"
	"github.com/slimgate/slim/internal/kinderr"
)

// Kind says what went wrong with a request.
type Kind string

// The kinds of Error.
const (
	// Malformed: the request is not the JSON object Gemini CLI sends, or a
	// field it documents has the wrong type or is missing.
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

// The hook events the adapter answers. Any other event passes.
const (
	BeforeTool = "BeforeTool"
	AfterTool  = "AfterTool"
)

// requests is how package hookcmd reads this host's requests.
func requests() hookcmd.Host {
	return hookcmd.Host{Name: "gemini-cli", ToolEvents: []string{BeforeTool, AfterTool}}
}

// MaxRequestBytes bounds one request; a write_file carries the whole file,
// so the bound is the one of slim's own protocol.
const MaxRequestBytes = hookcmd.MaxRequestBytes

// Input is one hook request from Gemini CLI. Fields the adapter does not
// use (transcript_path, timestamp, mcp_context, original_request_name and
// whatever a later version adds) are accepted and ignored.
type Input struct {
	SessionID     string
	Cwd           string
	HookEventName string
	ToolName      string
	// ToolInput is the tool's arguments, numbers kept as written
	// (json.Number), so that the loop guard's fingerprints see exactly
	// what the model sent.
	ToolInput map[string]any
	// ToolResponse is the tool's result (AfterTool only), any JSON value.
	ToolResponse any
}

// ReadInput reads at most MaxRequestBytes+1 bytes of r and decodes them.
// The bytes read come back with the error, for Malformed.
func ReadInput(r io.Reader) (*Input, []byte, error) {
	return hookcmd.ReadInput(requests(), r, Malformed, Decode)
}

// Decode parses one request: exactly one JSON object whose known fields
// have the types Gemini CLI sends. hook_event_name is required, tool_name
// and an object tool_input are required for BeforeTool and AfterTool.
func Decode(data []byte) (*Input, error) {
	r, err := requests().Decode(data)
	if err != nil {
		return nil, hookcmd.As(err, Malformed)
	}
	return &Input{SessionID: r.SessionID, Cwd: r.Cwd, HookEventName: r.HookEventName,
		ToolName: r.ToolName, ToolInput: r.ToolInput, ToolResponse: r.ToolResponse}, nil
}
