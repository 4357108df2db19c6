package loopguard

import (
	"encoding/json"
	"time"
)

// recordVersion is the version of the session file format.
const recordVersion = 1

// State is one session's record. It holds hashes only, never arguments or
// outputs.
//
// Records written before the count moved to after also held "pending", a
// map from callID to the args fingerprint of a call whose before had been
// seen. Such a record still decodes (the map is ignored, and dropped on the
// next write) and its run goes on.
type State struct {
	Version   int       `json:"version"`
	Session   string    `json:"session"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Last is the most recent completed eligible call.
	Last Last `json:"last"`
}

// Last is the current run: the args fingerprint of the most recent completed
// eligible call, how many identical results in a row it returned, and the
// fingerprint of its latest result.
type Last struct {
	Args   string `json:"args,omitempty"`
	Runs   int    `json:"runs"`
	Output string `json:"output,omitempty"`
}

// newState returns the empty record of a session.
func newState(session string) *State {
	return &State{Version: recordVersion, Session: session}
}

// decodeState parses a session file. It reports false for anything that is
// not a well-formed record of this session (a torn, corrupt or foreign
// file), which the caller treats as an empty session.
func decodeState(data []byte, session string) (*State, bool) {
	var st State
	if err := json.Unmarshal(data, &st); err != nil || st.Version != recordVersion || st.Session != session || st.Last.Runs < 0 {
		return nil, false
	}
	return &st, true
}
