package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

func TestLaunchCreatesAChildAndPromptsItInTheBackground(t *testing.T) {
	h := newHarness(t)
	o := h.tool("task", map[string]any{"description": "Map auth", "subagent_type": "explorer", "prompt": "Find the auth code."})
	if o.code != 0 {
		t.Fatal(o)
	}
	id := strings.TrimPrefix(strings.SplitN(o.stdout, "\n", 2)[0], "task_id: ")
	want := "task_id: " + id + "\nstate: running\n\n<task_result>\nBackground task started.\n</task_result>\n"
	if o.stdout != want || o.stderr != "" {
		t.Fatalf("output %q, want %q (stderr %q)", o.stdout, want, o.stderr)
	}
	j := h.job(id)
	if j.State != store.JobRunning || j.Alias != "exp-1" || !j.Background || j.ParentSessionID != parent || j.Generation < 1 {
		t.Fatalf("job %+v", j)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("a launch left a lease: %+v", l)
	}
	create, prompt := h.calls("POST", "/session"), h.calls("POST", "/session/*/prompt_async")
	if len(create) != 1 || len(prompt) != 1 || create[0].Seq > prompt[0].Seq {
		t.Fatalf("want POST /session then one prompt_async; got %d and %d", len(create), len(prompt))
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(create[0].Body), &body); err != nil || body["parentID"] != parent || body["title"] != "Map auth" {
		t.Fatalf("create body %s", create[0].Body)
	}
	var p struct {
		MessageID string           `json:"messageID"`
		Agent     string           `json:"agent"`
		Parts     []map[string]any `json:"parts"`
		NoReply   *bool            `json:"noReply"`
		Delivery  *string          `json:"delivery"`
	}
	if err := json.Unmarshal([]byte(prompt[0].Body), &p); err != nil {
		t.Fatal(err)
	}
	if p.Agent != "explorer" || len(p.Parts) != 1 || p.Parts[0]["text"] != "Find the auth code." || p.NoReply != nil || p.Delivery != nil || !strings.HasPrefix(p.MessageID, "msg_") {
		t.Fatalf("prompt body %s", prompt[0].Body)
	}
	if c := prompt[0]; c.Directory != h.dir {
		t.Fatalf("the prompt named directory %q, want %q", c.Directory, h.dir)
	}
}

