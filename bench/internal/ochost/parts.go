package ochost

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Part is one tool part of a run, as the host reported it when the call
// ended.
type Part struct {
	Tool   string
	CallID string
	// Status is the host's: "completed" or "error".
	Status string
	Input  json.RawMessage
	Output string
	Error  string
	// Start and End are the host's clock, in milliseconds since the epoch.
	Start, End int64
}

// Duration is the call's time as the host measured it, from running to
// result, plugin hooks included.
func (p Part) Duration() time.Duration { return time.Duration(p.End-p.Start) * time.Millisecond }

// ParseParts reads the tool parts of a run's JSON events (one event a
// line; lines that are not JSON are skipped, as the host may print
// others) and the session they belong to. A tool part without a start or
// with an end before its start cannot be timed and is an error.
func ParseParts(stdout []byte) ([]Part, string, error) {
	var out []Part
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
		if st.Time.Start == 0 || st.Time.End < st.Time.Start {
			return nil, "", newErr(Output, CodePartNoTime, fmt.Sprintf("the %s part %s has no usable time (start %d, end %d)", ev.Part.Tool, ev.Part.CallID, st.Time.Start, st.Time.End), nil)
		}
		out = append(out, Part{Tool: ev.Part.Tool, CallID: ev.Part.CallID, Status: st.Status, Input: st.Input,
			Output: st.Output, Error: st.Error, Start: st.Time.Start, End: st.Time.End})
	}
	if err := sc.Err(); err != nil {
		return nil, "", newErr(Output, CodeEvents, "reading the host's events: "+err.Error(), err)
	}
	return out, session, nil
}
