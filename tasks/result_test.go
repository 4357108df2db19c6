package tasks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

// finishedJob launches a task whose run ends at once as run says, waits
// for the child to go idle and lets task_status observe the end.
func (h *harness) finishedJob(agent string, run opencodefake.Run) string {
	h.t.Helper()
	if run.DurationMS == 0 {
		run.DurationMS = 30
	}
	if err := h.fake.QueueRuns("", run); err != nil {
		h.t.Fatal(err)
	}
	id := h.launch(agent, "job")
	h.waitIdle(id)
	if o := h.tool("status", map[string]any{"task_id": id}); o.code != 0 {
		h.t.Fatal(o)
	}
	return id
}

// runningAnswer is task_result's answer for a task still at work.
func runningAnswer(id, state, next string) string {
	return "task_id: " + id + "\nstate: " + state + "\nmessage: Task is still running. Wait for its terminal result.\nnext: " + next + "\n"
}

func TestResultOfACompletedTaskIsItsFinalTextWithoutReasoning(t *testing.T) {
	h := newHarness(t)
	id := h.finishedJob("explorer", opencodefake.Run{Text: "findings", Reasoning: "I looked at the auth code first."})
	if j := h.job(id); j.State != store.JobCompleted || !j.LastUsedAt.IsZero() {
		t.Fatalf("job before task_result: %+v", j)
	}
	writes := 0
	for _, c := range h.fake.Calls() {
		if c.Method != "GET" {
			writes++
		}
	}
	before := time.Now()
	o := h.tool("result", map[string]any{"task_id": "exp-1"})
	if o.code != 0 || o.stdout != "findings\n" || o.stderr != "" {
		t.Fatal(o)
	}
	j := h.job(id)
	if j.State != store.JobReconciled || j.TerminalState != store.JobCompleted || j.TerminalUnreconciled || j.LastUsedAt.Before(before.Add(-time.Millisecond)) {
		t.Fatalf("job after task_result: %+v (the read result is acknowledged and lastUsedAt updated)", j)
	}
	// Read again, the answer is the same.
	if o := h.tool("result", map[string]any{"task_id": "exp-1"}); o.code != 0 || o.stdout != "findings\n" {
		t.Fatal(o)
	}
	for _, c := range h.fake.Calls() {
		if c.Method != "GET" {
			writes--
		}
	}
	if writes != 0 {
		t.Fatalf("task_result sent %d writes to the host", -writes)
	}
}

func TestResultOfARunningTaskSaysToWait(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "map auth")
	o := h.tool("result", map[string]any{"task_id": id})
	if o.code != 0 || o.stdout != runningAnswer(id, "running", "use task_status to inspect the task") {
		t.Fatal(o)
	}
	h.setStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{id: {Type: "retry", Attempt: 2, Message: "rate limited"}}})
	o = h.tool("result", map[string]any{"task_id": id})
	if o.code != 0 || o.stdout != runningAnswer(id, "retry", "use task_status to inspect the task") {
		t.Fatal(o)
	}
	if j := h.job(id); j.State != store.JobRunning || !j.LastUsedAt.IsZero() {
		t.Fatalf("job: %+v", j)
	}
}

func TestResultOfAFailedOrCancelledTaskIsARefusalNamingWhy(t *testing.T) {
	h := newHarness(t)
	failed := h.finishedJob("explorer", opencodefake.Run{Error: &opencodefake.MessageError{Name: "ProviderError", Data: opencodefake.ErrorData{Message: "provider exploded"}}})
	if s := h.job(failed).State; s != store.JobError {
		t.Fatalf("the failed run left the task %s", s)
	}
	o := h.tool("result", map[string]any{"task_id": failed})
	if o.code != 1 || o.stdout != "" || o.stderr != "Task "+failed+" ended in error: provider exploded\n" {
		t.Fatal(o)
	}

	cancelled := h.hangingJob("fixer", "obsolete work")
	if o := h.tool("cancel", map[string]any{"task_id": cancelled, "reason": "obsolete"}); o.code != 0 || !strings.Contains(o.stdout, "state: cancelled") {
		t.Fatal(o)
	}
	o = h.tool("result", map[string]any{"task_id": "fix-1"})
	if o.code != 1 || o.stderr != "Task fix-1 was cancelled: obsolete\n" {
		t.Fatal(o)
	}

	// An acknowledged outcome is judged by the outcome it kept.
	h.acknowledge()
	if j := h.job(failed); j.State != store.JobReconciled || j.TerminalState != store.JobError {
		t.Fatalf("acknowledged failed job: %+v", j)
	}
	o = h.tool("result", map[string]any{"task_id": failed})
	if o.code != 1 || o.stderr != "Task "+failed+" ended in error: provider exploded\n" {
		t.Fatal(o)
	}
	o = h.tool("result", map[string]any{"task_id": cancelled})
	if o.code != 1 || o.stderr != "Task "+cancelled+" was cancelled: obsolete\n" {
		t.Fatal(o)
	}
}

