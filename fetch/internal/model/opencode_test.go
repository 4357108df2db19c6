package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// One Ask lists the tools, opens a child session of the caller titled
// SessionTitle, sends one message with every tool off, joins the reply's
// text parts, and deletes the session exactly once.
func TestOpenCodeRunsOnePromptInAHelperSession(t *testing.T) {
	srv := newOC(t)
	srv.byModel["small"] = ocText("The default port", "is 8080.")
	b := srv.backend()
	reply, err := b.Ask(context.Background(), Ref{"prov", "small", "fast"}, "SYS", "USER")
	if err != nil || reply.Text != "The default port\nis 8080." || reply.Cleanup != nil {
		t.Fatalf("Ask = %+v, %v", reply, err)
	}
	want := []string{"GET /experimental/tool/ids", "POST /session", "POST /session/ses_1/message", "END /session/ses_1/message", "DELETE /session/ses_1"}
	if got := srv.calls(); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	recs := srv.records()
	if c := recs[1].Body; c["title"] != SessionTitle || c["parentID"] != "ses_caller" || len(c) != 2 {
		t.Fatalf("session create body %v", c)
	}
	m := recs[2].Body
	wantTools := map[string]any{"bash": false, "read": false, "webfetch": false, "task": false}
	if !reflect.DeepEqual(m["tools"], wantTools) {
		t.Fatalf("tools %v, want every listed tool off", m["tools"])
	}
	if !reflect.DeepEqual(m["model"], map[string]any{"providerID": "prov", "modelID": "small"}) || m["variant"] != "fast" || m["system"] != "SYS" {
		t.Fatalf("message body %v", m)
	}
	if !reflect.DeepEqual(m["parts"], []any{map[string]any{"type": "text", "text": "USER"}}) {
		t.Fatalf("parts %v", m["parts"])
	}

	// No variant: the key is left out; no calling session: no parentID.
	b.SessionID = ""
	if _, err := b.Ask(context.Background(), Ref{"prov", "small", ""}, "s", "u"); err != nil {
		t.Fatal(err)
	}
	recs = srv.records()
	if _, ok := recs[len(recs)-3].Body["variant"]; ok {
		t.Fatalf("variant sent without one: %v", recs[len(recs)-3].Body)
	}
	if _, ok := recs[len(recs)-4].Body["parentID"]; ok {
		t.Fatalf("parentID sent without a calling session: %v", recs[len(recs)-4].Body)
	}
}

// With a password every request, clean-up included, carries basic auth
// (user "opencode" unless one is given) and ?directory=; without one no
// Authorization header is sent.
func TestOpenCodeSendsAuthAndDirectoryOnEveryCall(t *testing.T) {
	for _, tc := range []struct {
		user, pass, wantUser string
	}{
		{"", "s3cret", "opencode"},
		{"bob", "pw:with:colons", "bob"},
		{"bob", "", ""},
	} {
		srv := newOC(t)
		srv.byModel["hang"] = ocUntilAbort
		srv.byModel["ok"] = ocText("fine")
		b := srv.backend()
		b.Username, b.Password, b.Directory = tc.user, tc.pass, "/home/me/my project&x=1"
		Run(context.Background(), b, Request{Prompt: "q", Markdown: pageText, WordCount: 200,
			Refs: []Ref{{"p", "hang", ""}, {"p", "ok", ""}}, Timeout: 100 * time.Millisecond})
		recs := srv.records()
		if len(recs) < 11 {
			t.Fatalf("only %d calls: %q", len(recs), srv.calls())
		}
		for _, r := range recs {
			if r.Method == "END" {
				continue
			}
			if got := r.Query["directory"]; !reflect.DeepEqual(got, []string{"/home/me/my project&x=1"}) {
				t.Errorf("%s %s: directory %q", r.Method, r.Path, got)
			}
			if tc.pass == "" {
				if r.HasAuth {
					t.Errorf("%s %s: auth sent without a password", r.Method, r.Path)
				}
			} else if !r.HasAuth || r.User != tc.wantUser || r.Pass != tc.pass {
				t.Errorf("%s %s: auth %v %q:%q, want %q:%q", r.Method, r.Path, r.HasAuth, r.User, r.Pass, tc.wantUser, tc.pass)
			}
		}
		if srv.countCalls("POST /session/ses_1/abort") != 1 {
			t.Fatalf("the timeout path was not taken: %q", srv.calls())
		}
	}
}

