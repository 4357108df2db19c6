package opencode

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeStatus feeds the status map decoder arbitrary bodies: it must
// not panic, must accept only JSON objects, and every session must get
// exactly one verdict.
func FuzzDecodeStatus(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":{"type":"busy"}}`, `{"a":{"type":"retry","attempt":2,"message":"m","next":5}}`,
		`{"a":{"type":"idle"},"b":{"type":"image_processing"},"c":{"type":"x"},"d":1}`,
		`{"type":"busy"}`, `{"status":{}}`, `[]`, `"x"`, `null`, ``, `{"a":`, `{"a":{"type":null}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := decodeStatus(body)
		if err != nil {
			e, ok := AsError(err)
			if !ok || e.Kind != Malformed || e.Message != msgStatusNotObject && e.Message != msgStatusNotMap {
				t.Fatalf("error %#v", err)
			}
			if m.Observe("a") != (Observation{Err: StatusUnavailable}) {
				t.Fatal("a refused map observes something")
			}
			return
		}
		var top map[string]json.RawMessage
		if firstByte(body) != '{' || json.Unmarshal(body, &top) != nil {
			t.Fatalf("accepted %q, which is not a JSON object", body)
		}
		if _, ok := top["type"]; ok {
			t.Fatalf("accepted a top-level type key: %q", body)
		}
		for id := range top {
			o := m.Observe(id)
			verdicts := 0
			for _, set := range []bool{o.Known, o.Absent, o.Err != ""} {
				if set {
					verdicts++
				}
			}
			if verdicts != 1 || o.Known != (o.Live != LiveNone) {
				t.Fatalf("Observe(%q) = %+v", id, o)
			}
		}
		for _, id := range m.IDs() {
			if _, ok := top[id]; !ok || m.Observe(id).Absent {
				t.Fatalf("IDs lists %q, which has no live or malformed entry", id)
			}
		}
	})
}

// FuzzDecodeMessages feeds the transcript decoder arbitrary bodies: it
// must not panic, and must accept only a JSON array of objects that each
// have a string info.role.
func FuzzDecodeMessages(f *testing.F) {
	for _, seed := range []string{
		`[]`, `[{"info":{"id":"msg_1","role":"user"},"parts":[{"type":"text","text":"hi"}]}]`,
		`[{"info":{"role":"assistant","time":{"created":1,"completed":2},"finish":"stop","error":{"name":"E","data":{"message":"m"}}},"parts":[{"type":"tool","state":{"status":"completed"}}]}]`,
		`[{"info":{}}]`, `[{"info":{"role":1}}]`, `[null]`, `[1]`, `{}`, `null`, ``, `[{"info":{"role":"user"},"parts":{}}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, err := decodeMessages(body)
		if err != nil {
			return
		}
		var elems []map[string]json.RawMessage
		if firstByte(body) != '[' || json.Unmarshal(body, &elems) != nil || len(elems) != len(msgs) {
			t.Fatalf("accepted %q as %d messages", body, len(msgs))
		}
		for i, e := range elems {
			var info struct{ Role *string }
			if e == nil || json.Unmarshal(e["info"], &info) != nil || info.Role == nil || *info.Role != msgs[i].Info.Role {
				t.Fatalf("message %d of %q has no string info.role, or another than %q", i, body, msgs[i].Info.Role)
			}
		}
		again, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := decodeMessages(again); err != nil || len(back) != len(msgs) {
			t.Fatalf("the decoded messages do not decode again: %v", err)
		}
	})
}
