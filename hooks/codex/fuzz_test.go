package codex

import (
	"testing"

	"github.com/slimgate/slim/hooks/internal/hookcmd/hookcmdtest"
)

// FuzzDecode feeds the request decoder arbitrary bytes, seeded with the
// documented-shape payloads. It must never panic; a request it accepts
// for apply_patch carries a string patch (package hookcmd fuzzes the rest
// of the shared decoding and peeking); one it refuses is this package's
// Malformed *Error.
func FuzzDecode(f *testing.F) {
	hookcmdtest.Seed(f, "testdata", `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":`)
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Decode(data)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Kind != Malformed || e.Code == "" {
				t.Fatalf("error %T %v is not a Malformed *Error", err, err)
			}
			return
		}
		tool := in.HookEventName == PreToolUse || in.HookEventName == PostToolUse
		if _, ok := in.ToolInput["command"].(string); tool && in.ToolName == PatchTool && !ok {
			t.Fatalf("accepted apply_patch without a string patch: %+v", in)
		}
	})
}
