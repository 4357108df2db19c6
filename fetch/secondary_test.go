package fetch

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeOpenAI answers chat completions per model: an answer, or an HTTP
// status when the answer is "".
type fakeOpenAI struct {
	mu      sync.Mutex
	answers map[string]string
	bodies  []string
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var in struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(b, &in)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(b))
	a, ok := f.answers[in.Model]
	f.mu.Unlock()
	if !ok {
		http.Error(w, "no such model", 500)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": a}}}})
}

func (f *fakeOpenAI) calls() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.bodies) }

func withModel(w *world, f *fakeOpenAI, models ...string) {
	srv := httptest.NewServer(f)
	w.t.Cleanup(srv.Close)
	w.cfg.Model = ModelConfig{Models: models, OpenAIBaseURL: srv.URL}
}

func prompt(p string) func(*Request) { return func(r *Request) { r.Prompt = &p } }

func longPage(words int) string {
	return "<html><body><article><p>" + strings.Repeat("alpha beta gamma delta ", words/4) + "</p></article></body></html>"
}

func TestSecondaryModel(t *testing.T) {
	t.Run("no model configured", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", htmlPage(longPage(200)))
		out := w.mustFetch(req("https://site.example.com/", prompt("what?"))).Output
		wantContains(t, out, `secondary_model_skipped_reason: "no_secondary_model_configured"`, "alpha beta")
	})
	t.Run("too short", func(t *testing.T) {
		w := newWorld(t)
		f := &fakeOpenAI{answers: map[string]string{"m": "x"}}
		withModel(w, f, "p/m")
		w.https("site.example.com", typed("text/plain", "only ten words in this page for the model here"))
		out := w.mustFetch(req("https://site.example.com/", prompt("what?"))).Output
		wantContains(t, out, `secondary_model_skipped_reason: "content_too_short"`)
		if f.calls() != 0 {
			t.Error("the model was asked")
		}
	})
	t.Run("second model answers", func(t *testing.T) {
		w := newWorld(t)
		f := &fakeOpenAI{answers: map[string]string{"second": "Answer"}}
		withModel(w, f, "p/first", "p/second")
		w.https("site.example.com", htmlPage(longPage(200)))
		res := w.mustFetch(req("https://site.example.com/", prompt("what?")))
		_, body, _ := strings.Cut(res.Output, "---\n\n")
		if body != "Answer" {
			t.Errorf("body %q", body)
		}
		wantContains(t, res.Output, `secondary_model: "p/second"`, "secondary_model_input_truncated: false")
		if res.Metadata.Get("secondary_model_input_chars") != res.Metadata.Get("secondary_model_source_chars") {
			t.Error("input and source chars differ")
		}
	})
	t.Run("all fail", func(t *testing.T) {
		w := newWorld(t)
		f := &fakeOpenAI{answers: map[string]string{"a": ""}}
		withModel(w, f, "p/a", "p/b")
		w.https("site.example.com", htmlPage(longPage(200)))
		out := w.mustFetch(req("https://site.example.com/", prompt("what?"))).Output
		wantContains(t, out, `secondary_model_skipped_reason: "secondary_model_failed"`, "secondary_model_error: ", "alpha beta")
	})
	t.Run("long page is cut", func(t *testing.T) {
		w := newWorld(t)
		f := &fakeOpenAI{answers: map[string]string{"m": "ok"}}
		withModel(w, f, "p/m")
		w.https("site.example.com", typed("text/plain", strings.Repeat("abcdefghi ", 15000)))
		res := w.mustFetch(req("https://site.example.com/", prompt("what?")))
		wantContains(t, res.Output, "secondary_model_input_truncated: true", "secondary_model_input_chars: 100000")
		if f.calls() != 1 || !strings.Contains(f.bodies[0], "only the first 100000 characters") {
			t.Error("the model was not told the page was cut")
		}
	})
	t.Run("blank prompt", func(t *testing.T) {
		w := newWorld(t)
		w.https("site.example.com", htmlPage(longPage(200)))
		wantContains(t, w.mustFetch(req("https://site.example.com/", prompt("   "))).Output, `secondary_model_skipped_reason: "no_prompt"`)
	})
}

