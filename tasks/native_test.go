package tasks_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

// hookAfter runs `slim hook after` for one call of the host's own task
// tool, as the plugin does after every tool call.
func (h *harness) hookAfter(args map[string]any, output string) out {
	h.t.Helper()
	req, _ := json.Marshal(map[string]any{
		"v": 1, "phase": "after", "tool": "task", "sessionID": parent, "callID": "call_native",
		"host":   map[string]any{"flavor": "v1", "directory": h.dir, "serverUrl": h.url},
		"args":   args,
		"output": output,
	})
	o := h.run(req, "hook", "after")
	if o.code != 0 {
		h.t.Fatal(o)
	}
	return o
}

func TestTheHostsOwnBackgroundTaskIsTrackedFromItsOutput(t *testing.T) {
	h := newHarness(t)
	child, err := h.fake.AddSession(opencodefake.SessionSeed{ID: "ses_native1", ParentID: parent, Title: "native"})
	if err != nil {
		t.Fatal(err)
	}
	h.hookAfter(map[string]any{"description": "Map auth", "subagent_type": "explorer", "prompt": "find it", "background": true},
		`<task id="`+child.ID+`" state="running">`+"\n<summary>Background task started</summary>\n</task>")
	j := h.job(child.ID)
	if j.State != store.JobRunning || j.ParentSessionID != parent || j.Alias != "exp-1" || !j.Background || j.PluginLaunched {
		t.Fatalf("job %+v", j)
	}
	// The board's tools now answer for it.
	o := h.tool("status", map[string]any{"task_id": "exp-1"})
	if o.code != 0 {
		t.Fatal(o)
	}
}

func TestAForegroundTaskIsRecordedFinishedAndRead(t *testing.T) {
	h := newHarness(t)
	h.hookAfter(map[string]any{"description": "Quick look", "subagent_type": "fixer", "prompt": "p"},
		"task_id: ses_fg1 (for resuming to continue this task if needed)\n\n<task_result>\nall good\n</task_result>")
	// The older form names no state: nothing is tracked from it.
	if len(allJobs(h.doc())) != 0 {
		t.Fatalf("jobs %v from an output without a state", allJobs(h.doc()))
	}
	h.hookAfter(map[string]any{"description": "Quick look", "subagent_type": "fixer", "prompt": "p"},
		`<task id="ses_fg2" state="completed">`+"\n<task_result>\nall good\n</task_result>\n</task>")
	j := h.job("ses_fg2")
	if j.State != store.JobReconciled || j.TerminalState != store.JobCompleted || j.ResultSummary != "all good" || j.TerminalUnreconciled {
		t.Fatalf("job %+v", j)
	}
}

func TestOutputThatNamesNoSessionIsIgnored(t *testing.T) {
	h := newHarness(t)
	for _, out := range []string{"", "no task here", `<task id="not-a-session" state="running">`, "task_id: ../x\nstate: running"} {
		h.hookAfter(map[string]any{"subagent_type": "explorer"}, out)
	}
	if len(allJobs(h.doc())) != 0 {
		t.Fatalf("jobs %v", allJobs(h.doc()))
	}
}

func TestLateOutputAboutADeletedTaskDoesNotBringItBack(t *testing.T) {
	h := newHarness(t)
	h.hookAfter(map[string]any{"subagent_type": "fixer", "prompt": "p"}, `<task id="ses_gone1" state="completed">`+"\n<task_result>\nold\n</task_result>\n</task>")
	if o := h.run(nil, "tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", "ses_gone1", "session.deleted"); o.code != 0 {
		t.Fatal(o)
	}
	h.hookAfter(map[string]any{"subagent_type": "fixer", "prompt": "p"}, `<task id="ses_gone1" state="completed">`+"\n<task_result>\nold\n</task_result>\n</task>")
	if j := h.doc().Job("ses_gone1"); j != nil {
		t.Fatalf("a replayed output brought back a deleted task: %+v", j)
	}
	// A new run of it is proof it lives again.
	h.hookAfter(map[string]any{"subagent_type": "fixer", "prompt": "p", "background": true}, `<task id="ses_gone1" state="running">`)
	if j := h.doc().Job("ses_gone1"); j == nil || j.State != store.JobRunning || h.doc().Tombstone("ses_gone1") != nil {
		t.Fatalf("a new run was not recorded: %+v", j)
	}
}

// hookEvent forwards one host event through the hook, as the plugin does.
func (h *harness) hookEvent(event map[string]any) out {
	h.t.Helper()
	req, _ := json.Marshal(map[string]any{
		"v": 1, "phase": "event", "sessionID": parent,
		"host":  map[string]any{"flavor": "v1", "directory": h.dir, "serverUrl": h.url},
		"event": event,
	})
	o := h.run(req, "hook", "event")
	if o.code != 0 || !strings.Contains(o.stdout, `"action":"pass"`) || strings.Contains(o.stdout, "tasks: ") {
		h.t.Fatalf("hook event %v: %s", event, o)
	}
	return o
}

func TestHostEventsForwardedThroughTheHookReachTheTaskStore(t *testing.T) {
	h := newHarness(t)
	// A project that never ran a task gains no store from its events.
	h.hookEvent(map[string]any{"type": "session.status", "sessionID": "ses_any", "status": "busy"})
	if _, err := os.Stat(store.ScopeDir(h.state, h.dir, h.url)); !os.IsNotExist(err) {
		t.Fatalf("an event made a task store: %v", err)
	}

	id := h.hangingJob("explorer", "map auth")
	h.mutate(func(st *store.State) error { st.Job(id).LastLiveBusyAt = time.Time{}; return nil })
	h.hookEvent(map[string]any{"type": "session.status", "sessionID": id, "status": "busy"})
	if j := h.job(id); j.LastLiveBusyAt.IsZero() {
		t.Fatalf("a busy event was not recorded: %+v", j)
	}

	// A real user message clears the parent's wait; an internal one does not.
	h.parentSession()
	if o := h.tool("wait-for-user", map[string]any{"reason": "run the migration"}); o.code != 0 {
		t.Fatal(o)
	}
	h.hookEvent(map[string]any{"type": "chat.message", "sessionID": parent, "messageID": "msg_zzzzzzzzzzzz0wake", "agent": "orchestrator", "external": "false"})
	if w := h.doc().Waits[parent]; w == nil || w.Status != store.WaitingForUser {
		t.Fatalf("an internal message cleared the wait: %+v", w)
	}
	h.hookEvent(map[string]any{"type": "chat.message", "sessionID": parent, "messageID": "msg_zzzzzzzzzzzz1user", "agent": "orchestrator", "external": "true"})
	if w := h.doc().Waits[parent]; w == nil || w.Status != store.WaitCleared {
		t.Fatalf("the user's message did not clear the wait: %+v", w)
	}

	// A deletion drops the task and leaves its tombstone.
	h.hookEvent(map[string]any{"type": "session.deleted", "sessionID": id})
	st := h.doc()
	if st.Job(id) != nil || st.Tombstone(id) == nil {
		t.Fatalf("after the deletion: job %+v, tombstone %+v", st.Job(id), st.Tombstone(id))
	}
}
