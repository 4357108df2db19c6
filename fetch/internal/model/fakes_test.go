package model

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// oaiServer is a fake OpenAI-compatible server: each model name has its
// own behaviour, and every request is recorded.
type oaiServer struct {
	*httptest.Server
	mu    sync.Mutex
	reqs  []oaiRecord
	byMod map[string]http.HandlerFunc
}

type oaiRecord struct {
	Path, Auth string
	Raw        []byte
	Body       chatRequest
}

func newOAI(t *testing.T, byModel map[string]http.HandlerFunc) *oaiServer {
	t.Helper()
	s := &oaiServer{byMod: byModel}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body chatRequest
		json.Unmarshal(raw, &body)
		s.mu.Lock()
		s.reqs = append(s.reqs, oaiRecord{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Raw: raw, Body: body})
		s.mu.Unlock()
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.Error(w, `{"error":{"message":"no such route"}}`, http.StatusNotFound)
			return
		}
		h, ok := s.byMod[body.Model]
		if !ok {
			http.Error(w, `{"error":{"message":"unknown model"}}`, http.StatusNotFound)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *oaiServer) records() []oaiRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]oaiRecord(nil), s.reqs...)
}

func (s *oaiServer) count(model string) int {
	n := 0
	for _, r := range s.records() {
		if model == "" || r.Body.Model == model {
			n++
		}
	}
	return n
}

func (s *oaiServer) backend() *OpenAI { return &OpenAI{BaseURL: s.URL + "/v1"} }

