package tasks_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// reviveText is task_revive's answer without a result.
func reviveText(id string, gen int64, state, status string) string {
	return fmt.Sprintf("task_id: %s\ngeneration: %d\nstate: %s\nstatus: %s\n", id, gen, state, status)
}

// admissionUnknown is the line task_revive adds when its deadline came
// before the host answered.
const admissionUnknown = "The host may have accepted the prompt. Admission is still pending; do not retry task_revive. Use task_status to inspect the session.\n"

// reconciledJob launches a task whose run completes with text, has the
// parent acknowledge it, and returns its ID.
func (h *harness) reconciledJob(agent, text string) string {
	h.t.Helper()
	id := h.completed(agent, text)
	h.acknowledge()
	if s := h.job(id).State; s != store.JobReconciled {
		h.t.Fatalf("the task is %s after its acknowledgement, want reconciled", s)
	}
	return id
}

// stoppedJob launches a task whose run ends without a terminal answer
// (its last message asks for tool calls that never come) and observes it
// until it is confirmed stopped.
func (h *harness) stoppedJob(agent string) string {
	h.t.Helper()
	h.env["SLIM_TASKS_STOP_GRACE_MS"] = "100"
	defer func() { h.env["SLIM_TASKS_STOP_GRACE_MS"] = knobs["SLIM_TASKS_STOP_GRACE_MS"] }()
	if err := h.fake.QueueRuns("", opencodefake.Run{DurationMS: 10, Text: "let me look", Finish: "tool-calls"}); err != nil {
		h.t.Fatal(err)
	}
	id := h.launch(agent, "stops early")
	h.waitIdle(id)
	deadline := time.Now().Add(10 * time.Second)
	for h.job(id).State != store.JobStopped {
		if time.Now().After(deadline) {
			h.t.Fatalf("the task never stopped: %+v", h.job(id))
		}
		if o := h.tool("status", map[string]any{"task_id": id}); o.code != 0 {
			h.t.Fatal(o)
		}
	}
	return id
}

// queueHang makes the next prompt's run keep its session busy.
func (h *harness) queueHang() {
	h.t.Helper()
	if err := h.fake.QueueRuns("", opencodefake.Run{Hang: true}); err != nil {
		h.t.Fatal(err)
	}
}

// lastMessageID is the ID of the last message of the session's transcript.
func (h *harness) lastMessageID(id string) string {
	h.t.Helper()
	msgs, err := h.fake.Messages(id)
	if err != nil || len(msgs) == 0 {
		h.t.Fatalf("no transcript for %s: %v", id, err)
	}
	return msgs[len(msgs)-1].Info.ID
}

// promptBody decodes a prompt_async call's body into its fields.
func promptBody(t *testing.T, c opencodefake.Call) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(c.Body), &m); err != nil {
		t.Fatalf("prompt body %q: %v", c.Body, err)
	}
	return m
}

// wantNoReviveWrite fails when a prompt or an abort reached the session
// after call seq.
func (h *harness) wantNoReviveWrite(id string, seq int64) {
	h.t.Helper()
	if n := len(h.after(seq, "POST", "/session/"+id+"/prompt_async")) + len(h.after(seq, "POST", "/session/"+id+"/abort")); n != 0 {
		h.t.Fatalf("%d prompts or aborts reached %s", n, id)
	}
}

// wantRevivePreSendFailure checks what a revive refused before its send
// leaves: the generation unchanged, no lease, its op rejected unsent.
func (h *harness) wantRevivePreSendFailure(id string, gen int64) {
	h.t.Helper()
	st := h.doc()
	if j := st.Job(id); j == nil || j.Generation != gen {
		h.t.Fatalf("job after a refused revive: %+v (want generation %d)", j, gen)
	}
	if l := st.Leases[id]; l != nil {
		h.t.Fatalf("a refused revive kept its lease: %+v", l)
	}
	if op := h.onlyOp(id, store.OpReviveAdmission); op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeNotSent {
		h.t.Fatalf("revive op %+v", op)
	}
}

func TestReviveOfAnAcknowledgedTaskPromptsTheSameSessionInANewGeneration(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	baseline := h.lastMessageID(id)
	h.queueHang()
	before := h.lastSeq()
	o := h.tool("revive", map[string]any{"task_id": "exp-1", "prompt": "  go on with the tests  "})
	j := h.job(id)
	wantOut(t, o, 0, reviveText(id, j.Generation, "running", "started"), "")
	if j.Generation <= g1 || j.TaskGeneration != 2 || j.State != store.JobRunning || j.BaselineMessageID != baseline || j.StatusUncertain || j.TerminalUnreconciled || j.ResultSummary != "" {
		t.Fatalf("job after the revive: %+v (generation was %d, baseline %s)", j, g1, baseline)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("the revive kept its lease: %+v", l)
	}
	op := h.onlyOp(id, store.OpReviveAdmission)
	if op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted || op.Generation != j.Generation {
		t.Fatalf("revive op %+v", op)
	}

	// On the wire: the baseline read, the live check, then one prompt.
	reads, polls, prompts := h.after(before, "GET", "/session/"+id+"/message"), h.after(before, "GET", "/session/status"), h.after(before, "POST", "/session/"+id+"/prompt_async")
	if len(reads) < 1 || len(polls) != 1 || len(prompts) != 1 || !(reads[0].Seq < polls[0].Seq && polls[0].Seq < prompts[0].Seq) {
		t.Fatalf("want the baseline read, one status read and one prompt in that order; got %d, %d and %d", len(reads), len(polls), len(prompts))
	}
	if n := len(h.after(before, "POST", "/session/*/abort")); n != 0 {
		t.Fatalf("the revive of a finished task sent %d aborts", n)
	}
	body := promptBody(t, prompts[0])
	var agent, msgID string
	var parts []map[string]any
	json.Unmarshal(body["agent"], &agent)
	json.Unmarshal(body["messageID"], &msgID)
	json.Unmarshal(body["parts"], &parts)
	if len(body) != 3 || agent != "explorer" || msgID != op.ClientMessageID || !strings.HasPrefix(msgID, "msg") || len(parts) != 1 || parts[0]["type"] != "text" || parts[0]["text"] != "go on with the tests" {
		t.Fatalf("the prompt's body is %s; want only agent, parts and the client message ID %s", prompts[0].Body, op.ClientMessageID)
	}
}

