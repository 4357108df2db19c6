package ocevents

import (
	"reflect"
	"testing"
	"time"
)

func TestParseReadsToolPartsAndSkipsTheRest(t *testing.T) {
	stdout := "starting\n" +
		`{"type":"step_start","sessionID":"ses_1"}` + "\n" +
		`{"type":"tool_use","sessionID":"ses_1","part":{"tool":"read","callID":"c1","state":{"status":"completed","input":{"filePath":"a"},"output":"x","time":{"start":1000,"end":1042}}}}` + "\n" +
		`{"type":"text","sessionID":"ses_1"}` + "\n" +
		`{"type":"tool_use","sessionID":"ses_1","part":{"tool":"bash","callID":"c2","state":{"status":"error","error":"boom"}}}` + "\n"
	parts, session, err := Parse([]byte(stdout))
	if err != nil || session != "ses_1" {
		t.Fatalf("session %q, err %v", session, err)
	}
	want := []ToolPart{
		{Tool: "read", CallID: "c1", Status: "completed", Input: []byte(`{"filePath":"a"}`), Output: "x", Start: 1000, End: 1042},
		{Tool: "bash", CallID: "c2", Status: "error", Error: "boom"},
	}
	if !reflect.DeepEqual(parts, want) {
		t.Fatalf("parts\n got %+v\nwant %+v", parts, want)
	}
	if d := parts[0].Duration(); d != 42*time.Millisecond {
		t.Errorf("duration %v", d)
	}
}
