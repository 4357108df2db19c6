package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// OpenAI is a Backend for any server that speaks the OpenAI chat
// completions API (POST {BaseURL}/chat/completions).
type OpenAI struct {
	// BaseURL is the API root, "https://api.openai.com/v1" for OpenAI.
	BaseURL string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// ModelMap maps a reference ("provider/model#variant" or
	// "provider/model") to the server's model name. A reference not in it
	// is sent as its model id alone (the provider and variant dropped),
	// since such servers have no providers.
	ModelMap map[string]string
	// Client sends the requests; nil means a client that follows no
	// redirects.
	Client *http.Client
}

// ModelName is the model name ref is sent as: ModelMap's entry for the
// whole reference, else for provider/model, else ref.Model.
func (o *OpenAI) ModelName(ref Ref) string {
	if m, ok := o.ModelMap[ref.String()]; ok && m != "" {
		return m
	}
	if m, ok := o.ModelMap[ref.Provider+"/"+ref.Model]; ok && m != "" {
		return m
	}
	return ref.Model
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	Stream      bool          `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// Ask sends system and user as one chat completion at temperature 0 and
// returns the first choice's content.
func (o *OpenAI) Ask(ctx context.Context, ref Ref, system, user string) (Reply, error) {
	ep, err := newEndpoint("OpenAI-compatible server", o.BaseURL, ref, o.Client)
	if err != nil {
		return Reply{}, err
	}
	if o.APIKey != "" {
		ep.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+o.APIKey) }
	}
	in := chatRequest{
		Model:    o.ModelName(ref),
		Messages: []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
	}
	var out chatResponse
	if err := ep.call(ctx, ref, http.MethodPost, "/chat/completions", in, &out); err != nil {
		return Reply{}, err
	}
	if len(out.Choices) == 0 {
		if len(out.Error) > 0 && string(out.Error) != "null" {
			// Some servers report a provider failure in a 2xx body.
			return Reply{}, &Error{Kind: Failed, Code: CodeModelError, Model: ref.String(),
				Message: fmt.Sprintf("%s: the OpenAI-compatible server answered an error: %s",
					ref, serverMessage([]byte(`{"error":`+string(out.Error)+`}`)))}
		}
		return Reply{}, &Error{Kind: Protocol, Code: CodeBadResponse, Model: ref.String(),
			Message: fmt.Sprintf("%s: the OpenAI-compatible server answered no choices", ref)}
	}
	text, err := contentText(out.Choices[0].Message.Content)
	if err != nil {
		return Reply{}, &Error{Kind: Protocol, Code: CodeBadResponse, Model: ref.String(), Err: err,
			Message: fmt.Sprintf("%s: the OpenAI-compatible server's message content is neither text nor a list of text parts", ref)}
	}
	return Reply{Text: text}, nil
}

// contentText reads a message content: a string, null, or (as some
// servers send) a list of parts of which the text ones are joined.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "output_text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}