// completion answers a chat completion whose content is the JSON value
// content (a quoted string, null, or a list of parts).
func completion(content string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}]}`, content)
	}
}

func text(s string) http.HandlerFunc {
	q, _ := json.Marshal(s)
	return completion(string(q))
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// hang holds the request until the client goes away.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// ocServer is a fake OpenCode server. It keeps sessions, answers the tool
// listing, runs each message through the behaviour of its model id, and
// logs every request (and the end of every message request) in order.
type ocServer struct {
	*httptest.Server
	mu       sync.Mutex
	log      []ocRecord
	sessions int
	aborted  map[string]chan struct{}
	// toolIDs is the listing; toolStatus, when non-zero, replaces it by
	// an error status.
	toolIDs    []string
	toolStatus int
	// deleteStatus gives the status of the n-th DELETE (the last one
	// repeats); empty means 200.
	deleteStatus []int
	// sessionID overrides the id of created sessions; abortStatus, when
	// non-zero, is the status of every abort (which then does nothing).
	sessionID   string
	abortStatus int
	byModel     map[string]func(w http.ResponseWriter, r *http.Request, abort <-chan struct{})
	deletes     int
	// config is the body of GET /config ("{}" when empty); configStatus,
	// when non-zero, answers it with that error status instead, and
	// configHang holds it until the client goes away.
	config       string
	configStatus int
	configHang   bool
}

type ocRecord struct {
	Method, Path string
	Query        map[string][]string
	User, Pass   string
	HasAuth      bool
	Body         map[string]any
}

func newOC(t *testing.T) *ocServer {
	t.Helper()
	s := &ocServer{aborted: map[string]chan struct{}{}, toolIDs: []string{"bash", "read", "webfetch", "task"},
		byModel: map[string]func(http.ResponseWriter, *http.Request, <-chan struct{}){}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *ocServer) record(r *http.Request, body map[string]any, method string) {
	u, p, ok := r.BasicAuth()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, ocRecord{Method: method, Path: r.URL.Path, Query: r.URL.Query(), User: u, Pass: p, HasAuth: ok, Body: body})
}

func (s *ocServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	s.record(r, body, r.Method)
	w.Header().Set("Content-Type", "application/json")
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == "GET" && r.URL.Path == "/experimental/tool/ids":
		if s.toolStatus != 0 {
			w.WriteHeader(s.toolStatus)
			io.WriteString(w, `{"name":"NotFoundError","data":{"message":"no such route"}}`)
			return
		}
		json.NewEncoder(w).Encode(s.toolIDs)
	case r.Method == "GET" && r.URL.Path == "/config":
		switch {
		case s.configHang:
			<-r.Context().Done()
		case s.configStatus != 0:
			w.WriteHeader(s.configStatus)
			io.WriteString(w, `{"name":"UnknownError","data":{"message":"config unreadable"}}`)
		case s.config == "":
			io.WriteString(w, "{}")
		default:
			io.WriteString(w, s.config)
		}
	case r.Method == "POST" && r.URL.Path == "/session":
		s.mu.Lock()
		s.sessions++
		id := fmt.Sprintf("ses_%d", s.sessions)
		if s.sessionID != "" {
			id = s.sessionID
		}
		s.aborted[id] = make(chan struct{})
		s.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"id": id, "title": body["title"], "parentID": body["parentID"]})
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "session" && parts[2] == "message":
		defer s.record(r, nil, "END")
		s.mu.Lock()
		abort := s.aborted[parts[1]]
		s.mu.Unlock()
		model, _ := body["model"].(map[string]any)
		id, _ := model["modelID"].(string)
		h, ok := s.byModel[id]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"name":"ProviderModelNotFoundError","data":{"message":"unknown model"}}`)
			return
		}
		h(w, r, abort)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "session" && parts[2] == "abort":
		if s.abortStatus != 0 {
			w.WriteHeader(s.abortStatus)
			io.WriteString(w, `{"name":"UnknownError","data":{"message":"abort refused"}}`)
			return
		}
		s.mu.Lock()
		if ch, ok := s.aborted[parts[1]]; ok {
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
		s.mu.Unlock()
		io.WriteString(w, "true")
	case r.Method == "DELETE" && len(parts) == 2 && parts[0] == "session":
		s.mu.Lock()
		code := http.StatusOK
		if n := len(s.deleteStatus); n > 0 {
			code = s.deleteStatus[min(s.deletes, n-1)]
		}
		s.deletes++
		s.mu.Unlock()
		w.WriteHeader(code)
		if code == http.StatusOK {
			io.WriteString(w, "true")
		} else {
			io.WriteString(w, `{"name":"UnknownError","data":{"message":"database is locked"}}`)
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"name":"NotFoundError","data":{"message":"no route"}}`)
	}
}

func (s *ocServer) records() []ocRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ocRecord(nil), s.log...)
}

// calls lists "METHOD path" for every request (and "END path" when a
// message request ended), in order.
func (s *ocServer) calls() []string {
	var out []string
	for _, r := range s.records() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

func (s *ocServer) countCalls(call string) int {
	n := 0
	for _, c := range s.calls() {
		if c == call {
			n++
		}
	}
	return n
}

func (s *ocServer) backend() *OpenCode {
	return &OpenCode{BaseURL: s.URL, SessionID: "ses_caller", Directory: "/proj", RetryPause: time.Millisecond, SettleWait: 2 * time.Second}
}

// ocText answers a message with these text parts (and a reasoning part,
// which must not reach the answer).
func ocText(texts ...string) func(http.ResponseWriter, *http.Request, <-chan struct{}) {
	return func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) {
		parts := []map[string]any{{"type": "step-start"}, {"type": "reasoning", "text": "thinking aloud"}}
		for _, t := range texts {
			parts = append(parts, map[string]any{"type": "text", "text": t})
		}
		parts = append(parts, map[string]any{"type": "step-finish", "reason": "stop"})
		json.NewEncoder(w).Encode(map[string]any{"info": map[string]any{"role": "assistant", "finish": "stop"}, "parts": parts})
	}
}

// ocUntilAbort holds the message until the session is aborted, then
// answers as the server does for an aborted prompt.
func ocUntilAbort(w http.ResponseWriter, r *http.Request, abort <-chan struct{}) {
	select {
	case <-abort:
	case <-r.Context().Done():
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"info": map[string]any{"role": "assistant",
		"error": map[string]any{"name": "MessageAbortedError", "data": map[string]any{"message": "Aborted"}}}, "parts": []any{}})
}

// ocIgnoreAbort holds the message until the client goes away.
func ocIgnoreAbort(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) { <-r.Context().Done() }
