package tasks_test

import (
	"encoding/json"
	"testing"

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