func TestReviveOfARunningTaskCancelsItFirst(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("fixer", "long fix")
	g1 := h.job(id).Generation
	h.queueHang()
	h.hold("baseline", "GET", "/session/*/message", 0, 1)
	before := h.lastSeq()
	wait := h.start("revive", map[string]any{"task_id": id, "prompt": "change of plan"})
	h.waitHeld("baseline", 1)
	if j := h.job(id); j.State != store.JobCancelled || j.ResultSummary != "cancelled: revived" || j.Generation != g1 {
		t.Fatalf("job between the cancel and the relaunch: %+v", j)
	}
	if l := h.doc().Leases[id]; l == nil || l.Kind != store.LeaseRelaunch {
		t.Fatalf("no relaunch lease while the baseline is read: %+v", l)
	}
	h.release("baseline", nil)
	o := wait()
	j := h.job(id)
	wantOut(t, o, 0, reviveText(id, j.Generation, "running", "started"), "")
	if j.Generation <= g1 || j.State != store.JobRunning || j.CancellationRequested {
		t.Fatalf("job after the revive: %+v", j)
	}
	aborts, polls := h.after(before, "POST", "/session/"+id+"/abort"), h.after(before, "GET", "/session/status")
	reads, prompts := h.after(before, "GET", "/session/"+id+"/message"), h.after(before, "POST", "/session/"+id+"/prompt_async")
	if len(aborts) != 1 || len(prompts) != 1 || len(reads) < 1 || len(polls) < 3 {
		t.Fatalf("want one abort, status polls, a baseline read, a status read and one prompt; got %d aborts, %d polls, %d reads, %d prompts", len(aborts), len(polls), len(reads), len(prompts))
	}
	last := polls[len(polls)-1]
	if !(aborts[0].Seq < polls[0].Seq && polls[len(polls)-2].Seq < reads[0].Seq && reads[0].Seq < last.Seq && last.Seq < prompts[0].Seq) {
		t.Fatalf("calls out of order: abort %d, polls %d..%d, baseline %d, live check %d, prompt %d", aborts[0].Seq, polls[0].Seq, polls[len(polls)-2].Seq, reads[0].Seq, last.Seq, prompts[0].Seq)
	}
	if op := h.onlyOp(id, store.OpAbort); op.Generation != g1 || op.Phase != store.PhaseSettled {
		t.Fatalf("the pre-cancel's abort op: %+v", op)
	}
}

func TestReviveThatCompletesAtOnceReportsTheResult(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	if err := h.fake.QueueRuns("", opencodefake.Run{Text: "second answer"}); err != nil {
		t.Fatal(err)
	}
	// Hold the read after the admission until the run is over.
	h.hold("probe", "GET", "/session/*/message", 2, 1)
	wait := h.start("revive", map[string]any{"task_id": id, "prompt": "again"})
	h.waitHeld("probe", 1)
	h.waitIdle(id)
	h.release("probe", nil)
	o := wait()
	j := h.job(id)
	wantOut(t, o, 0, reviveText(id, j.Generation, "completed", "completed")+"<task_result>\nsecond answer\n</task_result>\n", "")
	if j.State != store.JobCompleted || !j.TerminalUnreconciled || j.ResultSummary != "second answer" || j.TaskGeneration != 2 {
		t.Fatalf("job %+v", j)
	}
	// The revive's answer told the parent: no notice is owed.
	if j.Notification.Owed {
		t.Fatalf("the revive reported the end and still owes a notice: %+v", j.Notification)
	}
}

func TestReviveWhoseBaselineReadOutlivesItsDeadlineSendsNothing(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	gen := h.job(id).Generation
	h.env["SLIM_TASKS_BASELINE_TIMEOUT_MS"] = "300"
	h.hold("baseline", "GET", "/session/*/message", 0, 1)
	before := h.lastSeq()
	o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
	wantOut(t, o, 1, "", "Task "+id+" revive failed: Baseline capture deadline exceeded; the revive prompt was NOT sent\n")
	h.wantRevivePreSendFailure(id, gen)

	// Another operation takes the task meanwhile; the late read changes
	// nothing of it, and nothing is sent.
	h.mutate(func(st *store.State) error {
		_, err := st.AcquireLease(store.LeaseRequest{TaskID: id, Kind: store.LeaseRelaunch, Token: "meanwhile", Generation: gen}, st.Meta.CreatedAt)
		return err
	})
	h.release("baseline", nil)
	h.waitCallsDone(before, "GET", "/session/"+id+"/message")
	h.wantNoReviveWrite(id, before)
	if l := h.doc().Leases[id]; l == nil || l.Token != "meanwhile" || l.State != store.LeaseHeld {
		t.Fatalf("the lease taken meanwhile is gone or changed: %+v", l)
	}
}

