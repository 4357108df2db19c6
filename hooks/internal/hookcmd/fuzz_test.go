package hookcmd

import (
	"strings"
	"testing"

	"github.com/slimgate/slim/hooks/internal/hookcmd/hookcmdtest"
)

// FuzzDecode feeds the shared decoder arbitrary bytes, seeded with every
// host's documented-shape payloads. It must never panic; a request it
// accepts names its event, and for the tool events a tool and an input
// object; one it refuses is a Malformed *Error naming the host. Peek,
// which reads what did not decode, must not panic either, even on a
// cut-off request.
func FuzzDecode(f *testing.F) {
	hookcmdtest.Seed(f, "../../claudecode/testdata")
	hookcmdtest.Seed(f, "../../codex/testdata", `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":`)
	hookcmdtest.Seed(f, "../../gemini/testdata", `{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":`)
	f.Fuzz(func(t *testing.T, data []byte) {
		Peek(data)
		for _, h := range []Host{{Name: "claude-code"}, {Name: "codex", TurnID: true}, {Name: "gemini-cli", ToolEvents: []string{"BeforeTool", "AfterTool"}}} {
			in, err := h.Decode(data)
			if err != nil {
				e, ok := err.(*Error)
				if !ok || e.Kind != Malformed || e.Code == "" || !strings.HasPrefix(e.Message, h.Name+" hook request: ") {
					t.Fatalf("error %T %v is not a Malformed *Error of %s", err, err, h.Name)
				}
				continue
			}
			if in.HookEventName == "" {
				t.Fatal("accepted a request without hook_event_name")
			}
			if h.isToolEvent(in.HookEventName) && (in.ToolName == "" || in.ToolInput == nil) {
				t.Fatalf("accepted a tool event without a tool or input: %+v", in)
			}
			if !h.TurnID && in.TurnID != "" {
				t.Fatalf("%s read turn_id, which it does not send: %+v", h.Name, in)
			}
		}
	})
}
