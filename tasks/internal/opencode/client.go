package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultUsername is the basic-auth user name when Config.Username is
// empty, as on an OpenCode server.
const DefaultUsername = "opencode"

// New checks cfg and makes a Client. The base URL must be http or https
// with a host, and hold no query, fragment or credentials (the password
// goes in Config.Password); anything else is a Usage error.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	switch {
	case err != nil:
		return nil, usageErr(CodeBadConfig, err, "the OpenCode server URL %q is not a URL", cfg.BaseURL)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return nil, usageErr(CodeBadConfig, nil, "the OpenCode server URL %q must be http:// or https:// with a host", cfg.BaseURL)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil:
		return nil, usageErr(CodeBadConfig, nil, "the OpenCode server URL %q must not hold a query, a fragment or credentials", cfg.BaseURL)
	case cfg.MaxBody < 0:
		return nil, usageErr(CodeBadConfig, nil, "the response bound %d is negative", cfg.MaxBody)
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Username == "" {
		cfg.Username = DefaultUsername
	}
	hc := cfg.HTTP
	if hc == nil {
		hc = privateClient()
	}
	root := u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
	c := &Client{cfg: cfg, hc: hc, root: root, sessions: "/session"}
	if cfg.V2 {
		c.sessions = "/api/session"
	}
	return c, nil
}

// privateClient is the client a Config without one gets: keep-alive, no
// proxy, no redirects followed (a 3xx comes back as an Unknown error),
// and no timeouts of its own: deadlines come from each call's context.
func privateClient() *http.Client {
	tr := &http.Transport{
		DialContext:       (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2: true,
		MaxIdleConns:      8,
		IdleConnTimeout:   90 * time.Second,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// CloseIdleConnections closes the kept-alive connections that are idle.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Health reads GET /global/health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.call(ctx, request{method: http.MethodGet, path: "/global/health", what: "health"},
		func(raw []byte) error { return decodeObject(raw, &h) })
	return h, err
}

// CreateSession creates a session (a child of parentID when it is not
// empty) with POST /session; an empty title lets the server choose one.
func (c *Client) CreateSession(ctx context.Context, parentID, title string) (Session, error) {
	body := struct {
		ParentID string `json:"parentID,omitempty"`
		Title    string `json:"title,omitempty"`
	}{parentID, title}
	var s Session
	err := c.call(ctx, request{method: http.MethodPost, path: c.sessions, body: body, what: "session"},
		func(raw []byte) error { return decodeSession(raw, &s) })
	return s, err
}

// GetSession reads GET /session/{id}; a deleted session is a NotFound
// error.
func (c *Client) GetSession(ctx context.Context, id string) (Session, error) {
	path, err := c.sessionPath(id, "")
	if err != nil {
		return Session{}, err
	}
	var s Session
	err = c.call(ctx, request{method: http.MethodGet, path: path, what: "session"},
		func(raw []byte) error { return decodeSession(raw, &s) })
	return s, err
}

// Children lists a session's child sessions (GET /session/{id}/children).
func (c *Client) Children(ctx context.Context, id string) ([]Session, error) {
	path, err := c.sessionPath(id, "/children")
	if err != nil {
		return nil, err
	}
	var out []Session
	err = c.call(ctx, request{method: http.MethodGet, path: path, what: "session children"},
		func(raw []byte) (err error) { out, err = decodeList(raw, checkSession); return err })
	return out, err
}

// Todos reads a session's todo list (GET /session/{id}/todo).
func (c *Client) Todos(ctx context.Context, id string) ([]Todo, error) {
	path, err := c.sessionPath(id, "/todo")
	if err != nil {
		return nil, err
	}
	var out []Todo
	err = c.call(ctx, request{method: http.MethodGet, path: path, what: "session todo"},
		func(raw []byte) (err error) { out, err = decodeList(raw, func(Todo) error { return nil }); return err })
	return out, err
}

// Questions lists the pending question requests of every session (GET
// /question): a session's question tool asked its user something that is
// not answered yet.
func (c *Client) Questions(ctx context.Context) ([]Pending, error) {
	return c.pending(ctx, "/question", "question")
}

// Permissions lists the pending permission requests of every session
// (GET /permission): a tool call waits for the user to allow it.
func (c *Client) Permissions(ctx context.Context) ([]Pending, error) {
	return c.pending(ctx, "/permission", "permission")
}

func (c *Client) pending(ctx context.Context, path, what string) ([]Pending, error) {
	var out []Pending
	err := c.call(ctx, request{method: http.MethodGet, path: path, what: what},
		func(raw []byte) (err error) { out, err = decodeList(raw, checkPending); return err })
	return out, err
}

// Messages reads a session's transcript (GET /session/{id}/message), in
// the server's order (by message id, so by creation time). A limit above
// 0 keeps only the last limit messages; 0 reads them all. Anything but a
// JSON array of messages, each with a string info.role, is Malformed.
func (c *Client) Messages(ctx context.Context, id string, limit int) ([]Message, error) {
	path, err := c.sessionPath(id, "/message")
	if err != nil {
		return nil, err
	}
	rq := request{method: http.MethodGet, path: path, what: "session message"}
	if limit > 0 {
		rq.query = url.Values{"limit": {strconv.Itoa(limit)}}
	}
	var out []Message
	err = c.call(ctx, rq, func(raw []byte) (err error) { out, err = decodeMessages(raw); return err })
	return out, err
}

// PromptAsync sends a prompt with POST /session/{id}/prompt_async. Any
// 2xx without an error envelope (the server answers 204) means the
// prompt was admitted; the run goes on in the background.
//
// On v2 it is POST /api/session/{id}/prompt with delivery "queue": the
// prompt runs after the run going on, if any. v2 has no noReply, so a
// Prompt with NoReply is a Usage error there.
func (c *Client) PromptAsync(ctx context.Context, id string, p Prompt) error {
	rest, body := "/prompt_async", any(p)
	if c.cfg.V2 {
		if p.NoReply {
			return usageErr(CodeBadBody, nil, "an OpenCode v2 host has no noReply: every prompt starts a run")
		}
		rest = "/prompt"
		body = struct {
			Prompt
			Delivery string `json:"delivery"`
		}{p, "queue"}
	}
	path, err := c.sessionPath(id, rest)
	if err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodPost, path: path, body: body, what: "prompt"}, nil)
}

