package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SessionTitle is the title of the helper sessions the OpenCode backend
// creates. It is fixed, so that people and tools can recognise (and hide)
// these sessions.
const SessionTitle = "slim-fetch-secondary"

// Defaults of the OpenCode backend's clean-up.
const (
	// DefaultSettleWait is how long, after an abort, the backend waits for
	// the server to finish the aborted prompt before deleting the session.
	DefaultSettleWait = 5 * time.Second
	// DefaultRetryPause separates the tries of a session delete.
	DefaultRetryPause = 500 * time.Millisecond
	// DefaultCleanupTimeout bounds each abort or delete request.
	DefaultCleanupTimeout = 2 * time.Second
	// DeleteTries is how many times a session delete is tried.
	DeleteTries = 3
	// DefaultUsername is the basic-auth user name when only a password is
	// given.
	DefaultUsername = "opencode"
	// DefaultConfigTimeout bounds the request for the server's
	// configuration (SmallModel): it runs before any model, so it must not
	// eat into the model's own time.
	DefaultConfigTimeout = 5 * time.Second
	// MaxConfigBytes caps the server's configuration read by SmallModel;
	// a larger one is refused.
	MaxConfigBytes = 1 << 20
)

// OpenCode is a Backend that runs the model inside a running OpenCode
// server, with the provider credentials the user already configured there.
//
// Each Ask lists the server's tool ids, opens a child session of
// SessionID titled SessionTitle, sends one message with every listed tool
// turned off (a page must not be able to make the model run commands),
// joins the text parts of the reply, and deletes the session. When the
// context ends first, it aborts the session, waits up to SettleWait for
// the server to wind the prompt down (deleting a session that is still
// running leaves the server's loop writing into a session that is gone),
// and then deletes it. Ask returns only after that clean-up, so no helper
// session outlives the call unless the server refuses to delete it, which
// Reply.Cleanup reports.
type OpenCode struct {
	// BaseURL is the server's address ("http://127.0.0.1:4096").
	BaseURL string
	// SessionID is the calling session; the helper session is created as
	// its child, which keeps it out of the user's notifications. "" makes
	// a top-level session.
	SessionID string
	// Directory is the project directory the server should act for; when
	// set, every request carries it as ?directory=.
	Directory string
	// Username and Password are sent as HTTP basic auth when Password is
	// set; Username defaults to DefaultUsername.
	Username, Password string
	// Client sends the requests; nil means a client that follows no
	// redirects.
	Client *http.Client
	// SettleWait, RetryPause, CleanupTimeout and ConfigTimeout override
	// DefaultSettleWait, DefaultRetryPause, DefaultCleanupTimeout and
	// DefaultConfigTimeout when positive.
	SettleWait, RetryPause, CleanupTimeout, ConfigTimeout time.Duration
}

type ocModel struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
}

type ocPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type ocMessage struct {
	Model   ocModel         `json:"model"`
	Variant string          `json:"variant,omitempty"`
	System  string          `json:"system"`
	Tools   map[string]bool `json:"tools"`
	Parts   []ocPart        `json:"parts"`
}

type ocReply struct {
	Info struct {
		Error *struct {
			Name string `json:"name"`
			Data struct {
				Message string `json:"message"`
			} `json:"data"`
		} `json:"error"`
	} `json:"info"`
	Parts []ocPart `json:"parts"`
}