func TestAliasesCountPerParentAndPrefixAndAreNeverReused(t *testing.T) {
	h := newHarness(t)
	a := h.launch("explorer", "one")
	h.launch("explorer", "two")
	h.launch("fixer", "three")
	h.launch("reviewer", "four")
	o := h.run(h.requestAs("ses_other", "orchestrator", map[string]any{"subagent_type": "explorer", "prompt": "p"}), "tasks", "task")
	if o.code != 0 {
		t.Fatal(o)
	}
	got := map[string][]string{}
	for _, j := range allJobs(h.doc()) {
		got[j.ParentSessionID] = append(got[j.ParentSessionID], j.Alias)
	}
	for _, want := range []string{"exp-1", "exp-2", "fix-1", "rev-1"} {
		if !contains(got[parent], want) {
			t.Errorf("parent's aliases %v lack %s", got[parent], want)
		}
	}
	if len(got["ses_other"]) != 1 || got["ses_other"][0] != "exp-1" {
		t.Errorf("the other parent's aliases are %v, want [exp-1]", got["ses_other"])
	}
	// A deleted task's alias is not issued again.
	if o := h.run(nil, "tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", a, "session.deleted"); o.code != 0 {
		t.Fatal(o)
	}
	next := h.launch("explorer", "five")
	if al := h.job(next).Alias; al != "exp-3" {
		t.Fatalf("the next explorer got %s, want exp-3", al)
	}
	if ts := h.doc().Tombstone(a); ts == nil {
		t.Fatal("the deleted task has no tombstone")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestLaunchRejectedByTheHostIsAnErrorAndRecorded(t *testing.T) {
	h := newHarness(t)
	h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/session/*/prompt_async", Respond: &opencodefake.Response{Status: 400, Body: json.RawMessage(`{"name":"BadRequest","data":{"message":"agent explorer is unknown"}}`)}})
	o := h.tool("task", map[string]any{"subagent_type": "explorer", "prompt": "p"})
	if o.code != 1 || !strings.Contains(o.stderr, "agent explorer is unknown") || o.stdout != "" {
		t.Fatal(o)
	}
	var j *store.Job
	for _, x := range allJobs(h.doc()) {
		j = x
	}
	if j == nil || j.State != store.JobError || j.StatusUncertain {
		t.Fatalf("job %+v", j)
	}
	for _, op := range h.doc().Ops {
		if op.Kind == store.OpLaunch && (op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeRejected4xx) {
			t.Fatalf("launch op %+v", op)
		}
	}
	if l := h.doc().Leases[j.TaskID]; l != nil {
		t.Fatalf("a rejected launch left a lease: %+v", l)
	}
}

func TestLaunchWithAnUnknownOutcomeIsRunningAndUncertain(t *testing.T) {
	for _, tt := range []struct {
		fault   opencodefake.Fault
		outcome store.Outcome
	}{
		{opencodefake.Fault{Method: "POST", Path: "/session/*/prompt_async", Respond: &opencodefake.Response{Status: 502, Text: "bad gateway"}}, store.OutcomeFailed5xx},
		{opencodefake.Fault{Method: "POST", Path: "/session/*/prompt_async", Drop: true}, store.OutcomeTransport},
	} {
		h := newHarness(t)
		h.fake.AddFaults(tt.fault)
		o := h.tool("task", map[string]any{"subagent_type": "explorer", "prompt": "p"})
		if o.code != 0 || !strings.Contains(o.stdout, "state: running\nstatus_uncertain: true\n") {
			t.Fatal(o)
		}
		for _, j := range allJobs(h.doc()) {
			if j.State != store.JobRunning || !j.StatusUncertain {
				t.Fatalf("job %+v", j)
			}
		}
		for _, op := range h.doc().Ops {
			if op.Kind == store.OpLaunch && op.Outcome != tt.outcome {
				t.Fatalf("an unknown launch was recorded %s, want %s", op.Outcome, tt.outcome)
			}
		}
	}
}

// finish makes the fake's run of id end with text, and waits for it.
func (h *harness) runs(text string) {
	h.t.Helper()
	if err := h.fake.QueueRuns("", opencodefake.Run{DurationMS: 50, Text: text}); err != nil {
		h.t.Fatal(err)
	}
}

// completed launches a task whose run ends at once with text, and
// observes it completed.
func (h *harness) completed(agent, text string) string {
	h.t.Helper()
	h.runs(text)
	id := h.launch(agent, "job "+text)
	h.waitIdle(id)
	if o := h.tool("status", map[string]any{"task_id": id}); o.code != 0 {
		h.t.Fatal(o)
	}
	if s := h.job(id).State; s != store.JobCompleted {
		msgs, _ := h.fake.Messages(id)
		b, _ := json.Marshal(msgs)
		h.t.Fatalf("the task is %s after its run ended, want completed: %+v\ntranscript: %s", s, h.job(id), b)
	}
	return id
}

// acknowledge shows the parent its board and has it go idle, which
// acknowledges the finished runs it was shown.
func (h *harness) acknowledge() {
	h.t.Helper()
	for _, args := range [][]string{
		{"tasks", "board", "--directory", h.dir, "--server-url", h.url, "--parent", parent, "--record"},
		{"tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", parent, "session.idle"},
	} {
		if o := h.run(nil, args...); o.code != 0 {
			h.t.Fatal(o)
		}
	}
}

func TestResumeOfAReusableSessionPromptsTheSameSession(t *testing.T) {
	h := newHarness(t)
	id := h.completed("explorer", "first")
	h.acknowledge()
	if s := h.job(id).State; s != store.JobReconciled {
		t.Fatalf("state %s after acknowledgement, want reconciled", s)
	}
	g1, used := h.job(id).Generation, h.job(id).LastUsedAt
	prompts := len(h.calls("POST", "/session/"+id+"/prompt_async"))
	h.runs("second")
	o := h.tool("task", map[string]any{"subagent_type": "explorer", "task_id": "exp-1", "prompt": "again"})
	if o.code != 0 || !strings.Contains(o.stdout, "task_id: "+id+"\n") || !strings.Contains(o.stdout, "Background task resumed.") {
		t.Fatal(o)
	}
	j := h.job(id)
	if j.Generation <= g1 || j.State != store.JobRunning && j.State != store.JobCompleted {
		t.Fatalf("job %+v", j)
	}
	if n := len(h.calls("POST", "/session")); n != 1 {
		t.Fatalf("%d sessions created, want 1", n)
	}
	if n := len(h.calls("POST", "/session/"+id+"/prompt_async")); n != prompts+1 {
		t.Fatalf("%d prompts to the session after the resume, want %d", n, prompts+1)
	}
	// The resume's prompt went out under a relaunch lease: its op names
	// one, and it was released when the admission settled.
	ops := h.opsOf(id, store.OpReviveAdmission)
	if len(ops) != 1 || ops[0].LeaseToken == "" || ops[0].Outcome != store.OutcomeAccepted {
		t.Fatalf("the resume's admission ops: %+v", ops)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("lease left: %+v", l)
	}
	if !j.LastUsedAt.After(used) {
		t.Fatalf("lastUsedAt %v did not move on from %v", j.LastUsedAt, used)
	}
}

func TestResumeOfARunningTaskIsRefusedWithoutWrites(t *testing.T) {
	h := newHarness(t)
	h.fake.QueueRuns("", opencodefake.Run{Hang: true})
	id := h.launch("explorer", "x")
	before := len(h.fake.Calls())
	o := h.tool("task", map[string]any{"subagent_type": "explorer", "task_id": id, "prompt": "more"})
	if o.code != 1 || !strings.Contains(o.stderr, "Task "+id+" is still running and cannot be resumed or amended with task().") {
		t.Fatal(o)
	}
	for _, c := range h.fake.Calls()[before:] {
		if c.Method != "GET" {
			t.Fatalf("a refused resume sent %s %s", c.Method, c.Path)
		}
	}
}

func TestResumeWhileLeasedIsRefused(t *testing.T) {
	for _, kind := range []store.LeaseKind{store.LeaseMessage, store.LeaseRelaunch} {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t)
			id := h.completed("explorer", "done")
			h.acknowledge()
			h.mutate(func(st *store.State) error {
				_, err := st.AcquireLease(store.LeaseRequest{TaskID: id, Kind: kind, Token: "t0", Generation: st.Job(id).Generation}, st.Meta.CreatedAt)
				return err
			})
			before := h.lastSeq()
			o := h.tool("task", map[string]any{"subagent_type": "explorer", "task_id": id, "prompt": "more"})
			if o.code != 1 || !strings.Contains(o.stderr, "cannot be resumed safely: its current generation is already owned by another lifecycle operation. Do not launch a duplicate with the same task_id.") {
				t.Fatal(o)
			}
			if calls := h.after(before, "POST", "/**"); len(calls) != 0 {
				t.Fatalf("a refused resume sent %+v", calls)
			}
			if l := h.doc().Leases[id]; l == nil || l.Token != "t0" {
				t.Fatalf("the other holder's lease after the refusal: %+v", l)
			}
		})
	}
}