// waitCallsDone waits until every call to method and pattern after seq
// has been answered (or dropped).
func (h *harness) waitCallsDone(seq int64, method, pattern string) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		done := true
		for _, c := range h.after(seq, method, pattern) {
			if c.Outcome == opencodefake.OutcomePending {
				done = false
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("calls to %s %s still pending", method, pattern)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReviveOfATaskTheHostShowsActiveSendsNothing(t *testing.T) {
	for _, tc := range []struct {
		name, live string
		entry      *opencodefake.StatusEntry
	}{
		{"busy", "busy", nil},
		{"retrying", "retry", &opencodefake.StatusEntry{Type: "retry", Attempt: 1, Message: "overloaded"}},
		{"processing an image", "busy", &opencodefake.StatusEntry{Type: "image_processing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.hangingJob("explorer", "x")
			if tc.entry != nil {
				h.setStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{id: *tc.entry}})
			}
			// The board says the run stopped; the host says otherwise.
			var gen int64
			h.mutate(func(st *store.State) error {
				j := st.Job(id)
				j.State, j.TerminalUnreconciled, j.CompletedAt, j.ResultSummary = store.JobStopped, true, st.Meta.CreatedAt, "stopped"
				gen = j.Generation
				return nil
			})
			before := h.lastSeq()
			o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
			wantOut(t, o, 1, "", "Task "+id+" is executing at the host (live status: "+tc.live+"); the revive prompt was NOT sent and no duplicate was launched. Use task_status to inspect it.\n")
			h.wantRevivePreSendFailure(id, gen)
			h.wantNoReviveWrite(id, before)
		})
	}
}

func TestReviveThatCannotReadTheLiveMapSendsNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    func(id string) opencodefake.StatusMap
		why  string
	}{
		{"the read fails", func(string) opencodefake.StatusMap { return opencodefake.StatusMap{Mode: opencodefake.StatusError} }, "HTTP 500: session status lookup failed"},
		{"the map is an array", func(string) opencodefake.StatusMap { return opencodefake.StatusMap{Mode: opencodefake.StatusArray} }, "invalid session-status response"},
		{"the entry is malformed", func(id string) opencodefake.StatusMap {
			return opencodefake.StatusMap{Raw: map[string]json.RawMessage{id: json.RawMessage(`{"type":"thinking"}`)}}
		}, "malformed live status entry for session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.reconciledJob("explorer", "first")
			gen := h.job(id).Generation
			h.setStatus(tc.m(id))
			before := h.lastSeq()
			o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
			wantOut(t, o, 1, "", "Task "+id+" could not be verified against the live session map ("+tc.why+"); the revive prompt was NOT sent. Retry task_revive.\n")
			h.wantRevivePreSendFailure(id, gen)
			h.wantNoReviveWrite(id, before)
		})
	}
}

func TestReviveRefusesWhenTheTaskWasSeenBusyWhileItsBaselineWasRead(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	gen, busyBefore := h.job(id).Generation, h.job(id).LastLiveBusyAt
	h.hold("baseline", "GET", "/session/*/message", 0, 1)
	before := h.lastSeq()
	wait := h.start("revive", map[string]any{"task_id": id, "prompt": "again"})
	h.waitHeld("baseline", 1)
	h.observe("session.status", id, "--status", "busy")
	h.release("baseline", nil)
	o := wait()
	wantOut(t, o, 1, "", "Task "+id+" became active again (reconciled) before the revive prompt was sent; the prompt was NOT sent and no duplicate was launched. Use task_status to inspect it.\n")
	h.wantRevivePreSendFailure(id, gen)
	h.wantNoReviveWrite(id, before)
	if j := h.job(id); !j.LastLiveBusyAt.After(busyBefore) || j.State != store.JobReconciled {
		t.Fatalf("job after the late busy: %+v", j)
	}
}

func TestReviveRefusesWhenTheGenerationChangesBeforeTheSend(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	h.hold("baseline", "GET", "/session/*/message", 0, 1)
	before := h.lastSeq()
	wait := h.start("revive", map[string]any{"task_id": "exp-1", "prompt": "again"})
	h.waitHeld("baseline", 1)
	var newGen int64
	h.mutate(func(st *store.State) error {
		j := st.Job(id)
		j.Generation = st.NextGeneration()
		newGen = j.Generation
		return nil
	})
	h.release("baseline", nil)
	wantOut(t, wait(), 1, "", "Task exp-1 run generation changed; refusing stale revive\n")
	h.wantRevivePreSendFailure(id, newGen)
	h.wantNoReviveWrite(id, before)
}

