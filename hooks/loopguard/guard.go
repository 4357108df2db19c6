// Package loopguard stops an agent that keeps making the same tool call and
// getting the same result. A run grows only when an after reports a result
// identical to the last one for identical args; from the 3rd identical result
// a notice is appended to the output, and from then on a 6th identical read,
// grep or glob is refused before it runs, until a different call completes.
// Delegation and task tools (task, task_status, wait_for_user, ...) are not
// looked at.
//
// Each hook phase runs in its own process, so the per-session state lives in
// a small locked file (see Store). Only after writes it: the host gives after
// the call's arguments, so the count is keyed there, and before only reads
// the record the last after wrote. Parallel calls therefore cannot inflate a
// run, and a tool that can never be refused needs no before at all (Phases
// says which phases matter for which tool). Any store failure lets the call
// pass.
package loopguard

import (
	"fmt"
	"slices"
	"strings"
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

// exemptTools are the lower-cased tools that skip both phases: they neither
// count nor break a run.
func exemptTools() []string {
	return []string{"task", "task_status", "task_result", "task_cancel",
		"task_message", "task_revive", "wait_for_user", "wait_for_background_tasks"}
}

// refusableTools are the lower-cased tools refused after refuseAt identical
// results; every other eligible tool only gets the notice.
func refusableTools() []string { return []string{"read", "grep", "glob"} }

func exempt(lower string) bool    { return slices.Contains(exemptTools(), lower) }
func refusable(lower string) bool { return slices.Contains(refusableTools(), lower) }

// Phases reports in which hook phases the guard acts on a call of tool (in
// any case: its rules ignore case). Before matters only for the tools it
// can refuse, after for every tool it counts; an exempt tool needs neither.
func Phases(tool string) (before, after bool) {
	lower := strings.ToLower(tool)
	if exempt(lower) {
		return false, false
	}
	return refusable(lower), true
}

// NamedTools are the lower-cased tools the guard's rules name: the ones it
// can refuse and the exempt ones. Phases gives every other tool after only.
func NamedTools() []string { return append(refusableTools(), exemptTools()...) }

// untrackedPrefix starts the key of a result whose arguments the after did
// not carry. Real keys are 32 hex digits, so no real fingerprint can equal
// it, and such a result always starts a new run.
const untrackedPrefix = "untracked:"

// Guard applies the loop guard rules to a Store.
type Guard struct {
	Store *Store
}

// Before checks a call about to run. It returns the refusal message when
// the call must not run, else "". It only reads the session's record, and
// takes no lock: the record is replaced whole by every after, so Before
// sees the last one written and never a mix. It writes nothing, so parallel
// calls cannot inflate a run. A tool that cannot be refused, and a call
// without a session, are not looked at.
func (g *Guard) Before(tool, sessionID string, args any) (string, error) {
	lower := strings.ToLower(tool)
	if sessionID == "" || !refusable(lower) {
		return "", nil
	}
	st, err := g.Store.peek(sessionID)
	if err != nil {
		return "", err
	}
	if st.Last.Runs >= refuseAt && st.Last.Args == fingerprint(lower, args) {
		return refusalText(tool, st.Last.Runs), nil
	}
	return "", nil
}

// After records a completed call's result and returns the notice to append
// ("" for none). args are the arguments the call ran with (as the host gives
// them to after: those of before, after any guard changed them); a nil args
// means the after did not carry them, and the result starts a new run.
// output is output.output as the host gave it; only a string that does not
// already hold Marker gets a notice. A status of error counts like any
// other result.
func (g *Guard) After(tool, sessionID string, args, output any) (string, error) {
	lower := strings.ToLower(tool)
	if sessionID == "" || exempt(lower) {
		return "", nil
	}
	key := untrackedPrefix + lower
	if args != nil {
		key = fingerprint(lower, args)
	}
	outHash := fingerprint(lower, output)
	runs := 0
	err := g.Store.update(sessionID, func(st *State) bool {
		if args != nil && key == st.Last.Args && outHash == st.Last.Output {
			st.Last.Runs++
		} else {
			st.Last = Last{Args: key, Runs: 1, Output: outHash}
		}
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