func TestResumeOfANonReusableTaskStartsANewSession(t *testing.T) {
	h := newHarness(t)
	id := h.completed("explorer", "done") // completed, not acknowledged
	for _, args := range []map[string]any{
		{"subagent_type": "fixer", "task_id": id, "prompt": "other agent"},
		{"subagent_type": "explorer", "task_id": id, "prompt": "unacknowledged"},
	} {
		o := h.tool("task", args)
		if o.code != 0 || strings.Contains(o.stdout, "task_id: "+id+"\n") {
			t.Fatalf("%v: %s", args, o)
		}
	}
	if n := len(h.calls("POST", "/session")); n != 3 {
		t.Fatalf("%d sessions created, want 3", n)
	}
}

func TestDuplicateObjectiveWithAnUnreadResultIsRefused(t *testing.T) {
	h := newHarness(t)
	h.runs("r")
	o := h.tool("task", map[string]any{"subagent_type": "explorer", "prompt": "same objective"})
	id := strings.TrimPrefix(strings.SplitN(o.stdout, "\n", 2)[0], "task_id: ")
	h.waitIdle(id)
	h.tool("status", map[string]any{"task_id": id})
	o = h.tool("task", map[string]any{"subagent_type": "explorer", "prompt": "same objective"})
	if o.code != 1 || !strings.Contains(o.stderr, "use task_result "+id) {
		t.Fatal(o)
	}
}

func TestStatusOfAFinishedTaskIsItsOutcomeWithoutDoubt(t *testing.T) {
	h := newHarness(t)
	id := h.completed("explorer", "done")
	o := h.tool("status", map[string]any{"task_id": id})
	if o.code != 0 || !strings.Contains(o.stdout, "\nstate: completed\n") || strings.Contains(o.stdout, "status_uncertain") {
		t.Fatal(o)
	}
}