// SendMessage sends a prompt with POST /session/{id}/message, which
// answers once the message is handled: at once with Prompt.NoReply (the
// message is only recorded), else when the run is over, so give ctx a
// deadline. The answer must be a message.
//
// A v2 host has no such call: it is a NoRoute error, and nothing is sent.
func (c *Client) SendMessage(ctx context.Context, id string, p Prompt) error {
	if c.cfg.V2 {
		return noRoute("an OpenCode v2 host cannot record a message without starting a run (it has no noReply)")
	}
	path, err := c.sessionPath(id, "/message")
	if err != nil {
		return err
	}
	return c.call(ctx, request{method: http.MethodPost, path: path, body: p, what: "session message"},
		func(raw []byte) error { _, err := decodeMessage(raw); return err })
}

// Abort asks the server to stop a session's run (POST
// /session/{id}/abort). It reports the server's answer: false means the
// abort is not confirmed. Anything but a JSON boolean is Malformed.
//
// On v2 it is POST /api/session/{id}/interrupt with {"continue": false}:
// an empty answer (204) or {"interrupted": true} confirms it, and
// {"interrupted": false} (nothing was running, or the host refused) does
// not. Either way only a later idle check proves the run stopped.
func (c *Client) Abort(ctx context.Context, id string) (bool, error) {
	if c.cfg.V2 {
		return c.interrupt(ctx, id)
	}
	path, err := c.sessionPath(id, "/abort")
	if err != nil {
		return false, err
	}
	var confirmed bool
	err = c.call(ctx, request{method: http.MethodPost, path: path, what: "session abort"}, func(raw []byte) error {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("a %T, not a boolean", v)
		}
		confirmed = b
		return nil
	})
	return confirmed, err
}

func (c *Client) interrupt(ctx context.Context, id string) (bool, error) {
	path, err := c.sessionPath(id, "/interrupt")
	if err != nil {
		return false, err
	}
	confirmed := true
	body := struct {
		Continue bool `json:"continue"`
	}{false}
	err = c.call(ctx, request{method: http.MethodPost, path: path, body: body, what: "session interrupt"}, func(raw []byte) error {
		if len(bytes.TrimSpace(raw)) == 0 {
			return nil
		}
		var v struct {
			Interrupted *bool `json:"interrupted"`
		}
		if err := decodeObject(raw, &v); err != nil {
			return err
		}
		if v.Interrupted == nil {
			return fmt.Errorf("no interrupted field")
		}
		confirmed = *v.Interrupted
		return nil
	})
	return confirmed, err
}

// Wait blocks until the session is idle and returns its info, on a v2
// host (POST /api/session/{id}/wait?timeoutMs=). timeout bounds the wait
// at the host (0 asks whether it is idle now); a host that is still busy
// then answers 408, a Rejected error with Status 408. Give ctx a deadline
// a little beyond timeout. A host without the route answers 404 as for a
// deleted session (the caller tells them apart by reading the session);
// a v1 client has no wait call: a NoRoute error, and nothing is sent.
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (Session, error) {
	if !c.cfg.V2 {
		return Session{}, noRoute("an OpenCode v1 host has no wait-for-idle call")
	}
	path, err := c.sessionPath(id, "/wait")
	if err != nil {
		return Session{}, err
	}
	var s Session
	rq := request{method: http.MethodPost, path: path, what: "session wait",
		query: url.Values{"timeoutMs": {strconv.FormatInt(max(timeout.Milliseconds(), 0), 10)}}}
	err = c.call(ctx, rq, func(raw []byte) error { return decodeSession(raw, &s) })
	return s, err
}