// The transport: the OpenCode server when the host passed its address
// (even with an OpenAI-compatible endpoint in the environment), else that
// endpoint; SLIM_FETCH_MODEL_BACKEND (Backend) overrides the choice, and a
// backend without its address is no model at all.
func TestSecondaryModelTransport(t *testing.T) {
	cases := []struct {
		name              string
		opencode, openai  bool
		backend           string
		wantOpenCode      bool
		wantOpenAI        bool
		wantSkippedReason string
	}{
		{name: "the host's server wins", opencode: true, openai: true, wantOpenCode: true, wantSkippedReason: "secondary_model_failed"},
		{name: "else the environment's endpoint", openai: true, wantOpenAI: true},
		{name: "the backend setting overrides", opencode: true, openai: true, backend: "openai", wantOpenAI: true},
		{name: "opencode without its address", openai: true, backend: "opencode", wantSkippedReason: "no_secondary_model_configured"},
		{name: "none", opencode: true, openai: true, backend: "none", wantSkippedReason: "no_secondary_model_configured"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			f := &fakeOpenAI{answers: map[string]string{"m": "Answer"}}
			withModel(w, f, "p/m")
			if !c.openai {
				w.cfg.Model.OpenAIBaseURL = ""
			}
			// A host server that refuses everything: reaching it at all is
			// what this test looks for.
			var hostCalls []string
			var mu sync.Mutex
			host := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hostCalls = append(hostCalls, r.Method+" "+r.URL.Path)
				mu.Unlock()
				http.Error(rw, "no", 500)
			}))
			t.Cleanup(host.Close)
			if c.opencode {
				w.cfg.Model.OpenCodeURL = host.URL
				w.cfg.Model.SessionID = "ses_caller"
			}
			w.cfg.Model.Backend = c.backend
			w.https("site.example.com", htmlPage(longPage(200)))
			res := w.mustFetch(req("https://site.example.com/", prompt("what?")))
			mu.Lock()
			reached := len(hostCalls) > 0
			first := strings.Join(hostCalls, ", ")
			mu.Unlock()
			if reached != c.wantOpenCode || c.wantOpenCode && !strings.HasPrefix(first, "GET /experimental/tool/ids") {
				t.Errorf("the OpenCode server saw %q, want it reached: %v", first, c.wantOpenCode)
			}
			if (f.calls() > 0) != c.wantOpenAI {
				t.Errorf("the OpenAI endpoint answered %d calls, want it reached: %v", f.calls(), c.wantOpenAI)
			}
			if c.wantOpenAI {
				wantContains(t, res.Output, `secondary_model: "p/m"`)
			}
			if c.wantSkippedReason != "" {
				wantContains(t, res.Output, `secondary_model_skipped_reason: "`+c.wantSkippedReason+`"`, "alpha beta")
			}
		})
	}
}

// fakeHost is an OpenCode server for the secondary model: GET /config
// answers config (or configStatus), the session routes run one prompt
// whose answer is the model id it was asked with, and every request is
// logged as "METHOD path".
type fakeHost struct {
	mu           sync.Mutex
	config       string
	configStatus int
	calls        []string
}