func TestReviveWhoseAdmissionOutlivesItsDeadlineRegistersTheLateAcceptance(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	baseline := h.lastMessageID(id)
	h.queueHang()
	h.hold("admit", "POST", "/session/*/prompt_async", 0, 1)
	o := h.toolPastDeadline("revive", map[string]any{"task_id": id, "prompt": "again"}, "admit", "SLIM_TASKS_ADMISSION_TIMEOUT_MS", "400")
	wantOut(t, o, 0, reviveText(id, g1, "completed", "admission_unknown")+admissionUnknown, "")

	st := h.doc()
	l := st.Leases[id]
	if l == nil || l.Kind != store.LeaseRelaunch || l.State != store.LeaseHeld {
		t.Fatalf("lease while the admission is pending: %+v", l)
	}
	if alive, err := owner.Alive(l.Owner); err != nil || !alive {
		t.Fatalf("the pending admission's lease is not owned by a live settler: %+v", l.Owner)
	}
	if op := st.Ops[l.OpID]; op == nil || op.Phase != store.PhaseSentUnknown || !op.CallerAnswered {
		t.Fatalf("op while the admission is pending: %+v", op)
	}
	if j := st.Job(id); j.Generation != g1 || j.State != store.JobReconciled {
		t.Fatalf("job while the admission is pending: %+v", j)
	}
	wantOut(t, h.tool("revive", map[string]any{"task_id": id, "prompt": "once more"}), 1, "", "Task "+id+" cannot be revived: relaunch lease unavailable\n")

	h.release("admit", nil)
	h.waitFor("the late acceptance to be registered", func(st *store.State) bool { return st.Leases[id] == nil })
	j := h.job(id)
	if j.Generation <= g1 || j.TaskGeneration != 2 || j.State != store.JobRunning || j.BaselineMessageID != baseline {
		t.Fatalf("job after the late acceptance: %+v", j)
	}
	if op := h.onlyOp(id, store.OpReviveAdmission); op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted || op.Generation != j.Generation {
		t.Fatalf("revive op after the late acceptance: %+v", op)
	}
	if n := len(h.calls("POST", "/session/"+id+"/prompt_async")); n != 2 {
		t.Fatalf("%d prompts reached the task, want the launch's and the revive's", n)
	}

	// The next revive sees the late run running and cancels it first.
	g2 := j.Generation
	h.queueHang()
	before := h.lastSeq()
	o = h.tool("revive", map[string]any{"task_id": id, "prompt": "third"})
	j = h.job(id)
	wantOut(t, o, 0, reviveText(id, j.Generation, "running", "started"), "")
	if j.Generation <= g2 || j.TaskGeneration != 3 {
		t.Fatalf("job after the third revive: %+v", j)
	}
	aborts, prompts := h.after(before, "POST", "/session/"+id+"/abort"), h.after(before, "POST", "/session/"+id+"/prompt_async")
	if len(aborts) != 1 || len(prompts) != 1 || aborts[0].Seq > prompts[0].Seq {
		t.Fatalf("want the abort of the late run, then one prompt; got %d and %d", len(aborts), len(prompts))
	}
}

func TestReviveWhoseAdmissionIsRejectedAfterItsDeadlineChangesNothing(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	h.hold("admit", "POST", "/session/*/prompt_async", 0, 1)
	h.env["SLIM_TASKS_ADMISSION_TIMEOUT_MS"] = "400"
	o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
	wantOut(t, o, 0, reviveText(id, g1, "completed", "admission_unknown")+admissionUnknown, "")
	h.release("admit", &opencodefake.Response{Status: 400, Body: json.RawMessage(`{"name":"BadRequest","data":{"message":"agent explorer is unknown"}}`)})
	h.waitFor("the late rejection to release the lease", func(st *store.State) bool { return st.Leases[id] == nil })
	j := h.job(id)
	if j.Generation != g1 || j.State != store.JobReconciled || j.TerminalState != store.JobCompleted || j.StatusUncertain {
		t.Fatalf("a rejected admission changed the job: %+v", j)
	}
	op := h.onlyOp(id, store.OpReviveAdmission)
	if op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeRejected4xx || !op.CallerAnswered || !strings.Contains(op.Error, "agent explorer is unknown") {
		t.Fatalf("revive op after the late rejection: %+v", op)
	}
	if msgs, _ := h.fake.Messages(id); opencodefakeHasID(msgs, op.ClientMessageID) {
		t.Fatal("the rejected prompt is in the transcript")
	}
}

func opencodefakeHasID(msgs []opencodefake.Message, id string) bool {
	for _, m := range msgs {
		if m.Info.ID == id {
			return true
		}
	}
	return false
}

func TestReviveWhoseAdmissionLandsAtItsDeadlineRegistersExactlyOnce(t *testing.T) {
	h := newHarness(t)
	h.env["SLIM_TASKS_ADMISSION_TIMEOUT_MS"] = "300"
	for _, delay := range []int{240, 270, 290, 300, 310, 330, 360} {
		id := h.completed("explorer", "first "+itoa(delay))
		g1 := h.job(id).Generation
		h.queueHang()
		if err := h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/session/" + id + "/prompt_async", DelayMS: delay, Times: 1}); err != nil {
			t.Fatal(err)
		}
		o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
		if strings.Contains(o.stdout+o.stderr, "revive failed") || o.code != 0 {
			t.Fatalf("delay %dms: %s", delay, o)
		}
		h.waitFor("the admission to settle", func(st *store.State) bool { return st.Leases[id] == nil })
		j := h.job(id)
		switch o.stdout {
		case reviveText(id, j.Generation, "running", "started"):
		case reviveText(id, g1, "completed", "admission_unknown") + admissionUnknown:
		default:
			t.Fatalf("delay %dms: neither started nor admission_unknown: %s", delay, o)
		}
		if j.Generation <= g1 || j.TaskGeneration != 2 || j.State != store.JobRunning {
			t.Fatalf("delay %dms: job %+v", delay, j)
		}
		if op := h.onlyOp(id, store.OpReviveAdmission); op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted {
			t.Fatalf("delay %dms: op %+v", delay, op)
		}
	}
}

