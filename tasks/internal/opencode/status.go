package opencode

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
)

// ErrNoStatusMap is the message of Status on a v2 host, which keeps no
// live status map: nothing it has says a session is running.
const ErrNoStatusMap = "the host serves OpenCode's v2 API, which has no live status map"

// Live is what a live status entry says a session is doing.
type Live string

// The values of Live.
const (
	LiveBusy  Live = "busy"  // running (image_processing counts as busy)
	LiveRetry Live = "retry" // waiting to retry a failed model call
	LiveNone  Live = ""      // no live entry
)

// The texts of Observation.Err, for the task tools to print.
const (
	// MalformedEntry: the map is valid, but this session's entry is not
	// one of busy, retry, image_processing or idle.
	MalformedEntry = "malformed live status entry for session"
	// StatusUnavailable: the StatusMap was not read from a server (its
	// zero value); nothing can be said about any session.
	StatusUnavailable = "live status unavailable"
)

// StatusEntry is one raw entry of the live status map: Type "busy",
// "retry" (with Attempt, Message and Next, the Unix milliseconds of the
// next try) or "image_processing". A detail field of an unexpected type
// is left zero: only Type decides what the entry means.
type StatusEntry struct {
	Type    string `json:"type"`
	Attempt int    `json:"attempt,omitempty"`
	Message string `json:"message,omitempty"`
	Next    int64  `json:"next,omitempty"`
}

// Observation is what the live status map says about one session. Exactly
// one of Known, Absent and Err is set.
type Observation struct {
	// Live is busy or retry when Known, else LiveNone.
	Live Live
	// Known: the map has a valid busy, retry or image_processing entry.
	Known bool
	// Absent: the map is valid and has no entry for the session (or an
	// explicit idle one): the session is idle.
	Absent bool
	// Entry is the raw entry, when there is one.
	Entry StatusEntry
	// Err says why nothing is known (MalformedEntry, StatusUnavailable).
	Err string
}

// StatusMap is the live status map (GET /session/status): for each
// session that is running, what it is doing. A server removes idle
// sessions from it, so a session missing from a valid map is idle. The
// zero StatusMap is not a valid map: it observes StatusUnavailable for
// every session rather than absence, so that a map that was never read
// cannot make a running session look idle.
type StatusMap struct {
	valid bool
	obs   map[string]Observation // sessions with an entry other than idle
}

// Observe returns what the map says about a session.
func (m StatusMap) Observe(sessionID string) Observation {
	if !m.valid {
		return Observation{Err: StatusUnavailable}
	}
	if o, ok := m.obs[sessionID]; ok {
		return o
	}
	return Observation{Absent: true}
}

// IDs lists, sorted, the sessions the map has an entry for, malformed
// entries included; sessions with an explicit idle entry are left out,
// as they count as absent.
func (m StatusMap) IDs() []string {
	ids := make([]string, 0, len(m.obs))
	for id := range m.obs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// The messages of a status map that cannot be used at all.
const (
	msgStatusNotObject = "invalid session-status response"
	msgStatusNotMap    = "invalid session-status map response"
)

// decodeStatus judges a status map body. It must be a JSON object (an
// array, a scalar or broken JSON is refused: reading an array as an empty
// map would make every running session look idle) without a top-level
// "type" or "status" key (a single session's status, not a map). Then
// each entry is judged on its own: busy, retry and image_processing are
// live (image_processing is work in progress, so it counts as busy), idle
// counts as absent, and anything else is malformed for that session only.
func decodeStatus(raw []byte) (StatusMap, error) {
	top := object(raw)
	if top == nil {
		return StatusMap{}, statusMalformed(msgStatusNotObject, errors.New("not a JSON object"))
	}
	for _, k := range []string{"type", "status"} {
		if _, ok := top[k]; ok {
			return StatusMap{}, statusMalformed(msgStatusNotMap, errors.New(`a top-level "`+k+`" key`))
		}
	}
	m := StatusMap{valid: true, obs: make(map[string]Observation, len(top))}
	for id, e := range top {
		if o := observeEntry(e); !o.Absent {
			m.obs[id] = o
		}
	}
	return m, nil
}

func statusMalformed(msg string, cause error) *Error {
	return &Error{Kind: Malformed, Code: CodeMalformed, Status: http.StatusOK, Message: msg, Err: cause}
}

// observeEntry judges one entry of a valid map.
func observeEntry(raw json.RawMessage) Observation {
	fields := object(raw)
	var typ string
	if fields == nil || json.Unmarshal(fields["type"], &typ) != nil {
		return Observation{Err: MalformedEntry}
	}
	e := StatusEntry{Type: typ, Message: str(fields["message"])}
	_ = json.Unmarshal(fields["attempt"], &e.Attempt) // left 0 unless a number
	_ = json.Unmarshal(fields["next"], &e.Next)
	switch typ {
	case "busy", "image_processing":
		return Observation{Live: LiveBusy, Known: true, Entry: e}
	case "retry":
		return Observation{Live: LiveRetry, Known: true, Entry: e}
	case "idle":
		return Observation{Absent: true}
	}
	return Observation{Err: MalformedEntry, Entry: e}
}
