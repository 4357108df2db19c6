// Package loopguard stops an agent that keeps making the same tool call and
// getting the same result. A run grows only when an after confirms a result
// identical to the last one for identical args (so parallel befores cannot
// inflate it); from the 3rd identical result a notice is appended to the
// output, and from then on a 6th identical read, grep or glob is refused
// before it runs, until a different call completes. Delegation and task
// tools (task, task_status, wait_for_user, ...) are not looked at.
//
// Each hook phase runs in its own process, so the per-session state lives in
// a small locked file (see Store); any store failure lets the call pass.
package loopguard

import (
	"fmt"
	"strings"
	"time"
)

// Marker opens every notice; a result that already holds it gets no second
// notice.
const Marker = "[REPEATED TOOL CALLS - STOP]"

// Thresholds: the notice from the noticeAt-th identical result, the refusal
// of a read, grep or glob once refuseAt identical results were seen.
const (
	noticeAt = 3
	refuseAt = 5
)

// exempt reports whether the lower-cased tool skips both phases: it neither
// counts nor breaks a run.
func exempt(lower string) bool {
	switch lower {
	case "task", "task_status", "task_result", "task_cancel",
		"task_message", "task_revive", "wait_for_user", "wait_for_background_tasks":
		return true
	}
	return false
}

// refusable reports whether the lower-cased tool is refused after refuseAt
// identical results; every other eligible tool only gets the notice.
func refusable(lower string) bool { return lower == "read" || lower == "grep" || lower == "glob" }

// untrackedPrefix starts the key of a result whose before was never seen
// (unknown callID, reset, expired entry). Real keys are 32 hex digits, so
// no real fingerprint can equal it.
const untrackedPrefix = "untracked:"

// Guard applies the loop guard rules to a Store.
type Guard struct {
	Store *Store
	Now   func() time.Time
}

func (g *Guard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Before checks a call about to run. It returns the refusal message when
// the call must not run, else "" after recording callID -> args fingerprint
// for the after. It never advances a run, so parallel calls cannot inflate
// the count. Calls without a session and exempt tools are not looked at.
func (g *Guard) Before(tool, sessionID, callID string, args any) (string, error) {
	lower := strings.ToLower(tool)
	if sessionID == "" || exempt(lower) {
		return "", nil
	}
	key := fingerprint(lower, args)
	refusal := ""
	err := g.Store.update(sessionID, func(st *State) bool {
		if refusable(lower) && st.Last.Args == key && st.Last.Runs >= refuseAt {
			refusal = refusalText(tool, st.Last.Runs)
			return false
		}
		st.Pending[callID] = Pending{Args: key, CreatedAt: g.now().UTC()}
		return true
	})
	return refusal, err
}

// After records a completed call's result and returns the notice to append
// ("" for none). output is output.output as the host gave it; only a string
// that does not already hold Marker gets a notice. A status of error counts
// like any other result.
func (g *Guard) After(tool, sessionID, callID string, output any) (string, error) {
	lower := strings.ToLower(tool)
	if sessionID == "" || exempt(lower) {
		return "", nil
	}
	outHash := fingerprint(lower, output)
	runs := 0
	err := g.Store.update(sessionID, func(st *State) bool {
		p, ok := st.Pending[callID]
		delete(st.Pending, callID)
		switch {
		case ok && p.Args == st.Last.Args:
			if outHash == st.Last.Output {
				st.Last.Runs++
			} else {
				st.Last.Runs = 1
			}
		case ok:
			st.Last.Args, st.Last.Runs = p.Args, 1
		default:
			st.Last.Args, st.Last.Runs = untrackedPrefix+lower, 1
		}
		st.Last.Output = outHash
		runs = st.Last.Runs
		return true
	})
	if err != nil {
		return "", err
	}
	s, isString := output.(string)
	if runs >= noticeAt && isString && !strings.Contains(s, Marker) {
		return noticeText(runs), nil
	}
	return "", nil
}

// Reset forgets a session (session.deleted). It reports whether the session
// had state.
func (g *Guard) Reset(sessionID string) (bool, error) {
	if sessionID == "" {
		return false, nil
	}
	return g.Store.Delete(sessionID)
}

// noticeText is the text appended to the result of the runs-th identical
// call. It begins with a newline, then the marker.
func noticeText(runs int) string {
	return fmt.Sprintf("\n%s\n"+
		"This is call number %d in a row with exactly the same arguments, and it returned exactly the same result again. "+
		"Calling it again will not tell you anything new: you are stuck in an infinite loop.\n"+
		"Before your next step:\n"+
		"1. Stop and think about what you actually still need to know.\n"+
		"2. If you need more, make a different call: other arguments or another tool.\n"+
		"3. If you already have enough, stop calling tools and write your final answer.\n", Marker, runs)
}

// refusalText is the block message for a refused call.
func refusalText(tool string, runs int) string {
	return fmt.Sprintf("Refusing to execute %q: the same call with the same arguments has already returned the same result %d times in a row. "+
		"Running it again would only continue an infinite loop, so it was not run. "+
		"Use what those results told you: make a different call, or give your final answer now.", tool, runs)
}
