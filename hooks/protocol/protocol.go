package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Phase is the hook point a request comes from.
type Phase string

// The three phases: before a tool runs, after it ran, and host events.
const (
	Before Phase = "before"
	After  Phase = "after"
	Event  Phase = "event"
	// Apply is apply mode's whole apply_patch call in one process: the
	// plugin's own apply_patch tool sends it instead of before and after,
	// and it is a conversation (an ask, the user's answer, the result)
	// rather than one answer; see ReadLine.
	Apply Phase = "apply"
)

// Valid reports whether p is one of the four phases.
func (p Phase) Valid() bool { return p == Before || p == After || p == Event || p == Apply }

// Host describes the host process that sent a request.
type Host struct {
	// Generation is the host generation, "v1" or "v2" (the wire field
	// "flavor"); it picks join or resolve in the search path pre-check.
	// Empty means v1.
	Generation string `json:"flavor,omitempty"`
	// Platform is Node's process.platform; "win32" selects Windows path
	// rules, anything else posix.
	Platform string `json:"platform,omitempty"`
	// Directory is the session's directory, which relative paths resolve
	// against.
	Directory string `json:"directory,omitempty"`
	// Worktree is the worktree top level as the host spells it. OpenCode
	// sends "/" when the session is outside git, which says there is none;
	// an absent worktree ("") leaves the guards to find it from Directory.
	Worktree  string `json:"worktree,omitempty"`
	Cwd       string `json:"cwd,omitempty"` // the host process's working directory
	ServerURL string `json:"serverUrl,omitempty"`
}

// EventInfo is the host event of an event request.
type EventInfo struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID,omitempty"`
	MessageID string `json:"messageID,omitempty"`
	// Agent is a chat message's agent, Status a session.status event's
	// status type (busy, retry, idle), and External "true" for a chat
	// message the plugin saw come from the user (text, file or image
	// parts, none synthetic or internal). The background task tools use
	// them; the guards do not.
	Agent    string `json:"agent,omitempty"`
	Status   string `json:"status,omitempty"`
	External string `json:"external,omitempty"`
}

// Request is one hook request. Args and Output hold JSON values decoded with
// json.Number for numbers, so re-encoding keeps every number as written.
type Request struct {
	V         int    `json:"v"`
	Phase     Phase  `json:"phase,omitempty"`
	Host      Host   `json:"host"`
	Tool      string `json:"tool,omitempty"`
	SessionID string `json:"sessionID,omitempty"`
	CallID    string `json:"callID,omitempty"`
	// Args is the tool's argument object (any JSON value is accepted; guards
	// act only on objects). In after, the arguments the call ran with, as
	// the host hands them to its after hook; the loop guard counts on them.
	Args any `json:"args,omitempty"`
	// Output is output.output of an after request exactly as the host gave
	// it: a string for built-in tools, any JSON value for MCP tools.
	Output any    `json:"output,omitempty"`
	Status string `json:"status,omitempty"`
	// Event is set for the event phase.
	Event *EventInfo `json:"event,omitempty"`
}

// ArgsObject returns Args as an object, or nil when it is not one.
func (r *Request) ArgsObject() map[string]any {
	m, _ := r.Args.(map[string]any)
	return m
}

// Action is what the plugin does with a response.
type Action string

// The four actions.
const (
	Pass   Action = "pass"   // let the call run unchanged
	Mutate Action = "mutate" // replace the args, in place, with Args
	Block  Action = "block"  // throw with Message
	Append Action = "append" // append Append to a string output
)

// Response is one hook response.
type Response struct {
	V      int    `json:"v"`
	Action Action `json:"action"`
	// Args is the full replacement argument object for mutate: the original
	// keys are kept, changed values replaced.
	Args    map[string]any `json:"args,omitempty"`
	Append  string         `json:"append,omitempty"`
	Message string         `json:"message,omitempty"`
	// Notes say what slim did, for the plugin's log only.
	Notes []string `json:"notes,omitempty"`
}

