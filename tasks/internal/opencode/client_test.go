package opencode

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
)

func TestNewRefusesAConfigItCannotUse(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"empty URL", Config{}},
		{"no scheme", Config{BaseURL: "127.0.0.1:4096"}},
		{"another scheme", Config{BaseURL: "ftp://127.0.0.1:4096"}},
		{"no host", Config{BaseURL: "http:///session"}},
		{"opaque", Config{BaseURL: "http:127.0.0.1"}},
		{"a query", Config{BaseURL: "http://127.0.0.1:4096/?directory=/x"}},
		{"an empty query", Config{BaseURL: "http://127.0.0.1:4096/?"}},
		{"a fragment", Config{BaseURL: "http://127.0.0.1:4096/#x"}},
		{"credentials in the URL", Config{BaseURL: "http://opencode:pw@127.0.0.1:4096"}},
		{"not a URL", Config{BaseURL: "http://[::1"}},
		{"a negative bound", Config{BaseURL: "http://127.0.0.1:4096", MaxBody: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if c != nil {
				t.Errorf("New returned a client")
			}
			wantErr(t, err, Usage, CodeBadConfig, 0, "")
			if Authoritative(err) || MayHaveBeenAdmitted(err) {
				t.Errorf("a Usage error counts as sent")
			}
		})
	}
	for _, ok := range []string{"http://127.0.0.1:4096", "https://host.example/", "HTTP://127.0.0.1:1/prefix/"} {
		if _, err := New(Config{BaseURL: ok}); err != nil {
			t.Errorf("New(%q): %v", ok, err)
		}
	}
}

func TestABasePathPrefixIsKept(t *testing.T) {
	fake := opencodefake.New(opencodefake.Options{Version: "9.9.9"})
	srv := httptest.NewServer(http.StripPrefix("/oc", fake.Handler()))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { fake.Close() })
	for _, base := range []string{srv.URL + "/oc", srv.URL + "/oc/"} {
		c := newClient(t, Config{BaseURL: base})
		h, err := c.Health(testCtx(t))
		if err != nil || !h.Healthy || h.Version != "9.9.9" {
			t.Errorf("Health via %s = %+v, %v", base, h, err)
		}
	}
	if calls := fake.CallsTo("GET", "/global/health"); len(calls) != 2 {
		t.Errorf("the fake saw %d health calls under the prefix, want 2", len(calls))
	}
}

// everyCall runs each of the client's calls once against session id.
func everyCall(t *testing.T, c *Client, id string) {
	t.Helper()
	ctx := testCtx(t)
	steps := []struct {
		name string
		run  func() error
	}{
		{"health", func() error { _, err := c.Health(ctx); return err }},
		{"create", func() error { _, err := c.CreateSession(ctx, id, "child"); return err }},
		{"get", func() error { _, err := c.GetSession(ctx, id); return err }},
		{"children", func() error { _, err := c.Children(ctx, id); return err }},
		{"todos", func() error { _, err := c.Todos(ctx, id); return err }},
		{"messages", func() error { _, err := c.Messages(ctx, id, 5); return err }},
		{"prompt_async", func() error { return c.PromptAsync(ctx, id, textPrompt("go")) }},
		{"message", func() error { p := textPrompt("note"); p.NoReply = true; return c.SendMessage(ctx, id, p) }},
		{"abort", func() error { _, err := c.Abort(ctx, id); return err }},
		{"status", func() error { _, err := c.Status(ctx); return err }},
	}
	for _, st := range steps {
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
}

func TestEveryCallNamesTheDirectory(t *testing.T) {
	for _, dir := range []string{"/proj/a", "/home/me/my project/ä%20&x=1\nnext"} {
		t.Run(dir, func(t *testing.T) {
			s, c := startFake(t, opencodefake.Options{Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{DurationMS: 1}}}, Config{Directory: dir})
			seed(t, s, opencodefake.SessionSeed{ID: "ses_dir"})
			everyCall(t, c, "ses_dir")
			calls := s.Calls()
			if len(calls) != 10 {
				t.Fatalf("logged %d calls, want 10", len(calls))
			}
			for _, call := range calls {
				if got := call.Query["directory"]; len(got) != 1 || got[0] != dir {
					t.Errorf("%s %s: ?directory= %q, want %q", call.Method, call.Path, got, dir)
				}
				header, err := url.PathUnescape(call.Header["X-Opencode-Directory"])
				if err != nil || header != dir {
					t.Errorf("%s %s: x-opencode-directory %q decodes to %q (%v), want %q", call.Method, call.Path, call.Header["X-Opencode-Directory"], header, err, dir)
				}
				if call.Header["Accept"] != "application/json" {
					t.Errorf("%s %s: Accept %q", call.Method, call.Path, call.Header["Accept"])
				}
			}
		})
	}
}

