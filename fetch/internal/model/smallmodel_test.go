package model

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

// SmallModel reads small_model from GET /config: a reference is the
// chain, none (or an empty one) is no model and no error, a malformed one
// is no model with CodeBadSmallModel, and a failing server is an error of
// its own kind. The request carries ?directory= and basic auth like every
// other call.
func TestOpenCodeSmallModelReadsTheServersConfig(t *testing.T) {
	for _, tc := range []struct {
		name     string
		config   string
		status   int
		hang     bool
		want     []Ref
		wantCode string
		wantMsg  string
	}{
		{name: "a reference", config: `{"model":"big/one","small_model":"prov/small-1","provider":{"prov":{}}}`, want: []Ref{{"prov", "small-1", ""}}},
		{name: "a model id with slashes", config: `{"small_model":"openrouter/meta/llama-3"}`, want: []Ref{{"openrouter", "meta/llama-3", ""}}},
		{name: "no small_model", config: `{"model":"big/one"}`},
		{name: "an empty one", config: `{"small_model":""}`},
		{name: "null", config: `{"small_model":null}`},
		{name: "no provider", config: `{"small_model":"small-1"}`, wantCode: CodeBadSmallModel, wantMsg: "small_model"},
		{name: "not a string", config: `{"small_model":42}`, wantCode: CodeBadSmallModel, wantMsg: "not a string"},
		{name: "an error status", status: 500, wantCode: CodeStatus, wantMsg: "HTTP 500 to GET /config"},
		{name: "not JSON", config: `<html>`, wantCode: CodeBadResponse, wantMsg: "not the expected JSON"},
		{name: "larger than the cap", config: `{"x":"` + strings.Repeat("a", MaxConfigBytes) + `"}`, wantCode: CodeResponseTooLarge},
		{name: "no answer in time", hang: true, wantCode: CodeTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newOC(t)
			srv.config, srv.configStatus, srv.configHang = tc.config, tc.status, tc.hang
			b := srv.backend()
			b.Password, b.ConfigTimeout = "pw", 200*time.Millisecond
			start := time.Now()
			got, err := b.SmallModel(context.Background())
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SmallModel = %v, want %v", got, tc.want)
			}
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
			} else {
				e, ok := AsError(err)
				if !ok || e.Code != tc.wantCode || !strings.Contains(e.Message, tc.wantMsg) ||
					!strings.HasPrefix(e.Message, "reading the OpenCode server's configuration: ") {
					t.Fatalf("error %#v, want code %s mentioning %q", err, tc.wantCode, tc.wantMsg)
				}
			}
			if time.Since(start) > 2*time.Second {
				t.Errorf("took %s: the configuration's own time limit did not apply", time.Since(start))
			}
			recs := srv.records()
			if len(recs) != 1 || recs[0].Method != "GET" || recs[0].Path != "/config" {
				t.Fatalf("calls %q, want GET /config alone", srv.calls())
			}
			if d := recs[0].Query["directory"]; len(d) != 1 || d[0] != "/proj" || recs[0].User != "opencode" || recs[0].Pass != "pw" {
				t.Errorf("GET /config carried directory %q and auth %q:%q", d, recs[0].User, recs[0].Pass)
			}
		})
	}
}

// With no chain of its own, Run asks HostModels once the prompt is known
// not to be blank and runs the model it names; a host that names none is
// no model configured (a malformed name kept as a warning), and a host
// whose configuration cannot be read is a failed model with the reason.
// A chain of the caller's own is never replaced.
func TestRunTakesTheHostsModelWhenGivenNone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		prompt     string
		refs       []Ref
		config     string
		status     int
		wantSkip   string
		wantModel  string
		wantErr    string
		wantWarn   string
		wantConfig int
	}{
		{name: "the host's small model answers", prompt: "port?", config: `{"small_model":"prov/small"}`, wantModel: "prov/small", wantConfig: 1},
		{name: "the host names none", prompt: "port?", config: `{}`, wantSkip: SkipNoModel, wantConfig: 1},
		{name: "the host names a malformed one", prompt: "port?", config: `{"small_model":"small"}`, wantSkip: SkipNoModel, wantWarn: "small_model", wantConfig: 1},
		{name: "the configuration cannot be read", prompt: "port?", status: 503, wantSkip: SkipAllModelsFailed, wantErr: "reading the OpenCode server's configuration: the OpenCode server answered HTTP 503", wantConfig: 1},
		{name: "a blank prompt asks nothing", prompt: "  ", config: `{"small_model":"prov/small"}`, wantSkip: SkipNoPrompt},
		{name: "the caller's chain wins", prompt: "port?", refs: []Ref{{"mine", "other", ""}}, config: `{"small_model":"prov/small"}`, wantModel: "mine/other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newOC(t)
			srv.config, srv.configStatus = tc.config, tc.status
			srv.byModel["small"] = ocText("8080")
			srv.byModel["other"] = ocText("9090")
			b := srv.backend()
			out := Run(context.Background(), b, Request{Prompt: tc.prompt, Markdown: pageText, WordCount: 200, Refs: tc.refs, HostModels: b.SmallModel})
			if out.SkippedReason != tc.wantSkip || out.Model != tc.wantModel {
				t.Fatalf("outcome %+v, want skip %q model %q", out, tc.wantSkip, tc.wantModel)
			}
			if !strings.Contains(out.Error, tc.wantErr) || (tc.wantErr == "") != (out.Error == "") {
				t.Errorf("error %q, want %q", out.Error, tc.wantErr)
			}
			if w := strings.Join(out.Warnings, "\n"); !strings.Contains(w, tc.wantWarn) || (tc.wantWarn == "") != (w == "") {
				t.Errorf("warnings %q, want %q", w, tc.wantWarn)
			}
			if n := srv.countCalls("GET /config"); n != tc.wantConfig {
				t.Errorf("GET /config asked %d times, want %d", n, tc.wantConfig)
			}
			if tc.wantSkip != "" && srv.countCalls("POST /session") != 0 {
				t.Errorf("a helper session was opened: %q", srv.calls())
			}
		})
	}
}