// The answers of the apply phase, one JSON line each: first ask (or block,
// or result when the patch changes nothing), then, after the plugin's
// ApplyReply, result or block.
const (
	Ask    Action = "ask"    // ask the user with Ask, then send an ApplyReply
	Result Action = "result" // the tool's result: Title, Output, Metadata
)

// ApplyAnswer is one line of the apply phase's conversation.
type ApplyAnswer struct {
	V      int    `json:"v"`
	Action Action `json:"action"`
	// Ask is the host permission request to make, for ask.
	Ask *EditAsk `json:"ask,omitempty"`
	// Title, Output and Metadata are the tool's result, for result.
	Title    string        `json:"title,omitempty"`
	Output   string        `json:"output,omitempty"`
	Metadata *EditMetadata `json:"metadata,omitempty"`
	// Message is the refusal the model reads, for block.
	Message string   `json:"message,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// EditAsk is a request for the host's edit permission, in the shape of
// OpenCode's own apply_patch: the files relative to the worktree, an
// always pattern, and what the prompt shows.
type EditAsk struct {
	Permission string       `json:"permission"`
	Patterns   []string     `json:"patterns"`
	Always     []string     `json:"always"`
	Metadata   EditMetadata `json:"metadata"`
}

// EditMetadata is the diff of an apply: the whole diff and one entry per
// file. Filepath (the relative paths joined) is set in an ask, Diagnostics
// (always empty: slim runs no language server) in a result.
type EditMetadata struct {
	Filepath    string         `json:"filepath,omitempty"`
	Diff        string         `json:"diff"`
	Files       []EditFile     `json:"files"`
	Diagnostics map[string]any `json:"diagnostics,omitempty"`
}

// EditFile is one file of an apply, as OpenCode's interfaces read it.
// Type is add, update, move or delete; Patch is its git-style diff.
type EditFile struct {
	FilePath     string `json:"filePath"`
	RelativePath string `json:"relativePath"`
	Type         string `json:"type"`
	Patch        string `json:"patch"`
	Additions    int    `json:"additions"`
	Deletions    int    `json:"deletions"`
	MovePath     string `json:"movePath,omitempty"`
}

// ApplyReply is the plugin's one line after an ask: whether the user
// approved. Anything else, end of input included, writes nothing.
type ApplyReply struct {
	Approve bool `json:"approve"`
}

// MaxRequestBytes bounds one request; larger input is refused rather than
// read into memory without limit.
const MaxRequestBytes = 64 << 20

// RequestError is a request slim cannot act on: bad JSON, a field that is
// not part of the protocol, a wrong type, a version slim does not speak.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return "hook request: " + e.Msg }

func reqErr(format string, args ...any) error {
	return &RequestError{Msg: fmt.Sprintf(format, args...)}
}

// TooLargeError is a request larger than Limit bytes, refused unread. Tool
// is the top-level "tool" its first bytes name ("" when none could be
// found), so that a caller can still refuse a call it guards rather than
// let it pass unchecked.
type TooLargeError struct {
	Limit int
	Tool  string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("hook request: larger than %d bytes", e.Limit)
}

// ReadRequest reads r and decodes it. It reads at most MaxRequestBytes+1
// bytes: a longer request gives a *TooLargeError without the rest being
// read.
func ReadRequest(r io.Reader) (*Request, error) {
	return readRequest(r, MaxRequestBytes)
}

// ReadLine reads one request from r up to the end of its line (a request
// written as one line of JSON, as the plugin writes them) and decodes it,
// leaving the rest of r unread: the apply phase's conversation goes on on
// the same input. A line longer than MaxRequestBytes is refused with a
// *TooLargeError; end of input ends the line.
func ReadLine(r *bufio.Reader) (*Request, error) {
	data, err := ReadBoundedLine(r, MaxRequestBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return Decode(data)
}

// ReadBoundedLine reads up to and without the next newline, at most limit
// bytes: a longer line is a *TooLargeError, read no further than the
// limit. End of input ends a last line without a newline; with nothing
// read it is io.EOF.
func ReadBoundedLine(r *bufio.Reader, limit int) ([]byte, error) {
	var data []byte
	for {
		chunk, err := r.ReadSlice('\n')
		data = append(data, chunk...)
		line := bytes.TrimSuffix(data, []byte("\n"))
		if len(line) > limit {
			return nil, &TooLargeError{Limit: limit, Tool: peekTool(line)}
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(data) == 0:
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return line, nil
		default:
			return nil, fmt.Errorf("read hook request: %w", err)
		}
	}
}

func readRequest(r io.Reader, limit int) (*Request, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read hook request: %w", err)
	}
	if len(data) > limit {
		return nil, &TooLargeError{Limit: limit, Tool: peekTool(data)}
	}
	return Decode(data)
}

// peekTool returns the string value of the top-level "tool" field of a
// JSON object that may be cut off anywhere, or "" when the object does not
// start well-formed or names no tool before it is cut. Values before "tool"
// are skipped token by token, never decoded whole.
func peekTool(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		if key, _ := t.(string); key == "tool" {
			v, _ := dec.Token()
			s, _ := v.(string)
			return s
		}
		// Skip one value: a scalar, or a nested object or array to its end.
		depth := 0
		for {
			t, err := dec.Token()
			if err != nil {
				return ""
			}
			switch t {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
			if depth == 0 {
				break
			}
		}
	}
	return ""
}

// Decode parses one request strictly: exactly one JSON object, field names
// matched exactly (case included), no unknown fields, every field of the
// right type, and v equal to Version. Missing optional strings and null
// values count as absent. Phase may be absent (the command line fills it
// in); Validate checks what each phase needs.
func Decode(data []byte) (*Request, error) {
	// One decoding pass gives every field its value; a large output or args
	// is never scanned again.
	fields, err := object(data, "request")
	if err != nil {
		return nil, err
	}
	req := &Request{}
	seenV := false
	for _, k := range sortedKeys(fields) {
		val := fields[k]
		switch k {
		case "v":
			if val == nil {
				continue
			}
			n, err := intField(val, data)
			if err != nil {
				return nil, err
			}
			req.V, seenV = n, true
		case "phase":
			s, err := stringField(val, "phase")
			if err != nil {
				return nil, err
			}
			req.Phase = Phase(s)
		case "host":
			if err := decodeHost(val, &req.Host); err != nil {
				return nil, err
			}
		case "tool":
			req.Tool, err = stringField(val, "tool")
		case "sessionID":
			req.SessionID, err = stringField(val, "sessionID")
		case "callID":
			req.CallID, err = stringField(val, "callID")
		case "status":
			req.Status, err = stringField(val, "status")
		case "args":
			req.Args = val
		case "output":
			req.Output = val
		case "event":
			if val == nil {
				continue
			}
			req.Event = &EventInfo{}
			err = decodeEvent(val, req.Event)
		default:
			return nil, unknownField("request", k, "v, phase, host, tool, sessionID, callID, args, output, status, event")
		}
		if err != nil {
			return nil, err
		}
	}
	if !seenV {
		return nil, reqErr("field \"v\" is missing; this slim speaks protocol v%d", Version)
	}
	if req.V != Version {
		return nil, reqErr("protocol v%d is not supported; this slim speaks v%d", req.V, Version)
	}
	if req.Phase != "" && !req.Phase.Valid() {
		return nil, reqErr("phase %q is not one of before, after, event, apply", req.Phase)
	}
	if f := req.Host.Generation; f != "" && f != "v1" && f != "v2" {
		return nil, reqErr("host.flavor %q is not one of v1, v2", f)
	}
	return req, nil
}

// Validate completes a decoded request with the phase named on the command
// line and checks what that phase needs: a tool for before and after, an
// event type for event. argvPhase may be empty when the request names its
// own phase.
func (r *Request) Validate(argvPhase Phase) error {
	if argvPhase != "" {
		if !argvPhase.Valid() {
			return reqErr("phase %q is not one of before, after, event, apply", argvPhase)
		}
		if r.Phase == "" {
			r.Phase = argvPhase
		} else if r.Phase != argvPhase {
			return reqErr("phase %q in the request does not match %q on the command line", r.Phase, argvPhase)
		}
	}
	switch r.Phase {
	case "":
		return reqErr("field \"phase\" is missing")
	case Before, After:
		if r.Tool == "" {
			return reqErr("field \"tool\" is missing (required for phase %s)", r.Phase)
		}
	case Event:
		if r.Event == nil || r.Event.Type == "" {
			return reqErr("field \"event.type\" is missing (required for phase event)")
		}
	case Apply:
		if r.Tool != "apply_patch" {
			return reqErr("phase apply is for the tool apply_patch, not %q", r.Tool)
		}
	}
	return nil
}

func decodeHost(val any, h *Host) error {
	if val == nil {
		return nil
	}
	return stringFields(val, "host", "flavor, platform, directory, worktree, cwd, serverUrl", func(k string) *string {
		switch k {
		case "flavor":
			return &h.Generation
		case "platform":
			return &h.Platform
		case "directory":
			return &h.Directory
		case "worktree":
			return &h.Worktree
		case "cwd":
			return &h.Cwd
		case "serverUrl":
			return &h.ServerURL
		}
		return nil
	})
}

func decodeEvent(val any, ev *EventInfo) error {
	return stringFields(val, "event", "type, sessionID, messageID, agent, status, external", func(k string) *string {
		switch k {
		case "type":
			return &ev.Type
		case "sessionID":
			return &ev.SessionID
		case "messageID":
			return &ev.MessageID
		case "agent":
			return &ev.Agent
		case "status":
			return &ev.Status
		case "external":
			return &ev.External
		}
		return nil
	})
}

// stringFields decodes the object val, whose fields are all strings, into
// the destinations field names; field returns nil for a key that is not one
// of known.
func stringFields(val any, what, known string, field func(k string) *string) error {
	fields, err := member(val, what)
	if err != nil {
		return err
	}
	for _, k := range sortedKeys(fields) {
		dst := field(k)
		if dst == nil {
			return unknownField(what, k, known)
		}
		if *dst, err = stringField(fields[k], what+"."+k); err != nil {
			return err
		}
	}
	return nil
}

// object decodes exactly one JSON object into its fields' values, numbers
// as json.Number.
func object(data []byte, what string) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, reqErr("%s is empty; want one JSON object", what)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, reqErr("%s must be a JSON object, not %s", what, te.Value)
		}
		return nil, reqErr("%s is not valid JSON: %v", what, err)
	}
	if fields == nil {
		return nil, reqErr("%s must be a JSON object, not null", what)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, reqErr("%s has data after the JSON object", what)
	}
	return fields, nil
}

// member returns a decoded non-null field value that must be an object,
// naming a wrong type the way encoding/json does.
func member(val any, what string) (map[string]any, error) {
	switch x := val.(type) {
	case map[string]any:
		return x, nil
	case string:
		return nil, reqErr("%s must be a JSON object, not string", what)
	case json.Number:
		return nil, reqErr("%s must be a JSON object, not number", what)
	case bool:
		return nil, reqErr("%s must be a JSON object, not bool", what)
	default:
		return nil, reqErr("%s must be a JSON object, not array", what)
	}
}

func stringField(val any, name string) (string, error) {
	if val == nil {
		return "", nil
	}
	s, ok := val.(string)
	if !ok {
		return "", reqErr("field %q must be a string, not %s", name, kindOf(val))
	}
	return s, nil
}

// intField returns v as an int. Only when it is not one is the request's
// raw text decoded again, to quote the value as written.
func intField(val any, data []byte) (int, error) {
	if num, ok := val.(json.Number); ok {
		if n, err := strconv.Atoi(string(num)); err == nil {
			return n, nil
		}
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(data, &raw) // data already decoded once: cannot fail
	return 0, reqErr("field %q must be an integer, not %s", "v", strings.TrimSpace(string(raw["v"])))
}

func kindOf(val any) string {
	switch val.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

func unknownField(where, k, known string) error {
	return reqErr("%s field %q is not part of protocol v%d (known: %s)", where, k, Version, known)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Encode writes v (a Request or Response) as one line of JSON, numbers as
// written and without HTML escaping.
func Encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode hook message: %w", err)
	}
	return nil
}
