package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxResponseBytes caps every response body read from a backend; a larger
// one is refused rather than cut, since a cut JSON document is useless.
const MaxResponseBytes = 4 << 20

// endpoint is one server's base URL, with what every call to it carries.
type endpoint struct {
	server string // "OpenCode server", for messages
	base   *url.URL
	query  url.Values // added to every call (merged over the base's own)
	client *http.Client
	auth   func(*http.Request)
	// subject, when set, opens the messages of calls that are about no
	// model (reading the server's configuration) in place of the model's
	// reference; maxBytes, when positive, lowers MaxResponseBytes.
	subject  string
	maxBytes int64
}

// about is what a message of this endpoint's call for ref is about.
func (e *endpoint) about(ref Ref) string {
	if e.subject != "" {
		return e.subject
	}
	return ref.String()
}

// limit is the most bytes of an answer read.
func (e *endpoint) limit() int64 {
	if e.maxBytes > 0 {
		return e.maxBytes
	}
	return MaxResponseBytes
}

func newEndpoint(server, base string, ref Ref, client *http.Client) (*endpoint, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, &Error{Kind: Config, Code: CodeBadConfig, Model: ref.String(), Err: err,
			Message: fmt.Sprintf("%s: the %s URL %q is not an http or https URL", ref, server, redact(base))}
	}
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	u.Fragment, u.RawFragment = "", ""
	return &endpoint{server: server, base: u, client: client}, nil
}

// redact hides user info in a URL that is quoted in a message.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User("…")
		return u.String()
	}
	return raw
}

// call sends in (JSON, when not nil) with method to path below the base
// URL and decodes a 2xx answer into out (when not nil). Every failure is an
// *Error about ref.
func (e *endpoint) call(ctx context.Context, ref Ref, method, path string, in, out any) error {
	u := *e.base
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	q := u.Query()
	for k, v := range e.query {
		q[k] = v
	}
	u.RawQuery = q.Encode()
	op := method + " " + u.Path
	who, model := e.about(ref), ref.String()
	if e.subject != "" {
		model = ""
	}

	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return &Error{Kind: Protocol, Code: CodeBadResponse, Model: model, Err: err,
				Message: fmt.Sprintf("%s: could not encode the request for %s: %v", who, op, err)}
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return &Error{Kind: Config, Code: CodeBadConfig, Model: model, Err: err,
			Message: fmt.Sprintf("%s: could not build the request %s: %v", who, op, err)}
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.auth != nil {
		e.auth(req)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctxErrorAbout(ctx, who, model, "waiting for "+op)
		}
		return &Error{Kind: Unreachable, Code: CodeUnreachable, Model: model, Err: err,
			Message: fmt.Sprintf("%s: the %s could not be reached (%s): %s", who, e.server, op, causeText(err))}
	}
	defer resp.Body.Close()
	if resp.ContentLength > e.limit() {
		return tooLarge(who, model, e.server, op, e.limit())
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, e.limit()+1))
	if err != nil {
		if ctx.Err() != nil {
			return ctxErrorAbout(ctx, who, model, "reading the answer to "+op)
		}
		return &Error{Kind: Unreachable, Code: CodeUnreachable, Model: model, Err: err,
			Message: fmt.Sprintf("%s: reading the %s's answer to %s failed: %s", who, e.server, op, causeText(err))}
	}
	if int64(len(data)) > e.limit() {
		return tooLarge(who, model, e.server, op, e.limit())
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("%s: the %s answered HTTP %d to %s", who, e.server, resp.StatusCode, op)
		if s := serverMessage(data); s != "" {
			msg += ": " + s
		}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			msg += " (check the credentials given for it)"
		}
		return &Error{Kind: Status, Code: CodeStatus, Model: model, HTTPStatus: resp.StatusCode, Message: msg}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return &Error{Kind: Protocol, Code: CodeBadResponse, Model: model, Err: err,
				Message: fmt.Sprintf("%s: the %s's answer to %s is not the expected JSON: %v", who, e.server, op, err)}
		}
	}
	return nil
}

func tooLarge(who, model, server, op string, limit int64) *Error {
	return &Error{Kind: Protocol, Code: CodeResponseTooLarge, Model: model,
		Message: fmt.Sprintf("%s: the %s's answer to %s is larger than %d bytes; refused", who, server, op, limit)}
}

// ctxError is the Timeout or Canceled error for a context that ended.
func ctxError(ctx context.Context, ref Ref, while string) *Error {
	return ctxErrorAbout(ctx, ref.String(), ref.String(), while)
}

// ctxErrorAbout is ctxError for a message about who (a model's reference,
// or what a call that concerns no model does) and the error's Model.
func ctxErrorAbout(ctx context.Context, who, model, while string) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Kind: Timeout, Code: CodeTimeout, Model: model, Err: ctx.Err(),
			Message: fmt.Sprintf("%s: the time limit passed %s", who, while)}
	}
	return &Error{Kind: Canceled, Code: CodeCanceled, Model: model, Err: ctx.Err(),
		Message: fmt.Sprintf("%s: canceled %s", who, while)}
}

// causeText is a transport error without the URL net/http puts in front
// (it may carry a token in its query).
func causeText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// serverMessage pulls a short, single-line reason out of an error body:
// the "error.message" of OpenAI-style servers, the "data.message" (and
// "name") of OpenCode, or else the start of the text.
func serverMessage(data []byte) string {
	var v struct {
		Error any    `json:"error"`
		Name  string `json:"name"`
		Data  struct {
			Message string `json:"message"`
		} `json:"data"`
		Message string `json:"message"`
	}
	s := ""
	if json.Unmarshal(data, &v) == nil {
		switch e := v.Error.(type) {
		case map[string]any:
			if m, ok := e["message"].(string); ok {
				s = m
			}
		case string:
			s = e
		}
		if s == "" && v.Data.Message != "" {
			s = v.Data.Message
			if v.Name != "" {
				s = v.Name + ": " + s
			}
		}
		if s == "" {
			s = v.Message
		}
	}
	if s == "" {
		s = string(data)
	}
	return shorten(s, 300)
}

// shorten makes s one line of printable text of at most n runes.
func shorten(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