func TestResultOfAStoppedTaskSeenBusyAgainRunsItAgainInTheSameGeneration(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "map auth")
	h.idleInMap(id)
	h.tool("status", map[string]any{"task_id": id})
	h.sleepPastStop(id, 400*time.Millisecond)
	h.tool("status", map[string]any{"task_id": id})
	j := h.job(id)
	if j.State != store.JobStopped || !j.TerminalUnreconciled {
		t.Fatalf("setup: the task is not stopped and unacknowledged: %+v", j)
	}
	o := h.tool("result", map[string]any{"task_id": id})
	if o.code != 1 || o.stderr != "Task "+id+" has no confirmed completed result\n" {
		t.Fatalf("a stopped task: %s", o)
	}

	h.setStatus(opencodefake.StatusMap{}) // its run shows busy again
	o = h.tool("result", map[string]any{"task_id": id})
	if o.code != 0 || o.stdout != runningAnswer(id, "running", "use task_status to inspect the task") {
		t.Fatal(o)
	}
	k := h.job(id)
	if k.State != store.JobRunning || k.Generation != j.Generation || !k.CompletedAt.IsZero() || k.TerminalUnreconciled || k.ResultSummary != "" {
		t.Fatalf("job after the busy observation: %+v", k)
	}
}

func TestResultRefusesWhenTheTaskIsRelaunchedWhileItsTranscriptIsRead(t *testing.T) {
	h := newHarness(t)
	id := h.finishedJob("explorer", opencodefake.Run{Text: "old findings"})
	g1 := h.job(id).Generation
	// The next transcript read, task_result's, is held.
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "GET", Path: "/session/" + id + "/message", Times: 1, Hold: "extract"}); err != nil {
		t.Fatal(err)
	}
	wait := h.start("result", map[string]any{"task_id": id})
	h.waitHeld("extract", 1)
	if err := h.fake.QueueRuns(id, opencodefake.Run{Hang: true}); err != nil {
		t.Fatal(err)
	}
	if o := h.tool("revive", map[string]any{"task_id": id, "prompt": "look again"}); o.code != 0 || !strings.Contains(o.stdout, "status: started") {
		t.Fatal(o)
	}
	if err := h.fake.Release("extract", nil); err != nil {
		t.Fatal(err)
	}
	o := wait()
	if o.code != 1 || o.stdout != "" || o.stderr != "Task "+id+" changed generation while its result was being retrieved; wait for its current terminal result instead of retrieving it.\n" {
		t.Fatal(o)
	}
	j := h.job(id)
	if j.Generation <= g1 || j.State != store.JobRunning {
		t.Fatalf("job after the relaunch: %+v", j)
	}
}

func TestResultOfAnUntrackedSessionNeedsOwnershipAndTerminalEvidence(t *testing.T) {
	h := newHarness(t)
	completed := time.Now().UnixMilli()
	seeds := []opencodefake.SessionSeed{
		{ID: "ses_foreign", ParentID: "ses_other", Messages: []opencodefake.Message{
			{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "go"}}},
			{Info: opencodefake.MessageInfo{Role: "assistant", Time: opencodefake.MessageTime{Completed: completed}, Finish: "stop"}, Parts: []opencodefake.Part{{Type: "text", Text: "secret"}}},
		}},
		{ID: "ses_unanswered", ParentID: parent, Messages: []opencodefake.Message{
			{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "go"}}},
		}},
		{ID: "ses_answered", ParentID: parent, Messages: []opencodefake.Message{
			{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "go"}}},
			{Info: opencodefake.MessageInfo{Role: "assistant", Time: opencodefake.MessageTime{Completed: completed}, Finish: "stop"}, Parts: []opencodefake.Part{
				{Type: "reasoning", Text: "thinking"}, {Type: "text", Text: "the answer"}}},
		}},
		{ID: "ses_working", ParentID: parent},
		{ID: "ses_retrying", ParentID: parent},
	}
	for _, s := range seeds {
		if _, err := h.fake.AddSession(s); err != nil {
			t.Fatal(err)
		}
	}
	h.setStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{"ses_working": {Type: "busy"}, "ses_retrying": {Type: "retry", Attempt: 1}}})
	for _, c := range []struct {
		id           string
		code         int
		stdout, want string
	}{
		{"ses_foreign", 1, "", "Task ses_foreign does not belong to this session\n"},
		{"ses_unanswered", 1, "", "Task ses_unanswered shows no terminal evidence of completion; refusing to present partial output as its final result\n"},
		{"ses_answered", 0, "the answer\n", ""},
		{"ses_working", 0, runningAnswer("ses_working", "running", "retry task_result after the task finishes"), ""},
		{"ses_retrying", 0, runningAnswer("ses_retrying", "retry", "retry task_result after the task finishes"), ""},
		{"ses_gone", 1, "", "Unknown task ID or alias: ses_gone\n"},
		{"not-a-session", 1, "", "Unknown task ID or alias: not-a-session\n"},
	} {
		o := h.tool("result", map[string]any{"task_id": c.id})
		if o.code != c.code || o.stdout != c.stdout || o.stderr != c.want {
			t.Errorf("%s: %s", c.id, o)
		}
	}
	if n := len(allJobs(h.doc())); n != 0 {
		t.Fatalf("task_result of untracked sessions registered %d jobs", n)
	}
	for _, c := range h.fake.Calls() {
		if c.Method != "GET" {
			t.Fatalf("task_result sent %s %s", c.Method, c.Path)
		}
	}
}
