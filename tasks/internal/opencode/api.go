package opencode

import "net/http"

// This file holds the types the task engine exchanges with the server;
// the calls are in client.go, the live status map in status.go and the
// transcript helpers in transcript.go.

// Config says which server to talk to and how.
type Config struct {
	// BaseURL is the server's root, http or https (for example
	// http://127.0.0.1:4096). A path prefix is kept.
	BaseURL string
	// Directory, when set, is sent on every call as ?directory= and as
	// the x-opencode-directory header. The header is percent-encoded as
	// OpenCode's own SDK sends it (the server decodes it), so a directory
	// with characters a header cannot carry still gets through.
	Directory string
	// Username and Password enable HTTP basic auth when Password is not
	// empty; Username defaults to "opencode".
	Username, Password string
	// HTTP is the client to use. When nil the Client makes a private one
	// with keep-alive that follows no redirect and uses no proxy (the
	// server is local, and a proxy would see the password). Deadlines
	// come from each call's context, never from the client.
	HTTP *http.Client
	// MaxBody bounds every response body read (DefaultMaxBody when 0).
	MaxBody int64
	// V2 drives the experimental v2 API an opencode2 host serves under
	// /api: see the package doc for how each call maps onto it.
	V2 bool
}

// DefaultMaxBody bounds a response body: a transcript of a long session
// is a few megabytes.
const DefaultMaxBody = 16 << 20

// Health is the answer of GET /global/health.
type Health struct {
	Healthy bool   `json:"healthy"`
	Version string `json:"version"`
}

// Session is what the engine needs of a session.
type Session struct {
	ID        string      `json:"id"`
	ParentID  string      `json:"parentID,omitempty"`
	Title     string      `json:"title,omitempty"`
	Directory string      `json:"directory,omitempty"`
	Agent     string      `json:"agent,omitempty"`
	Model     *Model      `json:"model,omitempty"`
	Time      SessionTime `json:"time"`
}

// Model is the model a session last ran with.
type Model struct {
	ID         string `json:"id"`
	ProviderID string `json:"providerID"`
	Variant    string `json:"variant,omitempty"`
}

// SessionTime holds a session's timestamps in Unix milliseconds (Idle:
// v2 hosts only).
type SessionTime struct {
	Created int64 `json:"created"`
	Updated int64 `json:"updated"`
	Idle    int64 `json:"idle,omitempty"`
}

// Todo is one entry of a session's todo list.
type Todo struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Pending is one request a session waits on its user for: a question
// its question tool asked, or a permission a tool call needs. Only what
// says whose it is is read.
type Pending struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionID"`
}

// Message is one transcript entry.
type Message struct {
	Info  MessageInfo `json:"info"`
	Parts []Part      `json:"parts"`
}

// MessageInfo is a message's header.
type MessageInfo struct {
	ID   string      `json:"id"`
	Role string      `json:"role"`
	Time MessageTime `json:"time"`
	// ParentID is, on an assistant message, the user message it answers.
	ParentID string        `json:"parentID,omitempty"`
	Agent    string        `json:"agent,omitempty"`
	Finish   string        `json:"finish,omitempty"`
	Error    *MessageError `json:"error,omitempty"`
	Model    *ModelRef     `json:"model,omitempty"`
	ModelID  string        `json:"modelID,omitempty"`
	Provider string        `json:"providerID,omitempty"`
}

// MessageTime holds a message's timestamps in Unix milliseconds.
type MessageTime struct {
	Created   int64 `json:"created"`
	Completed int64 `json:"completed,omitempty"`
}

// MessageError is the error recorded on an assistant message.
type MessageError struct {
	Name string `json:"name"`
	Data struct {
		Message string `json:"message"`
	} `json:"data"`
}

// ModelRef names a model as prompts do.
type ModelRef struct {
	ProviderID string `json:"providerID"`
	ModelID    string `json:"modelID"`
}

// Part is one part of a message, with the fields the engine reads.
type Part struct {
	Type      string         `json:"type"`
	Text      string         `json:"text,omitempty"`
	Synthetic bool           `json:"synthetic,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Tool      string         `json:"tool,omitempty"`
	State     *ToolState     `json:"state,omitempty"`
}

// ToolState is a tool part's state.
type ToolState struct {
	Status string `json:"status"`
}

// Prompt is the body of prompt_async and of POST /session/{id}/message.
// Only the fields set are sent: a revive sends {messageID, agent, parts},
// a queued message {agent, noReply, parts}.
type Prompt struct {
	MessageID string       `json:"messageID,omitempty"`
	Agent     string       `json:"agent,omitempty"`
	Model     *ModelRef    `json:"model,omitempty"`
	NoReply   bool         `json:"noReply,omitempty"`
	Parts     []PromptPart `json:"parts"`
}

// PromptPart is one text part of a prompt.
type PromptPart struct {
	Type      string         `json:"type"` // "text"
	Text      string         `json:"text"`
	Synthetic bool           `json:"synthetic,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Client talks to one OpenCode server for one project directory. It is
// safe for concurrent use, and never retries: every call is sent once,
// and what its error means is for the caller to decide (see Kind).
type Client struct {
	cfg      Config
	hc       *http.Client
	root     string // scheme://host and the escaped path prefix, without a final "/"
	sessions string // the session routes' root: /session, or /api/session on v2
}