// StillBusy reports whether err is a wait's answer that the session did
// not become idle within its timeout.
func StillBusy(err error) bool {
	e, ok := AsError(err)
	return ok && e.Status == http.StatusRequestTimeout
}

// Status reads the live status map (GET /session/status); see StatusMap
// for how it is judged. A timeout is an Unknown error whose message is
// exactly "Session status lookup timed out". A v2 host has no map: the
// call is a NoRoute error and nothing is sent.
func (c *Client) Status(ctx context.Context) (StatusMap, error) {
	if c.cfg.V2 {
		return StatusMap{}, noRoute(ErrNoStatusMap)
	}
	var m StatusMap
	err := c.call(ctx, request{
		method: http.MethodGet, path: "/session/status", what: "session-status",
		timedOut: "Session status lookup timed out",
	}, func(raw []byte) (err error) { m, err = decodeStatus(raw); return err })
	return m, err
}

// sessionPath is "/session/{id}" ("/api/session/{id}" on v2) and then
// rest, with id escaped as one path segment. An empty id, "." and ".."
// are Usage errors: they would name another route once the path is
// cleaned.
func (c *Client) sessionPath(id, rest string) (string, error) {
	if id == "" || id == "." || id == ".." {
		return "", usageErr(CodeBadID, nil, "%q is not a session id", id)
	}
	return c.sessions + "/" + url.PathEscape(id) + rest, nil
}

// request is one call to the server.
type request struct {
	method string
	path   string     // escaped, from the root
	query  url.Values // besides ?directory=
	body   any        // sent as JSON; nil sends no body
	// what names the answer in a Malformed error's message: "invalid
	// <what> response".
	what string
	// timedOut, when set, replaces the message of a timeout.
	timedOut string
}

// call sends rq and decodes the body of its 2xx answer with decode (nil:
// the body does not matter). A decode error is Malformed: a plain error
// becomes the cause of one with the message "invalid <what> response",
// an *Error is returned as it is, with the answer's status.
func (c *Client) call(ctx context.Context, rq request, decode func([]byte) error) error {
	raw, st, err := c.send(ctx, rq)
	if err != nil || decode == nil {
		return err
	}
	err = decode(raw)
	if err == nil {
		return nil
	}
	if e, ok := AsError(err); ok {
		e.Status = st
		return e
	}
	return &Error{Kind: Malformed, Code: CodeMalformed, Status: st, Message: "invalid " + rq.what + " response", Err: err}
}

// send makes one request and classifies its answer (see Kind). It
// returns the body and status of a 2xx that is not an error envelope.
func (c *Client) send(ctx context.Context, rq request) ([]byte, int, error) {
	var body io.Reader
	if rq.body != nil {
		raw, err := encodeJSON(rq.body)
		if err != nil {
			return nil, 0, usageErr(CodeBadBody, err, "the body of %s %s cannot be encoded as JSON", rq.method, rq.path)
		}
		body = bytes.NewReader(raw)
	}
	q := url.Values{}
	for k, vs := range rq.query {
		q[k] = vs
	}
	if c.cfg.Directory != "" {
		q.Set("directory", c.cfg.Directory)
	}
	target := c.root + rq.path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, target, body)
	if err != nil {
		return nil, 0, usageErr(CodeBadConfig, err, "cannot make the request %s %s", rq.method, rq.path)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.Directory != "" {
		req.Header.Set("X-Opencode-Directory", encodeURIComponent(c.cfg.Directory))
	}
	if c.cfg.Password != "" {
		req.SetBasicAuth(c.cfg.Username, c.cfg.Password)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, c.transportErr(ctx, rq, err)
	}
	defer resp.Body.Close()
	raw, tooLarge, readErr := readBounded(resp.Body, c.cfg.MaxBody)
	st := resp.StatusCode
	if st >= 200 && st < 300 {
		switch {
		case readErr != nil:
			// The answer was cut: whatever it said is lost.
			e := c.transportErr(ctx, rq, readErr)
			e.Status = st
			return nil, st, e
		case tooLarge:
			return nil, st, &Error{Kind: Malformed, Code: CodeTooLarge, Status: st,
				Message: fmt.Sprintf("invalid %s response: the body is larger than %d bytes", rq.what, c.cfg.MaxBody)}
		}
		if text, ok := envelope(raw); ok {
			return nil, st, &Error{Kind: Rejected, Code: CodeEnvelope, Status: st, Message: fmt.Sprintf("HTTP %d: %s", st, text)}
		}
		return raw, st, nil
	}
	if readErr != nil || tooLarge {
		raw = nil // a cut body holds no usable text; the status decides alone
	}
	return nil, st, statusErr(st, raw, c.cfg.Password != "")
}

