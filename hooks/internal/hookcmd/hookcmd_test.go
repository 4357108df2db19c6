package hookcmd

import (
	"strings"
	"testing"
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
