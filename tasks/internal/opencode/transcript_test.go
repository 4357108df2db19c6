package opencode

import (
	"slices"
	"testing"
)

func msg(id, role string, parts ...Part) Message {
	return Message{Info: MessageInfo{ID: id, Role: role}, Parts: parts}
}

// done is a completed assistant message.
func done(id, finish string, parts ...Part) Message {
	m := msg(id, "assistant", parts...)
	m.Info.Time = MessageTime{Created: 1, Completed: 2}
	m.Info.Finish = finish
	return m
}

func text(s string) Part      { return Part{Type: "text", Text: s} }
func reasoning(s string) Part { return Part{Type: "reasoning", Text: s} }
func tool(status string) Part {
	p := Part{Type: "tool", Tool: "bash"}
	if status != "" {
		p.State = &ToolState{Status: status}
	}
	return p
}

func ids(msgs []Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.Info.ID)
	}
	return out
}

func TestAfter(t *testing.T) {
	msgs := []Message{msg("msg_1", "user"), msg("msg_2", "assistant"), msg("msg_4", "user"), msg("msg_5", "assistant")}
	tests := []struct {
		name, baseline string
		want           []string
	}{
		{"no baseline: all", "", []string{"msg_1", "msg_2", "msg_4", "msg_5"}},
		{"after the first", "msg_1", []string{"msg_2", "msg_4", "msg_5"}},
		{"after the last: none", "msg_5", []string{}},
		{"a baseline no longer listed: the ids that sort after it", "msg_3", []string{"msg_4", "msg_5"}},
		{"a baseline after everything", "msg_9", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(After(msgs, tt.baseline)); !slices.Equal(got, tt.want) {
				t.Errorf("After(%q) = %v, want %v", tt.baseline, got, tt.want)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	failed := done("msg_9", "")
	failed.Info.Error = &MessageError{Name: "MessageAbortedError"}
	failed.Info.Error.Data.Message = "Aborted"
	nameOnly := done("msg_9", "")
	nameOnly.Info.Error = &MessageError{Name: "ProviderAuthError"}
	pending := msg("msg_9", "assistant", text("half"))
	pending.Info.Finish = "stop"

	tests := []struct {
		name string
		msgs []Message
		want Outcome
	}{
		{"nothing yet", nil, Outcome{}},
		{"the last message is the user's", []Message{done("msg_1", "stop", text("old")), msg("msg_2", "user", text("go"))}, Outcome{}},
		{"a reply sorted before the prompt it answers", []Message{msg("msg_0", "user", text("first")), done("msg_1", "stop", text("old")), parented(done("msg_2", "stop", text("new")), "msg_3"), msg("msg_3", "user", text("go"))},
			Outcome{Done: true, Text: "new", MessageID: "msg_2"}},
		{"a pending reply sorted before its prompt", []Message{parented(pending, "msg_99"), msg("msg_99", "user", text("go"))}, Outcome{}},
		{"finished with text and reasoning", []Message{msg("msg_1", "user"), done("msg_2", "stop", reasoning("think"), text("one"), tool("completed"), text(""), text("two"), reasoning("more"))},
			Outcome{Done: true, Text: "one\ntwo", Reasoning: "think\nmore", MessageID: "msg_2"}},
		{"a finish other than the two that go on", []Message{done("msg_2", "length", text("cut"))}, Outcome{Done: true, Text: "cut", MessageID: "msg_2"}},
		{"no finish at all", []Message{done("msg_2", "", text("x"))}, Outcome{Done: true, Text: "x", MessageID: "msg_2"}},
		{"not completed", []Message{pending}, Outcome{}},
		{"about to call tools", []Message{done("msg_2", "tool-calls", text("x"))}, Outcome{}},
		{"an unknown finish", []Message{done("msg_2", "unknown", text("x"))}, Outcome{}},
		{"a tool still running", []Message{done("msg_2", "stop", tool("running"), text("x"))}, Outcome{}},
		{"a tool pending", []Message{done("msg_2", "stop", tool("pending"))}, Outcome{}},
		{"a tool without a state", []Message{done("msg_2", "stop", tool(""))}, Outcome{}},
		{"a failed tool is over", []Message{done("msg_2", "stop", tool("error"), text("x"))}, Outcome{Done: true, Text: "x", MessageID: "msg_2"}},
		{"aborted, with the error's message", []Message{failed}, Outcome{Done: true, Error: "Aborted", MessageID: "msg_9"}},
		{"an error with only a name", []Message{nameOnly}, Outcome{Done: true, Error: "ProviderAuthError", MessageID: "msg_9"}},
		{"a completed user message is not a result", []Message{func() Message { m := done("msg_2", "stop", text("x")); m.Info.Role = "user"; return m }()}, Outcome{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Judge(tt.msgs); got != tt.want {
				t.Errorf("Judge = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLastIDs(t *testing.T) {
	tests := []struct {
		name               string
		msgs               []Message
		wantLast, wantUser string
	}{
		{"none", nil, "", ""},
		{"a user message last", []Message{msg("msg_1", "assistant"), msg("msg_2", "user")}, "msg_2", "msg_2"},
		{"an assistant message last", []Message{msg("msg_1", "user"), msg("msg_2", "user"), msg("msg_3", "assistant")}, "msg_3", "msg_2"},
		{"no user message", []Message{msg("msg_1", "assistant")}, "msg_1", ""},
		{"an empty role is not a user's for this", []Message{msg("msg_1", "user"), msg("msg_2", "")}, "msg_2", "msg_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LastID(tt.msgs); got != tt.wantLast {
				t.Errorf("LastID = %q, want %q", got, tt.wantLast)
			}
			if got := LastUserID(tt.msgs); got != tt.wantUser {
				t.Errorf("LastUserID = %q, want %q", got, tt.wantUser)
			}
		})
	}
}

func TestHasID(t *testing.T) {
	msgs := []Message{msg("msg_1", "user"), msg("msg_2", "assistant")}
	for id, want := range map[string]bool{"msg_1": true, "msg_2": true, "msg_3": false, "": false, "msg": false} {
		if got := HasID(msgs, id); got != want {
			t.Errorf("HasID(%q) = %v, want %v", id, got, want)
		}
	}
	if HasID(nil, "msg_1") {
		t.Error("HasID(nil) is true")
	}
}

func TestExternalUser(t *testing.T) {
	synthetic := func(p Part) Part { p.Synthetic = true; return p }
	marked := func(md map[string]any) Part {
		return Part{Type: "text", Text: "internal", Synthetic: true, Metadata: md}
	}
	tests := []struct {
		name string
		m    Message
		want bool
	}{
		{"a text from the user", msg("m", "user", text("hello")), true},
		{"a role left out", msg("m", "", text("hello")), true},
		{"a file", msg("m", "user", Part{Type: "file"}), true},
		{"an image", msg("m", "user", Part{Type: "image"}), true},
		{"an assistant message", msg("m", "assistant", text("hello")), false},
		{"another role", msg("m", "system", text("hello")), false},
		{"no parts", msg("m", "user"), false},
		{"only an empty text", msg("m", "user", text("")), false},
		{"only synthetic parts", msg("m", "user", synthetic(text("note")), synthetic(Part{Type: "file"})), false},
		{"only other part types", msg("m", "user", Part{Type: "agent"}, Part{Type: "subtask"}), false},
		{"a synthetic note beside the user's text", msg("m", "user", synthetic(text("context")), text("hello")), true},
		{"marked internal (flat key)", msg("m", "user", marked(map[string]any{"oh-my-opencode-slim.internalInitiator": true}), text("hello")), false},
		{"marked internal (nested key)", msg("m", "user", text("hello"), marked(map[string]any{"oh-my-opencode-slim": map[string]any{"internalInitiator": true}})), false},
		{"a compaction continuation", msg("m", "user", marked(map[string]any{"compaction_continue": true}), text("go on")), false},
		{"a marker that is not true", msg("m", "user", marked(map[string]any{"oh-my-opencode-slim.internalInitiator": "yes", "compaction_continue": false}), text("hello")), true},
		{"a nested marker that is not true", msg("m", "user", marked(map[string]any{"oh-my-opencode-slim": map[string]any{"internalInitiator": 1}}), text("hello")), true},
		{"a marker on a part that is not synthetic", msg("m", "user", Part{Type: "text", Text: "hello", Metadata: map[string]any{"oh-my-opencode-slim.internalInitiator": true}}), true},
		{"a marker on a synthetic part that is not text", msg("m", "user", Part{Type: "file", Synthetic: true, Metadata: map[string]any{"compaction_continue": true}}, text("hello")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExternalUser(tt.m); got != tt.want {
				t.Errorf("ExternalUser = %v, want %v", got, tt.want)
			}
		})
	}
}

// parented is m as a reply to the message parent.
func parented(m Message, parent string) Message {
	m.Info.ParentID = parent
	return m
}