// deletedDuringAdmission revives id with its prompt held, has the task
// deleted by del while the host holds the prompt, and releases it before
// the revive's deadline: the admission is accepted for a task that is
// gone. It returns the revive's answer.
func (h *harness) deletedDuringAdmission(id string, del func(), beforeRelease func()) out {
	h.t.Helper()
	h.queueHang()
	h.hold("admit", "POST", "/session/"+id+"/prompt_async", 0, 1)
	wait := h.start("revive", map[string]any{"task_id": id, "prompt": "again"})
	h.waitHeld("admit", 1)
	del()
	if beforeRelease != nil {
		beforeRelease()
	}
	h.release("admit", nil)
	return wait()
}

const compensationInitiated = " revive failed: admission accepted but invalidated by loss of the record; compensation initiated\n"

// wantCompensated checks a compensation that verified the session quiet:
// one abort after the admission, one status read after it, the lease
// released, the job still gone and no new run registered.
func (h *harness) wantCompensated(id string, seq int64) {
	h.t.Helper()
	h.waitFor("the compensation to release the lease", func(st *store.State) bool { return st.Leases[id] == nil })
	prompts := h.after(seq, "POST", "/session/"+id+"/prompt_async")
	aborts := h.after(seq, "POST", "/session/"+id+"/abort")
	if len(prompts) != 1 || len(aborts) != 1 || aborts[0].Seq < prompts[0].Seq {
		h.t.Fatalf("want the prompt, then exactly one abort; got %d prompts and %d aborts", len(prompts), len(aborts))
	}
	if polls := h.after(aborts[0].Seq, "GET", "/session/status"); len(polls) != 1 {
		h.t.Fatalf("%d status reads after the compensation's abort, want 1", len(polls))
	}
	st := h.doc()
	if j := st.Job(id); j != nil {
		h.t.Fatalf("the compensation brought the job back: %+v", j)
	}
	if st.Tombstone(id) == nil {
		h.t.Fatal("the compensation cleared the tombstone")
	}
	op := h.onlyOp(id, store.OpReviveAdmission)
	if op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted || op.Error != "compensated: aborted and verified quiet" {
		h.t.Fatalf("revive op after the compensation: %+v", op)
	}
	if n := len(h.after(seq, "POST", "/session/"+parent+"/prompt_async")); n != 0 {
		h.t.Fatalf("the parent was prompted %d times", n)
	}
	if h.fake.Busy(id) {
		h.t.Fatal("the admitted run is still going after the compensation")
	}
}

func TestReviveAdmittedAfterItsTaskWasDeletedIsAbortedAndTheLeaseReleased(t *testing.T) {
	h := newHarness(t)
	// With parent notifications on: the compensated run is not one the
	// parent is told about.
	h.notifying(10 * time.Second)
	id := h.reconciledJob("explorer", "first")
	h.waitFor("the first run's notification", func(st *store.State) bool { return !notifyBusy(st, id) })
	told := len(h.notices())
	before := h.lastSeq()
	o := h.deletedDuringAdmission(id, func() { h.observe("session.deleted", id) }, nil)
	wantOut(t, o, 1, "", "Task "+id+compensationInitiated)
	h.wantCompensated(id, before)
	if ts := h.doc().Tombstone(id); ts.Reason != "session deleted" {
		t.Fatalf("tombstone %+v", ts)
	}
	h.reconcileNow()
	if n := len(h.notices()); n != told {
		t.Fatalf("%d parent notifications after the compensation, want %d", n, told)
	}
}

func TestReviveAdmittedAfterItsParentWasDeletedIsAbortedAndTheLeaseReleased(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	before := h.lastSeq()
	o := h.deletedDuringAdmission(id, func() { h.observe("session.deleted", parent) }, nil)
	wantOut(t, o, 1, "", "Task "+id+compensationInitiated)
	h.wantCompensated(id, before)
	if ts := h.doc().Tombstone(id); ts.Reason != "parent deleted" {
		t.Fatalf("tombstone %+v", ts)
	}
}

func TestReviveAdmittedLateAfterItsTaskWasDeletedIsCompensatedAndTheCallerKeepsItsAnswer(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	h.queueHang()
	h.hold("admit", "POST", "/session/*/prompt_async", 0, 1)
	h.env["SLIM_TASKS_ADMISSION_TIMEOUT_MS"] = "400"
	before := h.lastSeq()
	wantOut(t, h.tool("revive", map[string]any{"task_id": id, "prompt": "again"}), 0, reviveText(id, g1, "completed", "admission_unknown")+admissionUnknown, "")
	h.observe("session.deleted", id)
	st := h.doc()
	if st.Job(id) != nil || st.Tombstone(id) == nil {
		t.Fatalf("the deletion did not drop the job: %+v", st.Job(id))
	}
	if l := st.Leases[id]; l == nil || l.State != store.LeaseHeld || l.Kind != store.LeaseRelaunch {
		t.Fatalf("the deletion touched the pending admission's lease: %+v", l)
	}
	h.release("admit", nil)
	h.wantCompensated(id, before)
	if op := h.onlyOp(id, store.OpReviveAdmission); !op.CallerAnswered {
		t.Fatalf("op %+v", op)
	}
}

