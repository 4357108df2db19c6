package opencode

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
)

// startFake runs a fake OpenCode server on 127.0.0.1 for one test and
// returns it with a client for it; cfg's BaseURL is filled in.
func startFake(t *testing.T, opts opencodefake.Options, cfg Config) (*opencodefake.Server, *Client) {
	t.Helper()
	s := opencodefake.New(opts)
	url, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cfg.BaseURL = url
	return s, newClient(t, cfg)
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// testCtx is a context bounded well below the test timeout.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// seed creates a session with a fixed id in the fake.
func seed(t *testing.T, s *opencodefake.Server, sd opencodefake.SessionSeed) {
	t.Helper()
	if _, err := s.AddSession(sd); err != nil {
		t.Fatal(err)
	}
}

func addFaults(t *testing.T, s *opencodefake.Server, faults ...opencodefake.Fault) {
	t.Helper()
	if err := s.AddFaults(faults...); err != nil {
		t.Fatal(err)
	}
}

// respond is a fault answering status with a JSON body, or with a text
// when body is not JSON.
func respond(method, path string, status int, body string) opencodefake.Fault {
	r := &opencodefake.Response{Status: status}
	switch {
	case body == "":
	case json.Valid([]byte(body)):
		r.Body = json.RawMessage(body)
	default:
		r.Text = body
	}
	return opencodefake.Fault{Method: method, Path: path, Respond: r}
}

// wantErr checks an error's kind, code, status and, when msg is not
// empty, its exact message.
func wantErr(t *testing.T, err error, kind Kind, code string, status int, msg string) *Error {
	t.Helper()
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %v (%T), want an *Error of kind %s", err, err, kind)
	}
	if e.Kind != kind || e.Code != code || e.Status != status {
		t.Errorf("error = %s/%s/%d %q, want %s/%s/%d", e.Kind, e.Code, e.Status, e.Message, kind, code, status)
	}
	if msg != "" && e.Message != msg {
		t.Errorf("message = %q, want %q", e.Message, msg)
	}
	return e
}

func textPrompt(text string) Prompt {
	return Prompt{Agent: "explorer", Parts: []PromptPart{{Type: "text", Text: text}}}
}