func TestNoDirectoryIsSentWhenNoneIsSet(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{DurationMS: 1}}}, Config{})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_nodir"})
	everyCall(t, c, "ses_nodir")
	for _, call := range s.Calls() {
		if call.Query.Has("directory") || call.Header["X-Opencode-Directory"] != "" {
			t.Errorf("%s %s sent a directory: query %v, header %q", call.Method, call.Path, call.Query, call.Header["X-Opencode-Directory"])
		}
	}
}

func TestBasicAuth(t *testing.T) {
	const wantCreds = "HTTP 401: the OpenCode server wants credentials: set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME when the user is not \"opencode\")"
	const refused = "HTTP 401: the OpenCode server wants credentials and refused the ones sent: check OPENCODE_SERVER_PASSWORD and OPENCODE_SERVER_USERNAME"
	tests := []struct {
		name       string
		serverUser string
		user, pass string
		wantMsg    string // "" when the call passes
		wantUser   string // the user name the fake saw
	}{
		{"no credentials", "", "", "", wantCreds, ""},
		{"the right password, default user", "", "", "s3cret", "", "opencode"},
		{"a wrong password", "", "", "nope", refused, "opencode"},
		{"a custom user", "bob", "bob", "s3cret", "", "bob"},
		{"the default user where another is set", "bob", "", "s3cret", refused, "opencode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := startFake(t, opencodefake.Options{Username: tt.serverUser, Password: "s3cret"}, Config{Username: tt.user, Password: tt.pass})
			_, err := c.Status(testCtx(t))
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Status: %v", err)
				}
			} else {
				wantErr(t, err, Auth, CodeAuth, 401, tt.wantMsg)
				if !Authoritative(err) || MayHaveBeenAdmitted(err) {
					t.Errorf("an auth refusal is not authoritative")
				}
			}
			calls := s.Calls()
			if len(calls) != 1 || calls[0].AuthUser != tt.wantUser {
				t.Errorf("calls = %+v, want one presenting user %q", calls, tt.wantUser)
			}
		})
	}
}

func TestSessionIDsAreEscapedAsOnePathSegment(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{}, Config{Directory: "/proj"})
	for _, id := range []string{"ses_a/../b", "ses_a?directory=/elsewhere", "ses_a#frag", "ses_a%2Fb", "ses a b", "ses_ä"} {
		t.Run(id, func(t *testing.T) {
			_, err := c.GetSession(testCtx(t), id)
			wantErr(t, err, NotFound, CodeNotFound, 404, "HTTP 404: Session not found: "+id)
			calls := s.Calls()
			last := calls[len(calls)-1]
			if last.Path != "/session/"+id || last.Query.Get("directory") != "/proj" || len(last.Query) != 1 {
				t.Errorf("the fake saw path %q query %v, want /session/%s and only the directory", last.Path, last.Query, id)
			}
		})
	}
	before := len(s.Calls())
	for _, id := range []string{"", ".", ".."} {
		_, err := c.GetSession(testCtx(t), id)
		wantErr(t, err, Usage, CodeBadID, 0, "")
		if err := c.PromptAsync(testCtx(t), id, textPrompt("x")); err == nil {
			t.Errorf("PromptAsync(%q) was sent", id)
		}
	}
	if after := len(s.Calls()); after != before {
		t.Errorf("%d calls were sent for ids that are not ids", after-before)
	}
}