func TestReviveWhoseCompensationIsUnconfirmedQuarantinesTheLease(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(h *harness, id string)
		why   string
	}{
		{"the session stays busy", func(h *harness, id string) {
			h.script(opencodefake.Script{Aborts: []opencodefake.Abort{{Keep: true}}})
		}, "the session is busy"},
		{"the status read fails", func(h *harness, id string) {
			h.setStatus(opencodefake.StatusMap{Mode: opencodefake.StatusError})
		}, "the status read failed: HTTP 500: session status lookup failed"},
		{"the status read times out", func(h *harness, id string) {
			// Short read budgets: the settler's, and the later calls'.
			h.env["SLIM_TASKS_VERIFY_TIMEOUT_MS"] = "300"
			h.env["SLIM_TASKS_STATUS_TIMEOUT_MS"] = "300"
			h.setStatus(opencodefake.StatusMap{Mode: opencodefake.StatusHang})
		}, "the status read failed: Session status lookup timed out"},
		{"the abort fails", func(h *harness, id string) {
			h.script(opencodefake.Script{Aborts: []opencodefake.Abort{{Reply: opencodefake.AbortError}}})
		}, "the abort failed: HTTP 500: abort failed for session %s"},
		{"the abort is not confirmed", func(h *harness, id string) {
			h.script(opencodefake.Script{Aborts: []opencodefake.Abort{{Reply: opencodefake.AbortFalse}}})
		}, "the abort was not confirmed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.reconciledJob("explorer", "first")
			o := h.deletedDuringAdmission(id, func() { h.observe("session.deleted", id) }, func() { tc.setup(h, id) })
			wantOut(t, o, 1, "", "Task "+id+compensationInitiated)
			h.waitFor("the compensation to quarantine the lease", func(st *store.State) bool {
				l := st.Leases[id]
				return l != nil && l.State == store.LeaseQuarantined
			})
			why := tc.why
			if strings.Contains(why, "%s") {
				why = fmt.Sprintf(why, id)
			}
			wantQuarantined(t, h, id, why)
		})
	}
}

// wantQuarantined checks a quarantined compensation: the lease stays
// until an operator breaks it, and only that frees the task's ID.
func wantQuarantined(t *testing.T, h *harness, id, why string) {
	t.Helper()
	l := h.doc().Leases[id]
	if l.Note != "compensation unconfirmed: "+why+"; only `slim tasks lease break --task "+id+"` releases it" {
		t.Fatalf("quarantined lease note %q", l.Note)
	}
	if op := h.onlyOp(id, store.OpReviveAdmission); op.Phase != store.PhaseQuarantined || op.Error != "compensation unconfirmed: "+why {
		t.Fatalf("op %+v", op)
	}
	if n := len(h.calls("POST", "/session/"+id+"/abort")); n != 1 {
		t.Fatalf("%d compensation aborts, want exactly 1", n)
	}
	// Nothing releases it by itself.
	h.tool("status", map[string]any{"task_id": id})
	if o := h.operator([]string{"reconcile"}); o.code != 0 {
		t.Fatal(o)
	}
	if l := h.doc().Leases[id]; l == nil || l.State != store.LeaseQuarantined {
		t.Fatalf("the quarantined lease was released without an operator: %+v", l)
	}
	// The ID stays taken: the host's own resume of the session is not
	// registered, and the board no longer knows the task.
	native := map[string]any{"subagent_type": "explorer", "prompt": "resume", "task_id": id, "background": true}
	var answer struct{ Action, Append string }
	if err := json.Unmarshal([]byte(h.hookAfter(native, "task_id: "+id+"\nstate: running").stdout), &answer); err != nil {
		t.Fatal(err)
	}
	wantNote := "\n\n[slim] This run of task " + id + " is not tracked by the background task tools: that task is quarantined (" + l.Note +
		"). task_status and task_result will not report this run; do not start it again with the same task_id."
	if answer.Action != "append" || answer.Append != wantNote {
		t.Fatalf("the hook's answer to a launch past the quarantined lease: %+v\nwant the note %q", answer, wantNote)
	}
	if j := h.doc().Job(id); j != nil {
		t.Fatalf("a launch was registered past the quarantined lease: %+v", j)
	}
	wantOut(t, h.tool("revive", map[string]any{"task_id": id, "prompt": "again"}), 1, "", "Unknown or unowned background task: "+id+"\n")

	o := h.operator([]string{"lease", "break"}, "--task", id)
	wantOut(t, o, 0, "broke the quarantined relaunch lease of "+id+" (generation "+itoa(int(l.Generation))+")\n", "")
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("lease after the break: %+v", l)
	}
	if o := h.hookAfter(native, "task_id: "+id+"\nstate: running"); strings.Contains(o.stdout, "not tracked") {
		t.Fatalf("a launch after the break was told it is not tracked: %s", o)
	}
	if j := h.doc().Job(id); j == nil || j.State != store.JobRunning {
		t.Fatalf("a launch after the break was not registered: %+v", j)
	}
}

