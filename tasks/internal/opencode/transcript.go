package opencode

import "strings"

// After returns the messages after the one whose ID is baseline; all of
// them when baseline is "". When baseline is not in msgs (a limit cut it
// off, or the server dropped it) it returns the messages whose ID sorts
// after baseline: a server's message ids sort by creation time.
func After(msgs []Message, baseline string) []Message {
	if baseline == "" {
		return msgs
	}
	for i, m := range msgs {
		if m.Info.ID == baseline {
			return msgs[i+1:]
		}
	}
	var out []Message
	for _, m := range msgs {
		if m.Info.ID > baseline {
			out = append(out, m)
		}
	}
	return out
}

// Outcome is the judgement of a run by Judge.
type Outcome struct {
	// Done: the run is over (see Judge); the other fields are set only
	// then.
	Done bool
	// Error is the error recorded on the final message
	// (MessageError.Data.Message, else its Name); "" when it has none.
	Error string
	// Text is the final message's non-empty text parts, joined with "\n".
	Text string
	// Reasoning is its non-empty reasoning parts, joined with "\n".
	Reasoning string
	// MessageID is the final message's ID.
	MessageID string
}

// Judge judges whether a run ended. It did when the last message of msgs
// is an assistant message that is completed (time.completed is set),
// whose finish is not "tool-calls" or "unknown" (the model would go on),
// and none of whose tool parts is still pending or running (every tool
// part's state is "completed" or "error"). An aborted or failed run ends
// that way too, with Error set.
//
// The transcript is in id order, and an id a client chose for its prompt
// (NewMessageID) sorts after the server's ids of the same millisecond, so
// a reply the server starts in that millisecond sorts before the prompt
// it answers. So when the last message is a user message that has
// replies (assistant messages whose parentID names it), the last of them
// is the run's final message.
func Judge(msgs []Message) Outcome {
	if len(msgs) == 0 {
		return Outcome{}
	}
	m := msgs[len(msgs)-1]
	if m.Info.Role == "user" {
		for i := len(msgs) - 2; i >= 0; i-- {
			if msgs[i].Info.Role == "assistant" && msgs[i].Info.ParentID == m.Info.ID {
				m = msgs[i]
				break
			}
		}
	}
	if m.Info.Role != "assistant" || m.Info.Time.Completed == 0 ||
		m.Info.Finish == "tool-calls" || m.Info.Finish == "unknown" {
		return Outcome{}
	}
	var text, reasoning []string
	for _, p := range m.Parts {
		switch p.Type {
		case "tool":
			if p.State == nil || p.State.Status != "completed" && p.State.Status != "error" {
				return Outcome{}
			}
		case "text":
			if p.Text != "" {
				text = append(text, p.Text)
			}
		case "reasoning":
			if p.Text != "" {
				reasoning = append(reasoning, p.Text)
			}
		}
	}
	o := Outcome{Done: true, Text: strings.Join(text, "\n"), Reasoning: strings.Join(reasoning, "\n"), MessageID: m.Info.ID}
	if e := m.Info.Error; e != nil {
		o.Error = e.Data.Message
		if o.Error == "" {
			o.Error = e.Name
		}
	}
	return o
}

// LastID returns the ID of the last message, "" when there is none: the
// baseline to capture before a prompt, for After.
func LastID(msgs []Message) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].Info.ID
}

// LastUserID returns the ID of the last message whose role is "user", ""
// when there is none.
func LastUserID(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Info.Role == "user" {
			return msgs[i].Info.ID
		}
	}
	return ""
}

// HasID reports whether a message with this ID is in msgs.
func HasID(msgs []Message, id string) bool {
	for _, m := range msgs {
		if m.Info.ID == id {
			return true
		}
	}
	return false
}

// ExternalUser reports whether m is a real message from the user, rather
// than one a plugin or the server sent on the user's behalf. It is when
// its role is "user" (or empty), it has parts, none of them is an
// internal-initiator part, and at least one is not synthetic and is a
// text part with text, a file or an image.
func ExternalUser(m Message) bool {
	if m.Info.Role != "user" && m.Info.Role != "" || len(m.Parts) == 0 {
		return false
	}
	genuine := false
	for _, p := range m.Parts {
		if internalInitiator(p) {
			return false
		}
		if !p.Synthetic && (p.Type == "text" && p.Text != "" || p.Type == "file" || p.Type == "image") {
			genuine = true
		}
	}
	return genuine
}

// The metadata that marks a part as sent internally: the task tools'
// own key (flat, or nested under the plugin's name), and the key the
// server puts on the continuation it sends after compacting a session.
const (
	initiatorKey     = "oh-my-opencode-slim.internalInitiator"
	initiatorPlugin  = "oh-my-opencode-slim"
	initiatorNested  = "internalInitiator"
	compactionMarker = "compaction_continue"
)

// InternalPart is a text part the task tools send on their own account:
// synthetic and marked as sent internally, so that no reader takes it for
// the user's words (ExternalUser is false for a message holding one).
func InternalPart(text string) PromptPart {
	return PromptPart{Type: "text", Text: text, Synthetic: true, Metadata: map[string]any{initiatorKey: true}}
}

// internalInitiator reports whether p is a synthetic text part marked as
// sent internally.
func internalInitiator(p Part) bool {
	if p.Type != "text" || !p.Synthetic || p.Metadata == nil {
		return false
	}
	if p.Metadata[initiatorKey] == true || p.Metadata[compactionMarker] == true {
		return true
	}
	nested, ok := p.Metadata[initiatorPlugin].(map[string]any)
	return ok && nested[initiatorNested] == true
}
