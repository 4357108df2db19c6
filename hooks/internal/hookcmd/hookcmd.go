// Package hookcmd reads the requests of the hosts that run a command for
// each tool call and send it one JSON object on stdin: Claude Code, Codex
// CLI and Gemini CLI. All send session_id, cwd, hook_event_name, tool_name,
// tool_input and, after the call, tool_response; Claude Code and Codex add
// tool_use_id, Codex turn_id. Gemini CLI names its tool events BeforeTool
// and AfterTool. What a host requires beyond that, how it reads an answer and
// which exit codes mean what stay in the host's own adapter package.
package hookcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/internal/kinderr"
)

// Kind says what went wrong with a request.
type Kind string

// The kinds of Error.
const (
	// Malformed: the request is not the JSON object the host sends, or a
	// field it documents has the wrong type or is missing.
	Malformed Kind = "malformed"
)

// Error is this package's error; its Code is stable and its Message names
// the host. The adapters return it as their own Error, code and message
// unchanged.
type Error = kinderr.Error[Kind]

// Codes of Error.
const (
	CodeBadJSON      = "bad_json"      // not one JSON object
	CodeBadField     = "bad_field"     // a known field of the wrong type
	CodeMissingField = "missing_field" // a field the event needs is absent
	CodeTooLarge     = "too_large"     // more than MaxRequestBytes
)

// As returns a Malformed Error in err's chain as an adapter's own error of
// kind, code and message unchanged, and any other error as it is.
func As[K ~string](err error, kind K) error {
	if e, ok := kinderr.As[Kind](err); ok {
		return &kinderr.Error[K]{Kind: kind, Code: e.Code, Message: e.Message}
	}
	return err
}

// The tool events, the only ones whose requests must name a tool.
const (
	PreToolUse  = "PreToolUse"
	PostToolUse = "PostToolUse"
)

// MaxRequestBytes bounds one request; a write of a large file carries its
// whole content, so the bound is the one of slim's own protocol.
const MaxRequestBytes = 64 << 20

// Host says whose requests are read: Name is how messages call the host
// ("claude-code", "codex", "gemini-cli"), TurnID whether it sends turn_id.
// ToolEvents are the host's names of its before and after tool events, the
// ones whose requests must name a tool; empty means PreToolUse and
// PostToolUse.
type Host struct {
	Name       string
	TurnID     bool
	ToolEvents []string
}

// isToolEvent reports whether event is one of h's tool events.
func (h Host) isToolEvent(event string) bool {
	if len(h.ToolEvents) == 0 {
		return event == PreToolUse || event == PostToolUse
	}
	for _, e := range h.ToolEvents {
		if e == event {
			return true
		}
	}
	return false
}

func (h Host) malformed(code, format string, args ...any) error {
	return &Error{Kind: Malformed, Code: code, Message: h.Name + " hook request: " + fmt.Sprintf(format, args...)}
}

// Request is one decoded hook request. Fields it does not name are
// accepted and ignored: the host, not slim, decides its payload.
type Request struct {
	SessionID     string
	TurnID        string // Codex only
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

// Read reads at most MaxRequestBytes+1 bytes of r: the request's bytes,
// and a too_large Error when there were more.
func (h Host) Read(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxRequestBytes+1))
	if err != nil {
		return data, fmt.Errorf("read %s hook request: %w", h.Name, err)
	}
	if len(data) > MaxRequestBytes {
		return data, h.malformed(CodeTooLarge, "larger than %d MiB, the most slim reads", MaxRequestBytes>>20)
	}
	return data, nil
}

// ReadInput reads one request of h from r, as Read does, and decodes it
// with decode, an adapter's own Decode. The bytes read come back with
// either error, and a hookcmd error comes back as the adapter's, of kind.
func ReadInput[T any, K ~string](h Host, r io.Reader, kind K, decode func([]byte) (*T, error)) (*T, []byte, error) {
	data, err := h.Read(r)
	if err != nil {
		return nil, data, As(err, kind)
	}
	in, err := decode(data)
	return in, data, err
}

// Decode parses one request: exactly one JSON object whose known fields
// are strings (tool_input an object). hook_event_name is required, and
// tool_name and tool_input are required for the tool events.
func (h Host) Decode(data []byte) (*Request, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, h.malformed(CodeBadJSON, "empty; want one JSON object")
		}
		return nil, h.malformed(CodeBadJSON, "not one JSON object: %v", err)
	}
	if fields == nil {
		return nil, h.malformed(CodeBadJSON, "null; want one JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, h.malformed(CodeBadJSON, "data after the JSON object")
	}
	in := &Request{}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"session_id", &in.SessionID}, {"turn_id", &in.TurnID}, {"cwd", &in.Cwd}, {"hook_event_name", &in.HookEventName},
		{"tool_name", &in.ToolName}, {"tool_use_id", &in.ToolUseID},
	} {
		if f.dst == &in.TurnID && !h.TurnID {
			continue // a field this host does not document is ignored
		}
		switch v := fields[f.name].(type) {
		case nil:
		case string:
			*f.dst = v
		default:
			return nil, h.malformed(CodeBadField, "field %q must be a string", f.name)
		}
	}
	switch v := fields["tool_input"].(type) {
	case nil:
	case map[string]any:
		in.ToolInput = v
	default:
		return nil, h.malformed(CodeBadField, "field \"tool_input\" must be an object")
	}
	in.ToolResponse = fields["tool_response"]
	if in.HookEventName == "" {
		return nil, h.malformed(CodeMissingField, "field \"hook_event_name\" is missing")
	}
	if h.isToolEvent(in.HookEventName) {
		if in.ToolName == "" {
			return nil, h.malformed(CodeMissingField, "field \"tool_name\" is missing (required for %s)", in.HookEventName)
		}
		if in.ToolInput == nil {
			return nil, h.malformed(CodeMissingField, "field \"tool_input\" is missing (required for %s)", in.HookEventName)
		}
	}
	return in, nil
}

// Peek returns the hook_event_name and tool_name of a request that did not
// decode, as far as its top level can be read ("" for what cannot). The
// request may be cut off anywhere (one larger than MaxRequestBytes is read
// only that far): values are skipped token by token, never decoded whole,
// and every host names the tool before they send the tool's input.
func Peek(data []byte) (event, tool string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return event, tool
		}
		key, _ := t.(string)
		depth := 0
		for {
			v, err := dec.Token()
			if err != nil {
				return event, tool
			}
			switch v {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if s, ok := v.(string); ok && depth == 0 {
				switch key {
				case "hook_event_name":
					event = s
				case "tool_name":
					tool = s
				}
			}
			if depth == 0 {
				break
			}
		}
	}
	return event, tool
}

// Platform is the running system as slim's protocol names it (Node's
// process.platform: "win32" for Windows), so that the dispatcher resolves
// the host's paths by this system's rules.
func Platform() string {
	if runtime.GOOS == "windows" {
		return "win32"
	}
	return runtime.GOOS
}

// ResponseText is the tool's response as the loop guard compares it: a
// string as it is, any other value as its JSON text (numbers as written),
// so identical responses compare equal and the notice, which the guard
// gives only for text results, applies to every tool.
func ResponseText(v any) any {
	if v == nil {
		return nil
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return string(b)
}

// LogNotes logs the dispatcher's notes on one call at debug level, with
// msg naming the host's hook.
func LogNotes(log zerolog.Logger, tool string, resp protocol.Response, msg string) {
	if len(resp.Notes) > 0 {
		log.Debug().Str("tool", tool).Strs("notes", resp.Notes).Str("action", string(resp.Action)).Msg(msg)
	}
}
