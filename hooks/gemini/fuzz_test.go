package gemini

import (
	"regexp"
	"testing"

	"github.com/slimgate/slim/hooks/internal/hookcmd/hookcmdtest"
)

// FuzzDecode feeds the request decoder arbitrary bytes, seeded with the
// documented-shape payloads. It must never panic; a tool event it accepts
// names a tool and carries an input object; one it refuses is this
// package's Malformed *Error.
func FuzzDecode(f *testing.F) {
	hookcmdtest.Seed(f, "testdata", `{"hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":`)
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Decode(data)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Kind != Malformed || e.Code == "" {
				t.Fatalf("error %T %v is not a Malformed *Error", err, err)
			}
			return
		}
		if (in.HookEventName == BeforeTool || in.HookEventName == AfterTool) && (in.ToolName == "" || in.ToolInput == nil) {
			t.Fatalf("accepted a tool event without a tool or input: %+v", in)
		}
	})
}

// matches tests tool against matcher as Gemini CLI does (new
// RegExp(matcher).test(tool); Go's syntax agrees for these matchers).
func matches(t *testing.T, matcher, tool string) bool {
	t.Helper()
	re, err := regexp.Compile(matcher)
	if err != nil {
		t.Fatalf("matcher %q: %v", matcher, err)
	}
	return re.MatchString(tool)
}
