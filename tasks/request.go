package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// MaxRequestBytes bounds the request read from stdin. A prompt for a
// specialist can be long, but not this long.
const MaxRequestBytes = 4 << 20

// Request is one tool call, as the plugin sends it on stdin.
type Request struct {
	// Args are the tool's arguments as the model wrote them.
	Args json.RawMessage `json:"args"`
	// Context is the call's place in the host: the calling session (the
	// parent), its agent, the call and the project directory.
	Context CallContext `json:"context"`
	// Host names the server to talk to.
	Host HostInfo `json:"host"`
}

// CallContext is where a call comes from.
type CallContext struct {
	SessionID string `json:"sessionID"`
	Agent     string `json:"agent,omitempty"`
	CallID    string `json:"callID,omitempty"`
	Directory string `json:"directory"`
	MessageID string `json:"messageID,omitempty"`
}

// HostInfo is the server the host runs.
type HostInfo struct {
	ServerURL string `json:"serverUrl,omitempty"`
	// Flavor is "v1" (the default) or "v2".
	Flavor string `json:"flavor,omitempty"`
}

// ReadRequest decodes one request from r: exactly one JSON object of at
// most MaxRequestBytes, with no unknown keys at the top level and in the
// context. A malformed request is a Usage error.
func ReadRequest(r io.Reader) (Request, error) {
	var req Request
	data, err := io.ReadAll(io.LimitReader(r, MaxRequestBytes+1))
	if err != nil {
		return req, usageErr("cannot read the request: %v", err)
	}
	if len(data) > MaxRequestBytes {
		return req, usageErr("the request is larger than %d bytes", MaxRequestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, usageErr("the request is not one JSON object {args, context, host}: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, usageErr("the request has data after its JSON object")
	}
	if len(bytes.TrimSpace(req.Args)) == 0 || bytes.Equal(bytes.TrimSpace(req.Args), []byte("null")) {
		req.Args = json.RawMessage("{}")
	}
	switch req.Host.Flavor {
	case "", "v1", "v2":
	default:
		return req, usageErr("host.flavor %q: want v1 or v2", req.Host.Flavor)
	}
	return req, nil
}

// decodeArgs decodes a tool's arguments into v. Unknown arguments are
// refused, so a misspelt one is not silently ignored.
func decodeArgs(tool string, raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return toolErr("%s: invalid arguments: %v", tool, err)
	}
	return nil
}

// isSessionID reports whether s has the form of an OpenCode session ID:
// "ses_" and at least one of A-Z, a-z, 0-9, "_" and "-".
func isSessionID(s string) bool {
	rest, ok := strings.CutPrefix(s, "ses_")
	if !ok || rest == "" {
		return false
	}
	for _, c := range []byte(rest) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// oneLine collapses runs of white space to one space and trims.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut returns s cut to at most n runes.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