// statusErr classifies an answer that is not 2xx.
func statusErr(st int, raw []byte, sentCredentials bool) *Error {
	if st == http.StatusUnauthorized || st == http.StatusForbidden {
		msg := fmt.Sprintf("HTTP %d: the OpenCode server wants credentials: set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME when the user is not %q)", st, DefaultUsername)
		if sentCredentials {
			msg = fmt.Sprintf("HTTP %d: the OpenCode server wants credentials and refused the ones sent: check OPENCODE_SERVER_PASSWORD and OPENCODE_SERVER_USERNAME", st)
		}
		return &Error{Kind: Auth, Code: CodeAuth, Status: st, Message: msg}
	}
	msg := fmt.Sprintf("HTTP %d", st)
	if text := hostText(raw); text != "" {
		msg += ": " + text
	}
	switch {
	case st == http.StatusNotFound:
		return &Error{Kind: NotFound, Code: CodeNotFound, Status: st, Message: msg}
	case st >= 400 && st < 500:
		return &Error{Kind: Rejected, Code: CodeRejected, Status: st, Message: msg}
	case st >= 500:
		return &Error{Kind: Unknown, Code: CodeServerError, Status: st, Message: msg}
	}
	return &Error{Kind: Unknown, Code: CodeStatus, Status: st, Message: msg}
}

// transportErr classifies a request that got no complete answer: the
// server may have acted on it.
func (c *Client) transportErr(ctx context.Context, rq request, err error) *Error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) ||
		errors.As(err, &ne) && ne.Timeout():
		msg := rq.timedOut
		if msg == "" {
			msg = fmt.Sprintf("OpenCode %s %s timed out", rq.method, rq.path)
		}
		return &Error{Kind: Unknown, Code: CodeTimeout, Message: msg, Err: err}
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return &Error{Kind: Unknown, Code: CodeCanceled, Message: fmt.Sprintf("OpenCode %s %s was canceled", rq.method, rq.path), Err: err}
	}
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err // the URL is said once, in the message
	}
	return &Error{Kind: Unknown, Code: CodeTransport, Err: err,
		Message: fmt.Sprintf("OpenCode %s %s at %s failed: %v", rq.method, rq.path, c.root, cause)}
}

// noRoute refuses a call the host's API does not have; nothing is sent.
func noRoute(msg string) *Error { return &Error{Kind: NotFound, Code: CodeNoRoute, Message: msg} }

func usageErr(code string, cause error, format string, args ...any) *Error {
	return &Error{Kind: Usage, Code: code, Message: "opencode client: " + fmt.Sprintf(format, args...), Err: cause}
}

// encodeJSON encodes v without escaping <, > and &, so a body reads on
// the wire as it was written (the prompts carry HTML comments).
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// readBounded reads at most max bytes of r and reports whether there was
// more.
func readBounded(r io.Reader, max int64) ([]byte, bool, error) {
	raw, err := io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(raw)) > max {
		return raw[:max], true, nil
	}
	return raw, false, err
}

// envelope reports whether a 2xx body is an error envelope (a JSON object
// with a non-null top-level "error") and returns its text.
func envelope(raw []byte) (string, bool) {
	e, ok := object(raw)["error"]
	if !ok || string(e) == "null" {
		return "", false
	}
	if text := hostText(raw); text != "" {
		return text, true
	}
	return clip(string(e)), true
}

// hostText is the server's own text in an error body:
// {"name":…,"data":{"message":m}}, {"error":{"message":m}},
// {"error":m} or {"message":m}; "" when there is none.
func hostText(raw []byte) string {
	top := object(raw)
	for _, v := range []json.RawMessage{
		object(top["data"])["message"], object(top["error"])["message"], top["error"], top["message"],
	} {
		if s := strings.TrimSpace(str(v)); s != "" {
			return clip(s)
		}
	}
	return ""
}

// maxText bounds the server's text kept in an error message.
const maxText = 1000

// clip cuts s to maxText bytes at a rune boundary.
func clip(s string) string {
	if len(s) <= maxText {
		return s
	}
	cut := maxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// encodeURIComponent percent-encodes s as JavaScript's function of that
// name does: everything but letters, digits and -_.!~*'().
func encodeURIComponent(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' || strings.IndexByte("-_.!~*'()", ch) >= 0 {
			b.WriteByte(ch)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[ch>>4])
		b.WriteByte(hex[ch&15])
	}
	return b.String()
}