func TestReviveWhoseCompensationAbortHangsKeepsTheLeaseUntilItSettles(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	o := h.deletedDuringAdmission(id, func() { h.observe("session.deleted", id) }, func() {
		h.hold("compensation", "POST", "/session/*/abort", 0, 1)
	})
	wantOut(t, o, 1, "", "Task "+id+compensationInitiated)
	h.waitHeld("compensation", 1)
	st := h.doc()
	l := st.Leases[id]
	if l == nil || l.State != store.LeaseHeld {
		t.Fatalf("lease while the compensation's abort hangs: %+v", l)
	}
	if alive, err := owner.Alive(l.Owner); err != nil || !alive {
		t.Fatalf("the compensation's lease is not owned by a live settler: %+v", l.Owner)
	}
	if op := st.Ops[l.OpID]; op == nil || op.Phase != store.PhaseCompensating {
		t.Fatalf("op while the abort hangs: %+v", op)
	}
	// An abort that never confirms ends in quarantine, not in a release.
	h.release("compensation", &opencodefake.Response{Status: 503, Body: json.RawMessage(`{"name":"UnknownError","data":{"message":"unavailable"}}`)})
	h.waitFor("the compensation to quarantine the lease", func(st *store.State) bool {
		l := st.Leases[id]
		return l != nil && l.State == store.LeaseQuarantined
	})
	wantQuarantined(t, h, id, "the abort failed: HTTP 503: unavailable")
}

func TestCompensationLeavesASuccessorsLeaseAndRecordAlone(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	saved := *h.job(id)
	var settler owner.Identity
	o := h.deletedDuringAdmission(id, func() { h.observe("session.deleted", id) }, func() {
		h.hold("read", "GET", "/session/status", 0, 1)
	})
	wantOut(t, o, 1, "", "Task "+id+compensationInitiated)
	h.waitHeld("read", 1)
	settler = h.doc().Leases[id].Owner

	// An operator breaks the lease and a new launch of the task takes
	// the ID with a lease of its own.
	if o := h.operator([]string{"lease", "break"}, "--task", id, "--force", "--confirm-not-admitted"); o.code != 0 {
		t.Fatal(o)
	}
	var succ store.Job
	h.mutate(func(st *store.State) error {
		j := saved
		j.Generation, j.State, j.TerminalState = st.NextGeneration(), store.JobRunning, ""
		st.Live[id] = &j
		succ = j
		_, err := st.AcquireLease(store.LeaseRequest{TaskID: id, Kind: store.LeaseRelaunch, Token: "successor", Generation: j.Generation}, st.Meta.CreatedAt)
		return err
	})
	h.release("read", nil)
	waitGone(t, settler)
	st := h.doc()
	if l := st.Leases[id]; l == nil || l.Token != "successor" || l.State != store.LeaseHeld {
		t.Fatalf("the successor's lease was touched: %+v", l)
	}
	if j := st.Job(id); j == nil || j.Generation != succ.Generation || j.State != store.JobRunning || j.UpdatedAt != succ.UpdatedAt {
		t.Fatalf("the successor's record was touched: %+v", j)
	}
	if n := len(h.calls("POST", "/session/"+id+"/abort")); n != 1 {
		t.Fatalf("%d aborts, want the compensation's one", n)
	}
}

// waitGone waits until the process id names has exited.
func waitGone(t *testing.T, id owner.Identity) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		alive, err := owner.Alive(id)
		if err != nil {
			t.Fatalf("cannot tell whether %s is alive: %v", id, err)
		}
		if !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not exit", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReviveOfAnUncertainTaskIsRefusedWithoutWrites(t *testing.T) {
	h := newHarness(t)
	if err := h.fake.QueueRuns("", opencodefake.Run{DurationMS: 10, Error: &opencodefake.MessageError{Name: "APIError", Data: opencodefake.ErrorData{Message: "model failed"}}}); err != nil {
		t.Fatal(err)
	}
	id := h.launch("explorer", "fails")
	h.waitIdle(id)
	h.tool("status", map[string]any{"task_id": id})
	if s := h.job(id).State; s != store.JobError {
		t.Fatalf("the failed run left the task %s", s)
	}
	h.mutate(func(st *store.State) error {
		st.Job(id).StatusUncertain, st.Job(id).LastStatusError = true, "Session status lookup timed out"
		return nil
	})
	before := h.lastSeq()
	wantOut(t, h.tool("revive", map[string]any{"task_id": "exp-1", "prompt": "again"}), 1, "", "Task exp-1 cannot be revived: state error is not a verified retained terminal session\n")
	for _, c := range h.fake.Calls() {
		if c.Seq > before && c.Method != "GET" {
			t.Fatalf("a refused revive sent %s %s", c.Method, c.Path)
		}
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("lease taken: %+v", l)
	}
	if ops := h.opsOf(id, store.OpReviveAdmission); len(ops) != 0 {
		t.Fatalf("ops journalled: %+v", ops)
	}
}