func TestPromptBodiesHoldOnlyTheFieldsSet(t *testing.T) {
	tests := []struct {
		name   string
		prompt Prompt
		want   string
	}{
		{"a revive", Prompt{MessageID: "msg_00000000000aRevive0000001", Agent: "fixer", Parts: []PromptPart{{Type: "text", Text: "go on"}}},
			`{"messageID":"msg_00000000000aRevive0000001","agent":"fixer","parts":[{"type":"text","text":"go on"}]}`},
		{"a launch", Prompt{Agent: "explorer", Parts: []PromptPart{{Type: "text", Text: "look"}}},
			`{"agent":"explorer","parts":[{"type":"text","text":"look"}]}`},
		{"a queued message", Prompt{Agent: "explorer", NoReply: true, Parts: []PromptPart{{Type: "text", Text: "note"}}},
			`{"agent":"explorer","noReply":true,"parts":[{"type":"text","text":"note"}]}`},
		{"a model and an internal part", Prompt{Agent: "a", Model: &ModelRef{ProviderID: "p", ModelID: "m"}, Parts: []PromptPart{{
			Type: "text", Text: "done <!-- SLIM_INTERNAL_INITIATOR -->", Synthetic: true,
			Metadata: map[string]any{"oh-my-opencode-slim.internalInitiator": true},
		}}}, `{"agent":"a","model":{"providerID":"p","modelID":"m"},"parts":[{"type":"text","text":"done <!-- SLIM_INTERNAL_INITIATOR -->","synthetic":true,"metadata":{"oh-my-opencode-slim.internalInitiator":true}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := startFake(t, opencodefake.Options{Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{DurationMS: 1}}}, Config{})
			seed(t, s, opencodefake.SessionSeed{ID: "ses_body"})
			if err := c.PromptAsync(testCtx(t), "ses_body", tt.prompt); err != nil {
				t.Fatalf("PromptAsync: %v", err)
			}
			if err := c.SendMessage(testCtx(t), "ses_body", tt.prompt); tt.prompt.MessageID == "" && err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			for _, path := range []string{"/session/ses_body/prompt_async", "/session/ses_body/message"} {
				calls := s.CallsTo("POST", path)
				if len(calls) != 1 {
					t.Fatalf("%d calls to %s", len(calls), path)
				}
				if calls[0].Body != tt.want {
					t.Errorf("%s body\n got %s\nwant %s", path, calls[0].Body, tt.want)
				}
				if calls[0].Header["Content-Type"] != "application/json" {
					t.Errorf("%s Content-Type %q", path, calls[0].Header["Content-Type"])
				}
			}
		})
	}
}

func TestCreateSession(t *testing.T) {
	tests := []struct {
		name, parent, title string
		wantBody            string
	}{
		{"a child with a title", "ses_parent", "explore the code", `{"parentID":"ses_parent","title":"explore the code"}`},
		{"a title only", "", "solo", `{"title":"solo"}`},
		{"nothing set", "", "", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := startFake(t, opencodefake.Options{}, Config{Directory: "/proj/x"})
			ses, err := c.CreateSession(testCtx(t), tt.parent, tt.title)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(ses.ID, "ses_") || ses.ParentID != tt.parent || ses.Directory != "/proj/x" || ses.Time.Created == 0 {
				t.Errorf("session = %+v", ses)
			}
			if tt.title != "" && ses.Title != tt.title {
				t.Errorf("title = %q, want %q", ses.Title, tt.title)
			}
			if calls := s.CallsTo("POST", "/session"); len(calls) != 1 || calls[0].Body != tt.wantBody {
				t.Errorf("calls = %+v, want one with body %s", calls, tt.wantBody)
			}
			got, err := c.GetSession(testCtx(t), ses.ID)
			if err != nil || got.ID != ses.ID || got.Title != ses.Title {
				t.Errorf("GetSession = %+v, %v", got, err)
			}
		})
	}
}

func TestReadsOfASession(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{}, Config{})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_parent", Todos: []opencodefake.Todo{
		{ID: "1", Content: "read", Status: "completed", Priority: "high"}, {ID: "2", Content: "write", Status: "in_progress"},
	}, Messages: []opencodefake.Message{
		{Info: opencodefake.MessageInfo{Role: "user", Agent: "build"}, Parts: []opencodefake.Part{{Type: "text", Text: "one"}}},
		{Info: opencodefake.MessageInfo{Role: "assistant", Finish: "stop", Time: opencodefake.MessageTime{Completed: 5}}, Parts: []opencodefake.Part{{Type: "text", Text: "two"}}},
		{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "three"}}},
	}})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_kid1", ParentID: "ses_parent"})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_kid2", ParentID: "ses_parent"})
	ctx := testCtx(t)

	kids, err := c.Children(ctx, "ses_parent")
	if err != nil || len(kids) != 2 || kids[0].ID != "ses_kid1" || kids[1].ParentID != "ses_parent" {
		t.Errorf("Children = %+v, %v", kids, err)
	}
	if none, err := c.Children(ctx, "ses_kid1"); err != nil || none == nil || len(none) != 0 {
		t.Errorf("Children of a leaf = %#v, %v; want an empty list", none, err)
	}
	todos, err := c.Todos(ctx, "ses_parent")
	if err != nil || len(todos) != 2 || todos[0] != (Todo{ID: "1", Content: "read", Status: "completed"}) || todos[1].Status != "in_progress" {
		t.Errorf("Todos = %+v, %v", todos, err)
	}
	all, err := c.Messages(ctx, "ses_parent", 0)
	if err != nil || len(all) != 3 || all[0].Info.Role != "user" || all[0].Info.Agent != "build" || all[1].Parts[0].Text != "two" || all[1].Info.Time.Completed != 5 {
		t.Fatalf("Messages = %+v, %v", all, err)
	}
	last2, err := c.Messages(ctx, "ses_parent", 2)
	if err != nil || len(last2) != 2 || last2[0].Info.ID != all[1].Info.ID || last2[1].Info.ID != all[2].Info.ID {
		t.Errorf("Messages(limit 2) = %+v, %v; want the last two of %+v", last2, err, all)
	}
	calls := s.CallsTo("GET", "/session/ses_parent/message")
	if len(calls) != 2 || calls[0].Query.Has("limit") || calls[1].Query.Get("limit") != "2" {
		t.Errorf("message calls = %+v, want no limit and then limit=2", calls)
	}

	if err := s.DeleteSession("ses_kid2"); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"get":      func() error { _, err := c.GetSession(ctx, "ses_kid2"); return err },
		"children": func() error { _, err := c.Children(ctx, "ses_kid2"); return err },
		"todos":    func() error { _, err := c.Todos(ctx, "ses_kid2"); return err },
		"messages": func() error { _, err := c.Messages(ctx, "ses_kid2", 0); return err },
		"prompt":   func() error { return c.PromptAsync(ctx, "ses_kid2", textPrompt("x")) },
	} {
		err := call()
		wantErr(t, err, NotFound, CodeNotFound, 404, "HTTP 404: Session not found: ses_kid2")
		if !Authoritative(err) {
			t.Errorf("%s: a 404 is not authoritative", name)
		}
	}
}

func TestAbort(t *testing.T) {
	tests := []struct {
		name   string
		abort  *opencodefake.Abort
		fault  *opencodefake.Fault
		want   bool
		kind   Kind
		code   string
		status int
		msg    string
	}{
		{name: "confirmed", want: true},
		{name: "not confirmed", abort: &opencodefake.Abort{Reply: opencodefake.AbortFalse}, want: false},
		{name: "refused with 500", abort: &opencodefake.Abort{Reply: opencodefake.AbortError},
			kind: Unknown, code: CodeServerError, status: 500, msg: "HTTP 500: abort failed for session ses_run"},
		{name: "null", fault: ptr(respond("POST", "/session/*/abort", 200, "null")),
			kind: Malformed, code: CodeMalformed, status: 200, msg: "invalid session abort response"},
		{name: "a string", fault: ptr(respond("POST", "/session/*/abort", 200, `"true"`)),
			kind: Malformed, code: CodeMalformed, status: 200, msg: "invalid session abort response"},
		{name: "an object", fault: ptr(respond("POST", "/session/*/abort", 200, `{"ok":true}`)),
			kind: Malformed, code: CodeMalformed, status: 200, msg: "invalid session abort response"},
		{name: "empty", fault: ptr(respond("POST", "/session/*/abort", 200, "")),
			kind: Malformed, code: CodeMalformed, status: 200, msg: "invalid session abort response"},
		{name: "an error envelope", fault: ptr(respond("POST", "/session/*/abort", 200, `{"error":{"message":"no such run"}}`)),
			kind: Rejected, code: CodeEnvelope, status: 200, msg: "HTTP 200: no such run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &opencodefake.Script{DefaultRun: &opencodefake.Run{Hang: true}}
			if tt.abort != nil {
				sc.Aborts = []opencodefake.Abort{*tt.abort}
			}
			if tt.fault != nil {
				sc.Faults = []opencodefake.Fault{*tt.fault}
			}
			s, c := startFake(t, opencodefake.Options{Script: sc}, Config{})
			seed(t, s, opencodefake.SessionSeed{ID: "ses_run"})
			if err := c.PromptAsync(testCtx(t), "ses_run", textPrompt("run")); err != nil {
				t.Fatal(err)
			}
			got, err := c.Abort(testCtx(t), "ses_run")
			if tt.kind == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Abort = %v, %v; want %v", got, err, tt.want)
				}
			} else {
				wantErr(t, err, tt.kind, tt.code, tt.status, tt.msg)
			}
			if calls := s.CallsTo("POST", "/session/ses_run/abort"); len(calls) != 1 || calls[0].Body != "" {
				t.Errorf("abort calls = %+v, want one without a body", calls)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestAnswersAreClassified pins the classification the engine decides
// remote writes on, for a prompt.
func TestAnswersAreClassified(t *testing.T) {
	const path = "/session/*/prompt_async"
	tests := []struct {
		name     string
		fault    opencodefake.Fault
		kind     Kind // "" for accepted
		code     string
		status   int
		msg      string
		admitted bool // the fake recorded the prompt
	}{
		{name: "204 is accepted", fault: respond("POST", path, 204, ""), admitted: false},
		{name: "a 200 with any body but an error envelope is accepted", fault: respond("POST", path, 200, "not json")},
		{name: "a null error is no envelope", fault: respond("POST", path, 200, `{"error":null,"ok":true}`)},
		{name: "409 with a server error body", fault: respond("POST", path, 409, `{"name":"ConflictError","data":{"message":"Message msg_1 already exists"}}`),
			kind: Rejected, code: CodeRejected, status: 409, msg: "HTTP 409: Message msg_1 already exists"},
		{name: "400 with an error object", fault: respond("POST", path, 400, `{"error":{"message":"bad part"}}`),
			kind: Rejected, code: CodeRejected, status: 400, msg: "HTTP 400: bad part"},
		{name: "422 with an error string", fault: respond("POST", path, 422, `{"error":"unprocessable"}`),
			kind: Rejected, code: CodeRejected, status: 422, msg: "HTTP 422: unprocessable"},
		{name: "400 with a message", fault: respond("POST", path, 400, `{"message":"Expected an array"}`),
			kind: Rejected, code: CodeRejected, status: 400, msg: "HTTP 400: Expected an array"},
		{name: "400 with an unknown body", fault: respond("POST", path, 400, `{"_tag":"BadRequest"}`),
			kind: Rejected, code: CodeRejected, status: 400, msg: "HTTP 400"},
		{name: "418 with text", fault: respond("POST", path, 418, "I am a teapot"),
			kind: Rejected, code: CodeRejected, status: 418, msg: "HTTP 418"},
		{name: "404", fault: respond("POST", path, 404, `{"name":"NotFoundError","data":{"message":"Session not found: x"}}`),
			kind: NotFound, code: CodeNotFound, status: 404, msg: "HTTP 404: Session not found: x"},
		{name: "403", fault: respond("POST", path, 403, ""), kind: Auth, code: CodeAuth, status: 403},
		{name: "500 with a server error body", fault: respond("POST", path, 500, `{"name":"UnknownError","data":{"message":"boom"}}`),
			kind: Unknown, code: CodeServerError, status: 500, msg: "HTTP 500: boom"},
		{name: "503 without a body", fault: respond("POST", path, 503, ""),
			kind: Unknown, code: CodeServerError, status: 503, msg: "HTTP 503"},
		{name: "a redirect is not followed", fault: respond("POST", path, 307, ""),
			kind: Unknown, code: CodeStatus, status: 307, msg: "HTTP 307"},
		{name: "a 2xx error envelope with a message", fault: respond("POST", path, 200, `{"error":{"name":"BusyError","message":"session is busy"}}`),
			kind: Rejected, code: CodeEnvelope, status: 200, msg: "HTTP 200: session is busy"},
		{name: "a 2xx error envelope without one", fault: respond("POST", path, 202, `{"error":{"code":7}}`),
			kind: Rejected, code: CodeEnvelope, status: 202, msg: `HTTP 202: {"code":7}`},
		{name: "a dropped connection", fault: opencodefake.Fault{Method: "POST", Path: path, Drop: true},
			kind: Unknown, code: CodeTransport},
		{name: "a connection dropped after the prompt was admitted", fault: opencodefake.Fault{Method: "POST", Path: path, DropAfter: true},
			kind: Unknown, code: CodeTransport, admitted: true},
		{name: "without a fault the prompt is admitted", fault: opencodefake.Fault{Method: "GET", Path: "/unrelated", DelayMS: 1}, admitted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := startFake(t, opencodefake.Options{Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{DurationMS: 1}}}, Config{})
			seed(t, s, opencodefake.SessionSeed{ID: "ses_w"})
			addFaults(t, s, tt.fault)
			err := c.PromptAsync(testCtx(t), "ses_w", textPrompt("write"))
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("PromptAsync: %v", err)
				}
			} else {
				wantErr(t, err, tt.kind, tt.code, tt.status, tt.msg)
				wantAuthoritative := tt.kind == Rejected || tt.kind == NotFound || tt.kind == Auth
				if Authoritative(err) != wantAuthoritative || MayHaveBeenAdmitted(err) != (tt.kind == Unknown) || Timeout(err) {
					t.Errorf("Authoritative %v, MayHaveBeenAdmitted %v, Timeout %v for %s", Authoritative(err), MayHaveBeenAdmitted(err), Timeout(err), tt.kind)
				}
			}
			msgs, err := c.Messages(testCtx(t), "ses_w", 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := LastUserID(msgs) != ""; got != tt.admitted {
				t.Errorf("the fake recorded the prompt: %v, want %v", got, tt.admitted)
			}
		})
	}
}

func TestAHeldCallTimesOutOnItsContextAlone(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{Script: &opencodefake.Script{DefaultRun: &opencodefake.Run{DurationMS: 1}}}, Config{})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_h"})
	addFaults(t, s, opencodefake.Fault{Method: "POST", Path: "/session/*/prompt_async", Hold: "h"})
	ctx, cancel := context.WithTimeout(testCtx(t), 150*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := c.PromptAsync(ctx, "ses_h", textPrompt("held"))
	took := time.Since(began)
	wantErr(t, err, Unknown, CodeTimeout, 0, "OpenCode POST /session/ses_h/prompt_async timed out")
	if !Timeout(err) || !MayHaveBeenAdmitted(err) || Authoritative(err) {
		t.Errorf("a timeout: Timeout %v, MayHaveBeenAdmitted %v, Authoritative %v", Timeout(err), MayHaveBeenAdmitted(err), Authoritative(err))
	}
	if took < 150*time.Millisecond || took > 3*time.Second {
		t.Errorf("gave up after %v, want the context's 150ms", took)
	}
	// The server still acts on a request it received: that is why a
	// timeout may have been admitted.
	if err := s.Release("h", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitCalls(testCtx(t), "POST", "/session/*/prompt_async", 1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		msgs, err := c.Messages(testCtx(t), "ses_h", 0)
		if err == nil && LastUserID(msgs) != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held prompt was never carried out: %+v, %v", msgs, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestACanceledCallIsNotATimeout(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{}, Config{})
	addFaults(t, s, opencodefake.Fault{Path: "/global/health", Hold: "h"})
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		_ = s.WaitHeld(testCtx(t), "h", 1)
		cancel()
	}()
	_, err := c.Health(ctx)
	wantErr(t, err, Unknown, CodeCanceled, 0, "OpenCode GET /global/health was canceled")
	if Timeout(err) || !MayHaveBeenAdmitted(err) {
		t.Errorf("a cancel: Timeout %v, MayHaveBeenAdmitted %v", Timeout(err), MayHaveBeenAdmitted(err))
	}
}

func TestAServerThatIsNotThereIsATransportError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newClient(t, Config{BaseURL: "http://" + addr})
	_, err = c.Abort(testCtx(t), "ses_x")
	e := wantErr(t, err, Unknown, CodeTransport, 0, "")
	if !strings.HasPrefix(e.Message, "OpenCode POST /session/ses_x/abort at http://"+addr+" failed: ") {
		t.Errorf("message %q", e.Message)
	}
}

func TestPendingQuestionsAndPermissionsNameTheirSessions(t *testing.T) {
	s, c := startFake(t, opencodefake.Options{}, Config{Directory: "/proj"})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_a"})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_b"})
	ctx := testCtx(t)
	if qs, err := c.Questions(ctx); err != nil || qs == nil || len(qs) != 0 {
		t.Fatalf("Questions with none asked = %#v, %v; want an empty list", qs, err)
	}
	q, err := s.AskQuestion("ses_a", "Which database?")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.AskPermission("ses_b", "bash", "make deploy")
	if err != nil {
		t.Fatal(err)
	}
	if qs, err := c.Questions(ctx); err != nil || len(qs) != 1 || qs[0] != (Pending{ID: q.ID, SessionID: "ses_a"}) {
		t.Errorf("Questions = %+v, %v", qs, err)
	}
	if ps, err := c.Permissions(ctx); err != nil || len(ps) != 1 || ps[0] != (Pending{ID: p.ID, SessionID: "ses_b"}) {
		t.Errorf("Permissions = %+v, %v", ps, err)
	}
	for _, path := range []string{"/question", "/permission"} {
		if calls := s.CallsTo("GET", path); len(calls) == 0 || calls[len(calls)-1].Query.Get("directory") != "/proj" {
			t.Errorf("%s calls %+v, want the directory named", path, calls)
		}
	}
}

func TestMalformedAnswers(t *testing.T) {
	tests := []struct {
		name  string
		fault opencodefake.Fault
		call  func(*Client) error
		msg   string
	}{
		{"broken JSON for a session", opencodefake.Fault{Path: "/session/*", Malformed: true},
			func(c *Client) error { _, err := c.GetSession(testCtx(t), "ses_m"); return err }, "invalid session response"},
		{"a session without an id", respond("GET", "/session/*", 200, `{"title":"x"}`),
			func(c *Client) error { _, err := c.GetSession(testCtx(t), "ses_m"); return err }, "invalid session response"},
		{"a list for a session", respond("POST", "/session", 200, `[]`),
			func(c *Client) error { _, err := c.CreateSession(testCtx(t), "", ""); return err }, "invalid session response"},
		{"an object for children", respond("GET", "/session/*/children", 200, `{}`),
			func(c *Client) error { _, err := c.Children(testCtx(t), "ses_m"); return err }, "invalid session children response"},
		{"a null child", respond("GET", "/session/*/children", 200, `[null]`),
			func(c *Client) error { _, err := c.Children(testCtx(t), "ses_m"); return err }, "invalid session children response"},
		{"a todo of the wrong type", respond("GET", "/session/*/todo", 200, `[{"id":1}]`),
			func(c *Client) error { _, err := c.Todos(testCtx(t), "ses_m"); return err }, "invalid session todo response"},
		{"broken JSON for messages", opencodefake.Fault{Path: "/session/*/message", Malformed: true},
			func(c *Client) error { _, err := c.Messages(testCtx(t), "ses_m", 0); return err }, "invalid session message response"},
		{"a message without a role", respond("GET", "/session/*/message", 200, `[{"info":{"id":"msg_1"},"parts":[]}]`),
			func(c *Client) error { _, err := c.Messages(testCtx(t), "ses_m", 0); return err }, "invalid session message response"},
		{"a synchronous answer that is not a message", respond("POST", "/session/*/message", 200, `true`),
			func(c *Client) error { return c.SendMessage(testCtx(t), "ses_m", textPrompt("x")) }, "invalid session message response"},
		{"a question that names no session", respond("GET", "/question", 200, `[{"id":"que_1","questions":[]}]`),
			func(c *Client) error { _, err := c.Questions(testCtx(t)); return err }, "invalid question response"},
		{"an object for the permissions", respond("GET", "/permission", 200, `{}`),
			func(c *Client) error { _, err := c.Permissions(testCtx(t)); return err }, "invalid permission response"},
		{"a health answer of the wrong type", respond("GET", "/global/health", 200, `{"healthy":"yes"}`),
			func(c *Client) error { _, err := c.Health(testCtx(t)); return err }, "invalid health response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c := startFake(t, opencodefake.Options{}, Config{})
			seed(t, s, opencodefake.SessionSeed{ID: "ses_m"})
			addFaults(t, s, tt.fault)
			err := tt.call(c)
			wantErr(t, err, Malformed, CodeMalformed, 200, tt.msg)
			if Authoritative(err) || MayHaveBeenAdmitted(err) {
				t.Errorf("Malformed counts as authoritative or as maybe admitted")
			}
		})
	}
}

func TestBodiesAreReadWithABound(t *testing.T) {
	long := strings.Repeat("x", 2000)
	s, c := startFake(t, opencodefake.Options{}, Config{MaxBody: 1024})
	seed(t, s, opencodefake.SessionSeed{ID: "ses_big", Messages: []opencodefake.Message{
		{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: long}}},
	}})
	_, err := c.Messages(testCtx(t), "ses_big", 0)
	wantErr(t, err, Malformed, CodeTooLarge, 200, "invalid session message response: the body is larger than 1024 bytes")

	addFaults(t, s, respond("POST", "/session/*/prompt_async", 409, `{"error":{"message":"`+long+`"}}`))
	err = c.PromptAsync(testCtx(t), "ses_big", textPrompt("x"))
	wantErr(t, err, Rejected, CodeRejected, 409, "HTTP 409")

	if _, err := c.GetSession(testCtx(t), "ses_big"); err != nil {
		t.Errorf("a small answer under the bound: %v", err)
	}
}

func TestHostTextIsClipped(t *testing.T) {
	long := strings.Repeat("é", 800) // 1600 bytes
	got := hostText([]byte(`{"message":"` + long + `"}`))
	if len(got) > maxText+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("clipped text of %d bytes: %q…", len(got), got[:20])
	}
}

func TestDecodeMessages(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		ok    bool
		check func(t *testing.T, msgs []Message)
	}{
		{name: "an empty transcript", body: `[]`, ok: true, check: func(t *testing.T, msgs []Message) {
			if msgs == nil || len(msgs) != 0 {
				t.Errorf("= %#v, want an empty list", msgs)
			}
		}},
		{name: "unknown fields are ignored, missing ones are fine", ok: true,
			body: `[{"info":{"id":"msg_1","role":"assistant","sessionID":"ses_1","cost":0.1,"tokens":{"input":1},"time":{"created":1,"completed":2},"finish":"stop",` +
				`"error":{"name":"APIError","data":{"message":"overloaded","statusCode":529,"isRetryable":true}}},` +
				`"parts":[{"id":"prt_1","type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"ls"},"output":"x","time":{"start":1,"end":2}}},` +
				`{"type":"text","text":"hi","synthetic":true,"metadata":{"k":{"n":1}},"time":{"start":1}}]},` +
				`{"info":{"role":""}}]`,
			check: func(t *testing.T, msgs []Message) {
				m := msgs[0]
				if len(msgs) != 2 || m.Info.ID != "msg_1" || m.Info.Error.Data.Message != "overloaded" || m.Parts[0].State.Status != "completed" ||
					m.Parts[1].Metadata["k"] == nil || !m.Parts[1].Synthetic || msgs[1].Info.Role != "" || msgs[1].Parts != nil {
					t.Errorf("= %+v", msgs)
				}
			}},
		{name: "null", body: `null`},
		{name: "an object", body: `{"info":{"role":"user"}}`},
		{name: "a null message", body: `[null]`},
		{name: "a message that is a number", body: `[1]`},
		{name: "no info", body: `[{"parts":[]}]`},
		{name: "a null info", body: `[{"info":null}]`},
		{name: "no role", body: `[{"info":{"id":"msg_1"}}]`},
		{name: "a null role", body: `[{"info":{"role":null}}]`},
		{name: "a role that is not a string", body: `[{"info":{"role":1}}]`},
		{name: "parts that are not a list", body: `[{"info":{"role":"user"},"parts":{}}]`},
		{name: "a good message after a bad one", body: `[{"info":{}},{"info":{"role":"user"}}]`},
		{name: "broken JSON", body: `[{"info":{"role":"user"}}`},
		{name: "empty", body: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := decodeMessages([]byte(tt.body))
			if !tt.ok {
				if err == nil {
					t.Fatalf("accepted %s as %+v", tt.body, msgs)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeMessages: %v", err)
			}
			tt.check(t, msgs)
		})
	}
}

func TestAnAnswerCutShortMayHaveBeenAdmitted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"info":`)) // and the connection closes short of 100 bytes
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, Config{BaseURL: srv.URL})
	err := c.SendMessage(testCtx(t), "ses_cut", textPrompt("x"))
	wantErr(t, err, Unknown, CodeTransport, 200, "")
	if !MayHaveBeenAdmitted(err) {
		t.Error("a cut answer to a write counts as not admitted")
	}
}
