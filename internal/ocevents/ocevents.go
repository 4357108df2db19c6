// Package ocevents reads what `opencode run --format json` prints: one JSON
// event a line. The real-host end-to-end tests and the real-host benchmarks
// both read the tool parts of a run from it.
package ocevents

import (
	"bufio"
	"bytes"
	"encoding/json"
	"time"
)

// ToolPart is one tool part of a run, as the host reported it when the
// call ended (a "tool_use" event).
type ToolPart struct {
	Tool   string
	CallID string
	// Status is the host's: "completed" or "error".
	Status string
	Input  json.RawMessage
	Output string
	Error  string
	// Start and End are the host's clock, in milliseconds since the epoch
	// (0 when the host gave none).
	Start, End int64
}

// Duration is the call's time as the host measured it, from running to
// result, plugin hooks included.
func (p ToolPart) Duration() time.Duration { return time.Duration(p.End-p.Start) * time.Millisecond }

// Parse returns the tool parts of a run's events, in order, and the session
// they belong to (the first event's). Lines that are not JSON are skipped,
// as the host may print others; the error is the reading's only (a line
// over 64 MiB).
func Parse(stdout []byte) ([]ToolPart, string, error) {
	var out []ToolPart
	session := ""
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct {
			Type      string `json:"type"`
			SessionID string `json:"sessionID"`
			Part      struct {
				Tool   string `json:"tool"`
				CallID string `json:"callID"`
				State  struct {
					Status string          `json:"status"`
					Input  json.RawMessage `json:"input"`
					Output string          `json:"output"`
					Error  string          `json:"error"`
					Time   struct {
						Start int64 `json:"start"`
						End   int64 `json:"end"`
					} `json:"time"`
				} `json:"state"`
			} `json:"part"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if session == "" {
			session = ev.SessionID
		}
		if ev.Type != "tool_use" {
			continue
		}
		st := ev.Part.State
		out = append(out, ToolPart{Tool: ev.Part.Tool, CallID: ev.Part.CallID, Status: st.Status, Input: st.Input,
			Output: st.Output, Error: st.Error, Start: st.Time.Start, End: st.Time.End})
	}
	return out, session, sc.Err()
}