func TestReviveWhosePromptFailsWithinItsDeadlineReportsTheFailure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   opencodefake.Fault
		outcome store.Outcome
		phase   store.Phase
		msg     string
	}{
		{"rejected", opencodefake.Fault{Respond: &opencodefake.Response{Status: 400, Body: json.RawMessage(`{"name":"BadRequest","data":{"message":"agent explorer is unknown"}}`)}},
			store.OutcomeRejected4xx, store.PhaseRejected, "HTTP 400: agent explorer is unknown"},
		{"a server error", opencodefake.Fault{Respond: &opencodefake.Response{Status: 500, Body: json.RawMessage(`{"name":"UnknownError","data":{"message":"internal error"}}`)}},
			store.OutcomeFailed5xx, store.PhaseSettled, "HTTP 500: internal error"},
		{"a dropped connection", opencodefake.Fault{Drop: true},
			store.OutcomeTransport, store.PhaseSettled, "OpenCode POST /session/%s/prompt_async at %s failed: EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.reconciledJob("explorer", "first")
			gen := h.job(id).Generation
			f := tc.fault
			f.Method, f.Path, f.Times = "POST", "/session/"+id+"/prompt_async", 1
			if err := h.fake.AddFaults(f); err != nil {
				t.Fatal(err)
			}
			o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
			msg := tc.msg
			if strings.Contains(msg, "%s") {
				msg = fmt.Sprintf(msg, id, h.url)
			}
			if tc.phase != store.PhaseRejected {
				// Not an authoritative refusal: the model is told the
				// host did not record it, and to look before retrying.
				msg += " (the host did not record the prompt; use task_status before reviving it again)"
			}
			wantOut(t, o, 1, "", "Task "+id+" revive failed: "+msg+"\n")
			st := h.doc()
			if j := st.Job(id); j.Generation != gen || j.State != store.JobReconciled {
				t.Fatalf("job after a failed revive: %+v", j)
			}
			if l := st.Leases[id]; l != nil {
				t.Fatalf("a failed revive kept its lease: %+v", l)
			}
			if op := h.onlyOp(id, store.OpReviveAdmission); op.Phase != tc.phase || op.Outcome != tc.outcome {
				t.Fatalf("revive op %+v", op)
			}
		})
	}
}

func TestReviveWhoseAnswerIsLostButWhosePromptIsInTheTranscriptStarts(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	h.queueHang()
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/session/" + id + "/prompt_async", Times: 1, DropAfter: true}); err != nil {
		t.Fatal(err)
	}
	o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
	j := h.job(id)
	wantOut(t, o, 0, reviveText(id, j.Generation, "running", "started"), "")
	if j.Generation <= g1 || j.State != store.JobRunning {
		t.Fatalf("job %+v", j)
	}
	if op := h.onlyOp(id, store.OpReviveAdmission); op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted {
		t.Fatalf("op %+v", op)
	}
}

func TestReviveOfAStoppedTaskRelaunchesItBeforeAndAfterAcknowledgement(t *testing.T) {
	for _, ack := range []bool{false, true} {
		t.Run(fmt.Sprintf("acknowledged=%v", ack), func(t *testing.T) {
			h := newHarness(t)
			id := h.stoppedJob("explorer")
			if ack {
				h.acknowledge()
				if j := h.job(id); j.State != store.JobStopped || j.TerminalUnreconciled {
					t.Fatalf("job after the acknowledgement: %+v", j)
				}
			}
			g1 := h.job(id).Generation
			h.queueHang()
			o := h.tool("revive", map[string]any{"task_id": id, "prompt": "finish it"})
			j := h.job(id)
			wantOut(t, o, 0, reviveText(id, j.Generation, "running", "started"), "")
			if j.Generation <= g1 || j.State != store.JobRunning || j.StatusUncertain {
				t.Fatalf("job after the revive: %+v", j)
			}
		})
	}
}

func TestReviveRightAfterACancelNeedsNoAcknowledgement(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "x")
	g1 := h.job(id).Generation
	wantOut(t, h.tool("cancel", map[string]any{"task_id": id}), 0, cancelText(id, "cancelled", "cancelled"), "")
	h.queueHang()
	o := h.tool("revive", map[string]any{"task_id": id, "prompt": "do it differently"})
	j := h.job(id)
	wantOut(t, o, 0, reviveText(id, j.Generation, "running", "started"), "")
	if j.Generation <= g1 || j.State != store.JobRunning {
		t.Fatalf("job %+v", j)
	}
	if n := len(h.calls("POST", "/session/*/abort")); n != 1 {
		t.Fatalf("%d aborts, want only the cancel's", n)
	}
}

func TestReviveOfAnUnknownTaskIsRefused(t *testing.T) {
	h := newHarness(t)
	h.launch("explorer", "mine")
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"task_id": "exp-9", "prompt": "p"}, "Unknown or unowned background task: exp-9"},
		{map[string]any{"task_id": "ses_nobody", "prompt": "p"}, "Unknown or unowned background task: ses_nobody"},
		{map[string]any{"task_id": "exp-1", "prompt": "   "}, "task_revive requires a non-empty prompt"},
		{map[string]any{"prompt": "p"}, "task_revive requires task_id"},
	} {
		wantOut(t, h.tool("revive", tc.args), 1, "", tc.want+"\n")
	}
	wantOut(t, h.run(h.requestAs(parent, "explorer", map[string]any{"task_id": "exp-1", "prompt": "p"}), "tasks", "revive"), 1, "", "task_revive can only be used by orchestrator\n")
	if n := len(h.calls("POST", "/session/*/abort")); n != 0 {
		t.Fatalf("%d aborts sent", n)
	}
}
