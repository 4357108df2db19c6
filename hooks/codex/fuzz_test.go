package codex

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds the request decoder arbitrary bytes, seeded with the
// documented-shape payloads. It must never panic; a request it accepts
// names its event, for the tool events a tool and an input object, and for
// apply_patch a string patch; one it refuses is a Malformed *Error. peek,
// which reads what did not decode, must not panic either, even on a
// cut-off request.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(`{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Decode(data)
		peek(data)
		if err != nil {
			e, ok := err.(*Error)
			if !ok || e.Kind != Malformed || e.Code == "" {
				t.Fatalf("error %T %v is not a Malformed *Error", err, err)
			}
			return
		}
		if in.HookEventName == "" {
			t.Fatal("accepted a request without hook_event_name")
		}
		if in.HookEventName == PreToolUse || in.HookEventName == PostToolUse {
			if in.ToolName == "" || in.ToolInput == nil {
				t.Fatalf("accepted a tool event without a tool or input: %+v", in)
			}
			if _, ok := in.ToolInput["command"].(string); in.ToolName == PatchTool && !ok {
				t.Fatalf("accepted apply_patch without a string patch: %+v", in)
			}
		}
	})
}