// SmallModel asks the server for its configuration (GET /config, with
// ?directory= and basic auth like every other call) and returns the model
// it names as small_model, the one the host itself uses for small tasks
// such as titles: the chain to try when the caller named none. The call
// has ConfigTimeout of its own and reads at most MaxConfigBytes.
//
// A configuration without small_model (or with an empty one) gives no
// model and no error. One whose small_model is not a provider/model
// reference gives no model and an *Error with CodeBadSmallModel saying so,
// which callers treat as no model configured; any other failure (the server unreachable
// or answering an error status, an answer that is not JSON, the time
// limit) is returned as it is.
func (o *OpenCode) SmallModel(ctx context.Context) ([]Ref, error) {
	const subject = "reading the OpenCode server's configuration"
	ep, err := o.endpoint(Ref{})
	if err != nil {
		return nil, &Error{Kind: Config, Code: CodeBadConfig, Err: err,
			Message: fmt.Sprintf("%s: the OpenCode server URL %q is not an http or https URL", subject, redact(o.BaseURL))}
	}
	ep.subject, ep.maxBytes = subject, MaxConfigBytes
	cctx, cancel := context.WithTimeout(ctx, orDefault(o.ConfigTimeout, DefaultConfigTimeout))
	defer cancel()
	var cfg struct {
		SmallModel json.RawMessage `json:"small_model"`
	}
	if err := ep.call(cctx, Ref{}, http.MethodGet, "/config", nil, &cfg); err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(cfg.SmallModel)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return nil, &Error{Kind: Config, Code: CodeBadSmallModel, Err: err,
			Message: fmt.Sprintf("%s: small_model is not a string (%s); no model taken from it", subject, shorten(string(raw), 80))}
	}
	if strings.TrimSpace(name) == "" {
		return nil, nil
	}
	ref, err := ParseRef(name)
	if err != nil {
		return nil, &Error{Kind: Config, Code: CodeBadSmallModel, Err: err,
			Message: fmt.Sprintf("%s: small_model: %v; no model taken from it", subject, err)}
	}
	return []Ref{ref}, nil
}

func (o *OpenCode) endpoint(ref Ref) (*endpoint, error) {
	ep, err := newEndpoint("OpenCode server", o.BaseURL, ref, o.Client)
	if err != nil {
		return nil, err
	}
	if o.Directory != "" {
		ep.query = url.Values{"directory": {o.Directory}}
	}
	if o.Password != "" {
		user := o.Username
		if user == "" {
			user = DefaultUsername
		}
		ep.auth = func(r *http.Request) { r.SetBasicAuth(user, o.Password) }
	}
	return ep, nil
}

// Ask runs one prompt in a fresh helper session; see OpenCode.
func (o *OpenCode) Ask(ctx context.Context, ref Ref, system, user string) (Reply, error) {
	ep, err := o.endpoint(ref)
	if err != nil {
		return Reply{}, err
	}
	if ctx.Err() != nil {
		return Reply{}, ctxError(ctx, ref, "before the model was asked")
	}
	// The tools are listed before the session exists, so that a server
	// without the listing leaves nothing behind. Without the list the model
	// would run with the host's tools on, so a failure here fails the
	// attempt.
	var ids []string
	if err := ep.call(ctx, ref, http.MethodGet, "/experimental/tool/ids", nil, &ids); err != nil {
		return Reply{}, err
	}
	tools := make(map[string]bool, len(ids))
	for _, id := range ids {
		tools[id] = false
	}
	create := map[string]string{"title": SessionTitle}
	if o.SessionID != "" {
		create["parentID"] = o.SessionID
	}
	var session struct {
		ID string `json:"id"`
	}
	if err := ep.call(ctx, ref, http.MethodPost, "/session", create, &session); err != nil {
		return Reply{}, err
	}
	if !validID(session.ID) {
		return Reply{}, &Error{Kind: Protocol, Code: CodeBadResponse, Model: ref.String(),
			Message: fmt.Sprintf("%s: the OpenCode server created a session without a usable id (%q)", ref, shorten(session.ID, 80))}
	}
	msg := ocMessage{
		Model:   ocModel{ProviderID: ref.Provider, ModelID: ref.Model},
		Variant: ref.Variant,
		System:  system,
		Tools:   tools,
		Parts:   []ocPart{{Type: "text", Text: user}},
	}
	reply, err := o.prompt(ctx, ep, ref, session.ID, msg)
	if derr := o.deleteSession(ctx, ep, ref, session.ID); derr != nil {
		reply.Cleanup = errors.Join(reply.Cleanup, derr)
	}
	return reply, err
}