// On the timeout the session is aborted, the aborted prompt is allowed to
// come back, and only then is the session deleted, once; the next model is
// then tried.
func TestOpenCodeAbortsOnTimeoutThenDeletesOnce(t *testing.T) {
	srv := newOC(t)
	srv.byModel["slow"] = ocUntilAbort
	srv.byModel["ok"] = ocText("Answer")
	got := Run(context.Background(), srv.backend(), Request{Prompt: "q", Markdown: pageText, WordCount: 200,
		Refs: []Ref{{"p", "slow", ""}, {"p", "ok", ""}}, Timeout: 200 * time.Millisecond})
	if got.Answer != "Answer" || got.Model != "p/ok" || len(got.Warnings) != 0 {
		t.Fatalf("outcome %+v", got)
	}
	if e, ok := AsError(got.Attempts[0].Err); !ok || e.Kind != Timeout {
		t.Fatalf("first attempt %v, want a timeout", got.Attempts[0].Err)
	}
	want := []string{
		"GET /experimental/tool/ids", "POST /session", "POST /session/ses_1/message",
		"POST /session/ses_1/abort", "END /session/ses_1/message", "DELETE /session/ses_1",
		"GET /experimental/tool/ids", "POST /session", "POST /session/ses_2/message", "END /session/ses_2/message", "DELETE /session/ses_2",
	}
	if calls := srv.calls(); !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls\n%q\nwant\n%q", calls, want)
	}
}

// A prompt that does not come back after the abort is given SettleWait,
// then the session is deleted anyway (once) and the delay is reported.
func TestOpenCodeDeletesAfterTheSettleWaitWhenThePromptHangs(t *testing.T) {
	srv := newOC(t)
	srv.byModel["stuck"] = ocIgnoreAbort
	b := srv.backend()
	b.SettleWait = 150 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	reply, err := b.Ask(ctx, Ref{"p", "stuck", ""}, "s", "u")
	if e, ok := AsError(err); !ok || e.Kind != Timeout {
		t.Fatalf("Ask error %v, want a timeout", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Fatalf("returned after %s, want the timeout plus the settle wait", d)
	}
	e, ok := AsError(reply.Cleanup)
	if !ok || e.Code != CodeNotSettled || !strings.Contains(e.Message, "ses_1") {
		t.Fatalf("cleanup %v, want session_not_settled", reply.Cleanup)
	}
	// The server may notice the dropped message request only after the
	// delete, so only the client's order is pinned.
	calls := srv.calls()
	if srv.countCalls("DELETE /session/ses_1") != 1 || srv.countCalls("POST /session/ses_1/abort") != 1 ||
		indexOf(calls, "DELETE /session/ses_1") < indexOf(calls, "POST /session/ses_1/abort") {
		t.Fatalf("calls %q", calls)
	}
}

// A delete that keeps failing is tried DeleteTries times RetryPause apart,
// then given up and reported, while the answer stands; one that fails
// once and then works is not reported.
func TestOpenCodeRetriesTheDeleteThenGivesUp(t *testing.T) {
	srv := newOC(t)
	srv.byModel["m"] = ocText("kept")
	srv.deleteStatus = []int{500}
	b := srv.backend()
	b.RetryPause = 40 * time.Millisecond
	start := time.Now()
	got := Run(context.Background(), b, Request{Prompt: "q", Markdown: pageText, WordCount: 200, Refs: []Ref{{"p", "m", ""}}})
	if got.Answer != "kept" {
		t.Fatalf("outcome %+v: the answer was lost to a failed delete", got)
	}
	if n := srv.countCalls("DELETE /session/ses_1"); n != DeleteTries {
		t.Fatalf("%d deletes, want %d", n, DeleteTries)
	}
	if d := time.Since(start); d < time.Duration(DeleteTries-1)*b.RetryPause {
		t.Fatalf("tries not spaced: %s", d)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "could not delete helper session ses_1 after 3 tries") ||
		!strings.Contains(got.Warnings[0], "database is locked") {
		t.Fatalf("warnings %q", got.Warnings)
	}

	srv2 := newOC(t)
	srv2.byModel["m"] = ocText("kept")
	srv2.deleteStatus = []int{500, 200}
	reply, err := srv2.backend().Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
	if err != nil || reply.Cleanup != nil || srv2.countCalls("DELETE /session/ses_1") != 2 {
		t.Fatalf("Ask = %+v, %v after %q", reply, err, srv2.calls())
	}

	// A session the server no longer knows is gone: no retry, no report.
	srv3 := newOC(t)
	srv3.byModel["m"] = ocText("kept")
	srv3.deleteStatus = []int{404}
	reply, err = srv3.backend().Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
	if err != nil || reply.Cleanup != nil || srv3.countCalls("DELETE /session/ses_1") != 1 {
		t.Fatalf("Ask = %+v, %v after %q", reply, err, srv3.calls())
	}
}

// Without the tool listing the model would run with the host's tools, so
// the attempt fails, and before any session exists.
func TestOpenCodeFailsWithoutTheToolList(t *testing.T) {
	srv := newOC(t)
	srv.byModel["m"] = ocText("unsafe")
	srv.toolStatus = http.StatusNotFound
	_, err := srv.backend().Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
	if e, ok := AsError(err); !ok || e.HTTPStatus != 404 || !strings.Contains(e.Message, "/experimental/tool/ids") {
		t.Fatalf("Ask error %v", err)
	}
	if calls := srv.calls(); !reflect.DeepEqual(calls, []string{"GET /experimental/tool/ids"}) {
		t.Fatalf("calls %q", calls)
	}
}

// A failure the server records on the reply (a provider error) fails the
// attempt with its text, and the session is still deleted.
func TestOpenCodeReportsTheModelsError(t *testing.T) {
	srv := newOC(t)
	srv.byModel["m"] = func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
		io.WriteString(w, `{"info":{"role":"assistant","error":{"name":"ProviderAuthError","data":{"message":"no key for prov"}}},"parts":[]}`)
	}
	_, err := srv.backend().Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
	e, ok := AsError(err)
	if !ok || e.Kind != Failed || !strings.Contains(e.Message, "ProviderAuthError: no key for prov") {
		t.Fatalf("Ask error %v", err)
	}
	if srv.countCalls("DELETE /session/ses_1") != 1 {
		t.Fatalf("calls %q", srv.calls())
	}
}

