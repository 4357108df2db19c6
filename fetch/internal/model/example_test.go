package model_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/slimgate/slim/fetch/internal/model"
)

// Run tries the models in order; the first one here is not known to the
// server, the second answers.
func ExampleRun() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"model":"small"`) {
			http.Error(w, `{"error":{"message":"model not found"}}`, http.StatusNotFound)
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"The default port is 8080."}}]}`)
	}))
	defer srv.Close()

	refs, _ := model.ParseRefs([]string{"openai/missing", "openai/small"})
	page := "# Server\n\nThe server listens on port 8080 unless --port is given. " + strings.Repeat("More text here. ", 20)
	out := model.Run(context.Background(), &model.OpenAI{BaseURL: srv.URL + "/v1"}, model.Request{
		Prompt: "What is the default port?", Markdown: page, WordCount: 70, Refs: refs,
	})
	fmt.Println(out.Answer)
	fmt.Println(out.Model, out.InputChars == out.SourceChars, out.SkippedReason == "")
	fmt.Println(out.Attempts[0].Err)
	// Output:
	// The default port is 8080.
	// openai/small true true
	// openai/missing: the OpenAI-compatible server answered HTTP 404 to POST /v1/chat/completions: model not found
}