func (h *fakeHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.calls = append(h.calls, r.Method+" "+r.URL.Path)
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "GET" && r.URL.Path == "/config":
		if h.configStatus != 0 {
			w.WriteHeader(h.configStatus)
			io.WriteString(w, `{"name":"UnknownError","data":{"message":"config unreadable"}}`)
			return
		}
		io.WriteString(w, h.config)
	case r.Method == "GET" && r.URL.Path == "/experimental/tool/ids":
		io.WriteString(w, `["bash","read"]`)
	case r.Method == "POST" && r.URL.Path == "/session":
		io.WriteString(w, `{"id":"ses_helper"}`)
	case r.Method == "POST" && r.URL.Path == "/session/ses_helper/message":
		var in struct {
			Model struct {
				ProviderID, ModelID string
			} `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		_ = json.NewEncoder(w).Encode(map[string]any{"info": map[string]any{}, "parts": []any{
			map[string]any{"type": "text", "text": "Answer from " + in.Model.ProviderID + "/" + in.Model.ModelID}}})
	case r.Method == "DELETE" && r.URL.Path == "/session/ses_helper":
		io.WriteString(w, "true")
	default:
		http.Error(w, `{"name":"NotFoundError"}`, 404)
	}
}

func (h *fakeHost) count(call string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.calls {
		if c == call {
			n++
		}
	}
	return n
}

// Through the host's OpenCode server with no chain of its own, the
// secondary model is the server's small_model, asked for (GET /config)
// only when a prompt needs a model: a server without one leaves the model
// unconfigured, a configuration that cannot be read gives the page with
// the reason, and a chain given by the caller is used instead.
func TestSecondaryModelFromTheHostsSmallModel(t *testing.T) {
	cases := []struct {
		name         string
		config       string
		configStatus int
		models       []string
		prompt       *string
		wantBody     string // the answer; "" means the page itself
		wantMeta     []string
		wantConfig   int
	}{
		{name: "the small model answers", config: `{"small_model":"prov/small"}`, prompt: ptr("what?"),
			wantBody: "Answer from prov/small", wantMeta: []string{`secondary_model: "prov/small"`}, wantConfig: 1},
		{name: "no small model", config: `{"model":"prov/big"}`, prompt: ptr("what?"),
			wantMeta: []string{`secondary_model_skipped_reason: "no_secondary_model_configured"`}, wantConfig: 1},
		{name: "a malformed small model", config: `{"small_model":"small"}`, prompt: ptr("what?"),
			wantMeta: []string{`secondary_model_skipped_reason: "no_secondary_model_configured"`}, wantConfig: 1},
		{name: "the configuration fails", configStatus: 500, prompt: ptr("what?"),
			wantMeta: []string{`secondary_model_skipped_reason: "secondary_model_failed"`,
				`secondary_model_error: "reading the OpenCode server's configuration: the OpenCode server answered HTTP 500 to GET /config`}, wantConfig: 1},
		{name: "a chain of the caller's own", config: `{"small_model":"prov/small"}`, models: []string{"mine/other"}, prompt: ptr("what?"),
			wantBody: "Answer from mine/other", wantMeta: []string{`secondary_model: "mine/other"`}},
		{name: "a chain of malformed names is still the caller's", config: `{"small_model":"prov/small"}`, models: []string{"nonsense"}, prompt: ptr("what?"),
			wantMeta: []string{`secondary_model_skipped_reason: "no_secondary_model_configured"`}},
		{name: "no prompt, no request", config: `{"small_model":"prov/small"}`},
		{name: "a blank prompt, no request", config: `{"small_model":"prov/small"}`, prompt: ptr(" "),
			wantMeta: []string{`secondary_model_skipped_reason: "no_prompt"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			h := &fakeHost{config: c.config, configStatus: c.configStatus}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			w.cfg.Model = ModelConfig{Models: c.models, OpenCodeURL: srv.URL, SessionID: "ses_caller", Directory: "/proj"}
			w.https("site.example.com", htmlPage(longPage(200)))
			r := req("https://site.example.com/")
			r.Prompt = c.prompt
			res := w.mustFetch(r)
			_, body, _ := strings.Cut(res.Output, "---\n\n")
			if c.wantBody != "" && body != c.wantBody {
				t.Errorf("body %q, want %q", body, c.wantBody)
			}
			if c.wantBody == "" {
				wantContains(t, body, "alpha beta")
			}
			wantContains(t, res.Output, c.wantMeta...)
			if n := h.count("GET /config"); n != c.wantConfig {
				t.Errorf("GET /config asked %d times, want %d", n, c.wantConfig)
			}
		})
	}
}

func ptr(s string) *string { return &s }