// The caller's cancel is honored like a timeout: abort, delete, Canceled.
func TestOpenCodeHonorsTheCallersCancel(t *testing.T) {
	srv := newOC(t)
	srv.byModel["m"] = ocUntilAbort
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := srv.backend().Ask(ctx, Ref{"p", "m", ""}, "s", "u")
	if e, ok := AsError(err); !ok || e.Kind != Canceled || time.Since(start) > 2*time.Second {
		t.Fatalf("Ask error %v after %s", err, time.Since(start))
	}
	if srv.countCalls("POST /session/ses_1/abort") != 1 || srv.countCalls("DELETE /session/ses_1") != 1 {
		t.Fatalf("calls %q", srv.calls())
	}

	// Already canceled: nothing is sent.
	srv2 := newOC(t)
	if _, err := srv2.backend().Ask(ctx, Ref{"p", "m", ""}, "s", "u"); err == nil || len(srv2.calls()) != 0 {
		t.Fatalf("Ask on a canceled context: %v, calls %q", err, srv2.calls())
	}
}

// An oversized reply is refused, and the session is still deleted.
func TestOpenCodeRefusesAnOversizedReply(t *testing.T) {
	srv := newOC(t)
	srv.byModel["m"] = func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
		fmt.Fprintf(w, `{"info":{},"parts":[{"type":"text","text":"%s"}]}`, strings.Repeat("y", MaxResponseBytes))
	}
	_, err := srv.backend().Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
	if e, ok := AsError(err); !ok || e.Code != CodeResponseTooLarge {
		t.Fatalf("Ask error %v", err)
	}
	if srv.countCalls("DELETE /session/ses_1") != 1 {
		t.Fatalf("calls %q", srv.calls())
	}
}

// A session id that could change the request path is not used.
func TestOpenCodeRefusesAnUnsafeSessionID(t *testing.T) {
	for _, id := range []string{"../../global", "ses_1/abort", "ses 1", "ses_1?x=1"} {
		srv := newOC(t)
		srv.byModel["m"] = ocText("x")
		srv.sessionID = id
		_, err := srv.backend().Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
		if e, ok := AsError(err); !ok || e.Kind != Protocol {
			t.Errorf("id %q: %v", id, err)
		}
		if calls := srv.calls(); len(calls) != 2 {
			t.Errorf("id %q: calls %q", id, calls)
		}
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// An abort the server refuses is reported with the delay that follows,
// and the session is still deleted once.
func TestOpenCodeReportsARefusedAbortAndStillDeletes(t *testing.T) {
	srv := newOC(t)
	srv.byModel["m"] = ocUntilAbort
	srv.abortStatus = http.StatusInternalServerError
	b := srv.backend()
	b.SettleWait = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	reply, err := b.Ask(ctx, Ref{"p", "m", ""}, "s", "u")
	if e, ok := AsError(err); !ok || e.Kind != Timeout {
		t.Fatalf("Ask error %v", err)
	}
	var codes []string
	for _, e := range []error{reply.Cleanup} {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				if xe, ok := AsError(x); ok {
					codes = append(codes, xe.Code)
				}
			}
		}
	}
	if !reflect.DeepEqual(codes, []string{CodeAbortFailed, CodeNotSettled}) || !strings.Contains(reply.Cleanup.Error(), "abort refused") {
		t.Fatalf("cleanup %v (codes %q)", reply.Cleanup, codes)
	}
	if srv.countCalls("DELETE /session/ses_1") != 1 {
		t.Fatalf("calls %q", srv.calls())
	}
}
