package hookcmd

import (
	"strings"
	"testing"

	"github.com/slimgate/slim/internal/kinderr"
)

func TestDecodeReadsTurnIDOnlyForTheHostThatSendsIt(t *testing.T) {
	claude, codex := Host{Name: "claude-code"}, Host{Name: "codex", TurnID: true}
	cases := []struct {
		name    string
		host    Host
		payload string
		turn    string // the TurnID read
		code    string // the error's code, "" for none
	}{
		{"codex reads turn_id", codex, `{"hook_event_name":"Stop","turn_id":"t1"}`, "t1", ""},
		{"claude-code ignores turn_id", claude, `{"hook_event_name":"Stop","turn_id":"t1"}`, "", ""},
		{"claude-code ignores a turn_id of any type", claude, `{"hook_event_name":"Stop","turn_id":7}`, "", ""},
		{"codex refuses a turn_id that is not a string", codex, `{"hook_event_name":"Stop","turn_id":7}`, "", CodeBadField},
		{"a tool event needs its input", claude, `{"hook_event_name":"PreToolUse","tool_name":"Write"}`, "", CodeMissingField},
		{"one object only", codex, `{"hook_event_name":"Stop"} {}`, "", CodeBadJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, err := c.host.Decode([]byte(c.payload))
			if c.code != "" {
				e, ok := err.(*Error)
				if !ok || e.Code != c.code || !strings.HasPrefix(e.Message, c.host.Name+" hook request: ") {
					t.Fatalf("err = %v, want code %s from %s", err, c.code, c.host.Name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.TurnID != c.turn {
				t.Fatalf("TurnID = %q, want %q", in.TurnID, c.turn)
			}
		})
	}
}

func TestReadRefusesMoreThanMaxRequestBytes(t *testing.T) {
	data, err := Host{Name: "codex"}.Read(strings.NewReader(strings.Repeat(" ", MaxRequestBytes+10)))
	if e, ok := err.(*Error); !ok || e.Code != CodeTooLarge || len(data) != MaxRequestBytes+1 {
		t.Fatalf("err = %v, %d bytes", err, len(data))
	}
}

// A host's own tool events need a tool and its input; the default ones are
// then just other events.
func TestDecodeRequiresToolsForTheHostsToolEvents(t *testing.T) {
	gemini, claude := Host{Name: "gemini-cli", ToolEvents: []string{"BeforeTool", "AfterTool"}}, Host{Name: "claude-code"}
	cases := []struct {
		name    string
		host    Host
		payload string
		code    string // the error's code, "" for none
	}{
		{"BeforeTool needs a tool", gemini, `{"hook_event_name":"BeforeTool","tool_input":{}}`, CodeMissingField},
		{"AfterTool needs an input", gemini, `{"hook_event_name":"AfterTool","tool_name":"glob"}`, CodeMissingField},
		{"PreToolUse is another event for Gemini CLI", gemini, `{"hook_event_name":"PreToolUse"}`, ""},
		{"BeforeTool is another event for Claude Code", claude, `{"hook_event_name":"BeforeTool"}`, ""},
		{"a whole BeforeTool", gemini, `{"hook_event_name":"BeforeTool","tool_name":"glob","tool_input":{"pattern":"*"}}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.host.Decode([]byte(c.payload))
			if c.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if e, ok := err.(*Error); !ok || e.Code != c.code {
				t.Fatalf("err = %v, want code %s", err, c.code)
			}
		})
	}
}

// ReadInput hands the bytes to the adapter's decoder, and a request too
// large to decode comes back, bytes and all, as the adapter's own error.
func TestReadInputReturnsTheAdaptersError(t *testing.T) {
	type kind string
	h := Host{Name: "codex"}
	var got []byte
	decode := func(b []byte) (*Request, error) { got = b; return h.Decode(b) }
	in, data, err := ReadInput(h, strings.NewReader(`{"hook_event_name":"Stop"}`), kind("malformed"), decode)
	if err != nil || in.HookEventName != "Stop" || string(got) != string(data) {
		t.Fatalf("in %+v, data %q, decoded %q, err %v", in, data, got, err)
	}
	got = nil
	_, data, err = ReadInput(h, strings.NewReader(strings.Repeat(" ", MaxRequestBytes+10)), kind("malformed"), decode)
	e, ok := kinderr.As[kind](err)
	if !ok || e.Kind != "malformed" || e.Code != CodeTooLarge || len(data) != MaxRequestBytes+1 || got != nil {
		t.Fatalf("err = %v, %d bytes, decoded %d", err, len(data), len(got))
	}
}
