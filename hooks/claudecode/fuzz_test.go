package claudecode

import (
	"testing"

	"github.com/slimgate/slim/hooks/internal/hookcmd/hookcmdtest"
)

// FuzzDecode feeds the request decoder arbitrary bytes, seeded with the
// documented-shape payloads. It must never panic; a request it accepts
// names its event, and for the tool events a tool and an input object; one
// it refuses is this package's Malformed *Error. (Package hookcmd fuzzes
// the shared decoding and peeking.)
func FuzzDecode(f *testing.F) {
	hookcmdtest.Seed(f, "testdata", `{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":`)
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Decode(data)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Kind != Malformed || e.Code == "" {
				t.Fatalf("error %T %v is not a Malformed *Error", err, err)
			}
			return
		}
		if in.HookEventName == "" {
			t.Fatal("accepted a request without hook_event_name")
		}
		if (in.HookEventName == PreToolUse || in.HookEventName == PostToolUse) && (in.ToolName == "" || in.ToolInput == nil) {
			t.Fatalf("accepted a tool event without a tool or input: %+v", in)
		}
	})
}
