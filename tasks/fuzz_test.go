package tasks

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadRequest feeds arbitrary bytes to the request reader: it must
// return a request or a Usage error, never panic, and a request it
// accepts has a known flavor and arguments that are JSON.
func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{
		`{"args":{"task_id":"exp-1"},"context":{"sessionID":"ses_a","directory":"/p"},"host":{"serverUrl":"http://127.0.0.1:1"}}`,
		`{"args":null,"context":{},"host":{"flavor":"v2"}}`,
		`{"args":{}} {}`,
		`{"context":{"sessionID":1}}`,
		`[]`, ``, `{"extra":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := ReadRequest(bytes.NewReader(data))
		if err != nil {
			if e, ok := AsError(err); !ok || e.Kind != Usage {
				t.Fatalf("error %v is not a Usage error", err)
			}
			return
		}
		switch req.Host.Flavor {
		case "", "v1", "v2":
		default:
			t.Fatalf("accepted flavor %q", req.Host.Flavor)
		}
		if len(req.Args) == 0 {
			t.Fatal("accepted a request with no arguments value")
		}
	})
}

// FuzzParseNativeOutput feeds arbitrary text as the host task tool's
// output: whatever it finds must be a session ID or nothing.
func FuzzParseNativeOutput(f *testing.F) {
	for _, s := range []string{
		`<task id="ses_abc" state="running">` + "\n<summary>x</summary>\n</task>",
		"task_id: ses_abc\nstate: running\n\n<task_result>\nok\n</task_result>",
		`<task id="../../x" state="completed"><task_result>a</task_result>`,
		`<task id="`, "task_id:", "<task_result>", "<task_error></task_error><task_result>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		id, state, text := parseNativeOutput(out)
		if id != "" && !isSessionID(id) {
			t.Fatalf("id %q is not a session ID", id)
		}
		if id != "" && !strings.Contains(out, id) {
			t.Fatalf("id %q is not in the output", id)
		}
		if !strings.Contains(out, text) || !strings.Contains(out, state) {
			t.Fatalf("state %q or text %q is not from the output", state, text)
		}
	})
}

func TestParseNativeOutputReadsBothForms(t *testing.T) {
	cases := []struct{ out, id, state, text string }{
		{`<task id="ses_a1" state="running">` + "\n<summary>Background task started</summary>\n</task>", "ses_a1", "running", ""},
		{`<task id="ses_a1" state="completed">` + "\n<task_result>\nfound it\n</task_result>\n</task>", "ses_a1", "completed", "found it"},
		{`<task id="ses_a1" state="error">` + "\n<task_error>\nboom\n</task_error>\n</task>", "ses_a1", "error", "boom"},
		{"task_id: ses_b2\nstate: running\n\n<task_result>\nBackground task started.\n</task_result>", "ses_b2", "running", "Background task started."},
		{"task_id: ses_c3 (for resuming to continue this task if needed)\n\n<task_result>\nx\n</task_result>", "ses_c3", "", "x"},
		{`<task id="sess_bad" state="running">`, "", "running", ""},
		{"nothing", "", "", ""},
	}
	for _, c := range cases {
		id, state, text := parseNativeOutput(c.out)
		if id != c.id || state != c.state || text != c.text {
			t.Errorf("parseNativeOutput(%q) = %q, %q, %q; want %q, %q, %q", c.out, id, state, text, c.id, c.state, c.text)
		}
	}
}
