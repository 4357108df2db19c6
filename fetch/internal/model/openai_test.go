package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The request is POST {base}/chat/completions with the system and user
// messages, temperature 0, no streaming, and the key as a bearer token
// (no Authorization header at all without a key).
func TestOpenAISendsOneChatCompletion(t *testing.T) {
	srv := newOAI(t, map[string]http.HandlerFunc{"gpt-5-mini": text("the answer")})
	b := &OpenAI{BaseURL: srv.URL + "/v1/", APIKey: "sk-test"}
	reply, err := b.Ask(context.Background(), Ref{"openai", "gpt-5-mini", "low"}, "SYS", "USER")
	if err != nil || reply.Text != "the answer" || reply.Cleanup != nil {
		t.Fatalf("Ask = %+v, %v", reply, err)
	}
	r := srv.records()[0]
	if r.Path != "/v1/chat/completions" || r.Auth != "Bearer sk-test" {
		t.Fatalf("path %q, auth %q", r.Path, r.Auth)
	}
	var raw map[string]any
	json.Unmarshal(r.Raw, &raw)
	if raw["temperature"] != 0.0 || raw["stream"] != false || raw["model"] != "gpt-5-mini" {
		t.Fatalf("body %s", r.Raw)
	}
	msgs := r.Body.Messages
	if len(msgs) != 2 || msgs[0] != (chatMessage{"system", "SYS"}) || msgs[1] != (chatMessage{"user", "USER"}) {
		t.Fatalf("messages %+v", msgs)
	}

	b.APIKey = ""
	if _, err := b.Ask(context.Background(), Ref{"openai", "gpt-5-mini", ""}, "s", "u"); err != nil {
		t.Fatal(err)
	}
	if a := srv.records()[1].Auth; a != "" {
		t.Fatalf("Authorization %q sent without a key", a)
	}
}

