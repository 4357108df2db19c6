package loopguard

import (
	"encoding/json"
	"sort"
	"time"
)

// recordVersion is the version of the session file format.
const recordVersion = 1

// State is one session's record. It holds hashes only, never arguments or
// outputs.
type State struct {
	Version   int       `json:"version"`
	Session   string    `json:"session"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Last is the most recent completed eligible call.
	Last Last `json:"last"`
	// Pending links a before to its after: callID to the args fingerprint.
	Pending map[string]Pending `json:"pending,omitempty"`
}

// Last is the current run: the args fingerprint of the most recent completed
// eligible call, how many identical results in a row it returned, and the
// fingerprint of its latest result.
type Last struct {
	Args   string `json:"args,omitempty"`
	Runs   int    `json:"runs"`
	Output string `json:"output,omitempty"`
}

// Pending is a call seen in before whose after has not come yet.
type Pending struct {
	Args      string    `json:"args"`
	CreatedAt time.Time `json:"createdAt"`
}

// PendingTTL is how long a pending entry waits for its after. v1 hosts send
// no after for a failed call, so entries would otherwise pile up.
const PendingTTL = 15 * time.Minute

// maxPending bounds the pending map of one session; the oldest go first.
const maxPending = 1024

// newState returns the empty record of a session.
func newState(session string) *State {
	return &State{Version: recordVersion, Session: session, Pending: map[string]Pending{}}
}

// decodeState parses a session file. It reports false for anything that is
// not a well-formed record of this session (a torn, corrupt or foreign
// file), which the caller treats as an empty session.
func decodeState(data []byte, session string) (*State, bool) {
	var st State
	if err := json.Unmarshal(data, &st); err != nil || st.Version != recordVersion || st.Session != session || st.Last.Runs < 0 {
		return nil, false
	}
	if st.Pending == nil {
		st.Pending = map[string]Pending{}
	}
	return &st, true
}

// prune drops pending entries older than PendingTTL and keeps at most
// maxPending of the newest.
func (st *State) prune(now time.Time) {
	for id, p := range st.Pending {
		if now.Sub(p.CreatedAt) > PendingTTL {
			delete(st.Pending, id)
		}
	}
	if len(st.Pending) <= maxPending {
		return
	}
	ids := make([]string, 0, len(st.Pending))
	for id := range st.Pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return st.Pending[ids[i]].CreatedAt.Before(st.Pending[ids[j]].CreatedAt) })
	for _, id := range ids[:len(ids)-maxPending] {
		delete(st.Pending, id)
	}
}