// prompt sends msg and waits for the reply or for ctx to end. The message
// request itself does not end with ctx: on a timeout the server is told to
// abort, and the request is given SettleWait to come back, which is the
// sign that the server has stopped working on the session.
func (o *OpenCode) prompt(ctx context.Context, ep *endpoint, ref Ref, id string, msg ocMessage) (Reply, error) {
	mctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var reply ocReply
		err := ep.call(mctx, ref, http.MethodPost, "/session/"+id+"/message", msg, &reply)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{text: replyText(reply), err: replyError(ref, reply)}
	}()
	select {
	case r := <-done:
		return Reply{Text: r.text}, r.err
	case <-ctx.Done():
	}
	failure := ctxError(ctx, ref, "waiting for the answer; the helper session was aborted")
	var cleanup error

	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.cleanupTimeout())
	aerr := ep.call(actx, ref, http.MethodPost, "/session/"+id+"/abort", nil, nil)
	cancel()
	if aerr != nil {
		cleanup = &Error{Kind: Cleanup, Code: CodeAbortFailed, Model: ref.String(), Err: aerr,
			Message: fmt.Sprintf("%s: could not abort helper session %s: %v", ref, id, aerr)}
	}
	wait := time.NewTimer(o.settleWait())
	defer wait.Stop()
	select {
	case <-done:
	case <-wait.C:
		stop()
		<-done
		cleanup = errors.Join(cleanup, &Error{Kind: Cleanup, Code: CodeNotSettled, Model: ref.String(),
			Message: fmt.Sprintf("%s: helper session %s was still running %s after the abort; it was deleted anyway", ref, id, o.settleWait())})
	}
	return Reply{Cleanup: cleanup}, failure
}

// replyText joins the text parts of a reply.
func replyText(r ocReply) string {
	var texts []string
	for _, p := range r.Parts {
		if p.Type == "text" && strings.TrimSpace(p.Text) != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// replyError is the failure the server recorded on the reply (a provider
// error, an abort), if any.
func replyError(ref Ref, r ocReply) error {
	e := r.Info.Error
	if e == nil {
		return nil
	}
	why := e.Name
	if e.Data.Message != "" {
		if why != "" {
			why += ": "
		}
		why += e.Data.Message
	}
	if why == "" {
		why = "an unnamed error"
	}
	return &Error{Kind: Failed, Code: CodeModelError, Model: ref.String(),
		Message: fmt.Sprintf("%s: the model failed inside OpenCode: %s", ref, shorten(why, 300))}
}

// deleteSession deletes the helper session, trying DeleteTries times
// RetryPause apart. A session the server no longer knows counts as
// deleted.
func (o *OpenCode) deleteSession(ctx context.Context, ep *endpoint, ref Ref, id string) error {
	base := context.WithoutCancel(ctx)
	var last error
	for try := 1; try <= DeleteTries; try++ {
		if try > 1 {
			time.Sleep(o.retryPause())
		}
		dctx, cancel := context.WithTimeout(base, o.cleanupTimeout())
		err := ep.call(dctx, ref, http.MethodDelete, "/session/"+id, nil, nil)
		cancel()
		if e, ok := AsError(err); err == nil || (ok && e.HTTPStatus == http.StatusNotFound) {
			return nil
		}
		last = err
	}
	return &Error{Kind: Cleanup, Code: CodeDeleteFailed, Model: ref.String(), Err: last,
		Message: fmt.Sprintf("%s: could not delete helper session %s after %d tries: %v", ref, id, DeleteTries, last)}
}

// validID accepts the ids the server makes ("ses_" and base62), and
// nothing that could change the path it is put in.
func validID(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func (o *OpenCode) settleWait() time.Duration { return orDefault(o.SettleWait, DefaultSettleWait) }
func (o *OpenCode) retryPause() time.Duration { return orDefault(o.RetryPause, DefaultRetryPause) }
func (o *OpenCode) cleanupTimeout() time.Duration {
	return orDefault(o.CleanupTimeout, DefaultCleanupTimeout)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