// The server's model name comes from ModelMap (whole reference first, then
// provider/model), else is the model id without the provider.
func TestOpenAIModelNameStripsTheProviderOrMaps(t *testing.T) {
	b := &OpenAI{ModelMap: map[string]string{"a/x#hi": "x-high", "a/x": "x-plain", "b/y": ""}}
	for _, tc := range []struct {
		ref  Ref
		want string
	}{
		{Ref{"a", "x", "hi"}, "x-high"},
		{Ref{"a", "x", "lo"}, "x-plain"},
		{Ref{"a", "x", ""}, "x-plain"},
		{Ref{"b", "y", ""}, "y"},
		{Ref{"openrouter", "meta/llama", ""}, "meta/llama"},
	} {
		if got := b.ModelName(tc.ref); got != tc.want {
			t.Errorf("ModelName(%s) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}

// The content may be a string, null or a list of parts; a 2xx body with an
// error and no choices, or with no choices at all, is a failure.
func TestOpenAIReadsEachContentShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
		want string
		code string
	}{
		{"string", text("plain"), "plain", ""},
		{"null", completion("null"), "", ""},
		{"parts", completion(`[{"type":"text","text":"one"},{"type":"image_url","image_url":{}},{"type":"text","text":"two"}]`), "one\ntwo", ""},
		{"number", completion(`42`), "", CodeBadResponse},
		{"error in 200", status(200, `{"error":{"message":"quota exceeded"}}`), "", CodeModelError},
		{"no choices", status(200, `{"choices":[]}`), "", CodeBadResponse},
		{"not json", status(200, `<html>`), "", CodeBadResponse},
		{"401", status(401, `{"error":{"message":"bad key"}}`), "", CodeStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newOAI(t, map[string]http.HandlerFunc{"m": tc.h})
			reply, err := srv.backend().Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
			if tc.code == "" {
				if err != nil || reply.Text != tc.want {
					t.Fatalf("Ask = %q, %v; want %q", reply.Text, err, tc.want)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != tc.code || e.Model != "p/m" || !strings.HasPrefix(e.Message, "p/m: ") {
				t.Fatalf("Ask error %v, want code %s", err, tc.code)
			}
			if tc.name == "error in 200" && !strings.Contains(e.Message, "quota exceeded") {
				t.Fatalf("message %q lacks the server's reason", e.Message)
			}
			if tc.name == "401" && !strings.Contains(e.Message, "credentials") {
				t.Fatalf("message %q gives no hint about credentials", e.Message)
			}
		})
	}
}

// A response body over MaxResponseBytes is refused, whether the server
// announces its length or streams it; one just under the cap is read.
func TestOpenAIRefusesAnOversizedResponse(t *testing.T) {
	big := func(total int, announce bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			head := `{"choices":[{"message":{"content":"`
			tail := `"}}]}`
			if announce {
				w.Header().Set("Content-Length", fmt.Sprint(total))
			}
			io.WriteString(w, head)
			io.WriteString(w, strings.Repeat("x", total-len(head)-len(tail)))
			io.WriteString(w, tail)
		}
	}
	// An announced length over the cap is refused before the body is
	// read: this server would never finish sending it.
	announcedOnly := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(MaxResponseBytes+1))
		io.WriteString(w, `{"choices":`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	srv := newOAI(t, map[string]http.HandlerFunc{
		"announced": big(MaxResponseBytes+1, true),
		"streamed":  big(MaxResponseBytes+1, false),
		"fits":      big(MaxResponseBytes, false),
		"promised":  announcedOnly,
	})
	for _, m := range []string{"announced", "streamed", "promised"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := srv.backend().Ask(ctx, Ref{"p", m, ""}, "s", "u")
		cancel()
		if e, ok := AsError(err); !ok || e.Code != CodeResponseTooLarge {
			t.Errorf("%s: %v, want response_too_large", m, err)
		}
	}
	reply, err := srv.backend().Ask(context.Background(), Ref{"p", "fits", ""}, "s", "u")
	if err != nil || len(reply.Text) != MaxResponseBytes-len(`{"choices":[{"message":{"content":""}}]}`) {
		t.Fatalf("a body of exactly the cap: %d bytes, %v", len(reply.Text), err)
	}
}

// A server that never answers is left when the context is canceled or its
// deadline passes, promptly, with the matching kind.
func TestOpenAIHonorsTheContext(t *testing.T) {
	srv := newOAI(t, map[string]http.HandlerFunc{"slow": hang})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := srv.backend().Ask(ctx, Ref{"p", "slow", ""}, "s", "u")
	if e, ok := AsError(err); !ok || e.Kind != Canceled || time.Since(start) > 2*time.Second {
		t.Fatalf("cancel: %v after %s", err, time.Since(start))
	}
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = srv.backend().Ask(ctx, Ref{"p", "slow", ""}, "s", "u")
	if e, ok := AsError(err); !ok || e.Kind != Timeout || e.Code != CodeTimeout {
		t.Fatalf("deadline: %v", err)
	}
}

// A base URL that is not http(s) is refused before anything is sent; a
// server that is not there is Unreachable, and the message does not quote
// the URL's secrets.
func TestOpenAIReportsBadURLsAndUnreachableServers(t *testing.T) {
	for _, base := range []string{"", "ftp://x/v1", "localhost:8080", "http://", "://bad"} {
		_, err := (&OpenAI{BaseURL: base}).Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
		if e, ok := AsError(err); !ok || e.Kind != Config {
			t.Errorf("base %q: %v, want a config error", base, err)
		}
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	_, err := (&OpenAI{BaseURL: "http://user:hunter2@" + strings.TrimPrefix(url, "http://") + "/v1?key=hunter2"}).Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
	e, ok := AsError(err)
	if !ok || e.Kind != Unreachable || strings.Contains(e.Message, "hunter2") {
		t.Fatalf("dead server: %v", err)
	}
}

// Redirects are not followed: the key must not travel to another place.
func TestOpenAIDoesNotFollowRedirects(t *testing.T) {
	other := newOAI(t, map[string]http.HandlerFunc{"m": text("moved")})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	_, err := (&OpenAI{BaseURL: srv.URL, APIKey: "k"}).Ask(context.Background(), Ref{"p", "m", ""}, "s", "u")
	if e, ok := AsError(err); !ok || e.HTTPStatus != http.StatusTemporaryRedirect || other.count("") != 0 {
		t.Fatalf("redirect: %v; the other server got %d requests", err, other.count(""))
	}
}
