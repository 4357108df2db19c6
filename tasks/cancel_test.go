package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// hold makes the fake hold the matching calls at hold name: times of them
// (0: every one) from the call-th after now (0: the next).
func (h *harness) hold(name, method, path string, call, times int) {
	h.t.Helper()
	if err := h.fake.AddFaults(opencodefake.Fault{Method: method, Path: path, Call: call, Times: times, Hold: name}); err != nil {
		h.t.Fatal(err)
	}
}

// release lets the calls held at name go on: handled normally when resp
// is nil, else answered resp without anything done server-side.
func (h *harness) release(name string, resp *opencodefake.Response) {
	h.t.Helper()
	if err := h.fake.Release(name, resp); err != nil {
		h.t.Fatal(err)
	}
}

// toolPastDeadline runs a tool whose host call the fake holds (hold, as
// h.hold named it), with the deadline knob set to ms for this call only,
// and returns its answer once the held call has arrived as well. The
// settler makes that call only after it took the op over and marked it
// sent, so the store the test reads next is the one it means even on a
// slow machine, where the caller's deadline can come first.
func (h *harness) toolPastDeadline(tool string, args any, hold, knob, ms string) out {
	h.t.Helper()
	h.env[knob] = ms
	wait := h.start(tool, args)
	h.env[knob] = knobs[knob]
	h.waitHeld(hold, 1)
	return wait()
}

// respond makes the fake answer the matching calls with status and body
// (JSON, or none when empty), doing nothing server-side.
func (h *harness) respond(method, path string, status int, body string) {
	h.t.Helper()
	r := &opencodefake.Response{Status: status}
	if body != "" {
		r.Body = json.RawMessage(body)
	}
	if err := h.fake.AddFaults(opencodefake.Fault{Method: method, Path: path, Respond: r}); err != nil {
		h.t.Fatal(err)
	}
}

// script loads a script on top of the fake's state (aborts, runs).
func (h *harness) script(sc opencodefake.Script) {
	h.t.Helper()
	if err := h.fake.LoadScript(sc); err != nil {
		h.t.Fatal(err)
	}
}

// opsOf returns the task's ops of kind, oldest first.
func (h *harness) opsOf(taskID string, kind store.OpKind) []*store.Op {
	h.t.Helper()
	var out []*store.Op
	for _, op := range h.doc().Ops {
		if op.TaskID == taskID && op.Kind == kind {
			out = append(out, op)
		}
	}
	for i := 1; i < len(out); i++ {
		for k := i; k > 0 && out[k].CreatedAt.Before(out[k-1].CreatedAt); k-- {
			out[k], out[k-1] = out[k-1], out[k]
		}
	}
	return out
}

// onlyOp returns the task's one op of kind, failing unless there is
// exactly one.
func (h *harness) onlyOp(taskID string, kind store.OpKind) *store.Op {
	h.t.Helper()
	ops := h.opsOf(taskID, kind)
	if len(ops) != 1 {
		h.t.Fatalf("task %s has %d %s ops, want 1: %+v", taskID, len(ops), kind, ops)
	}
	return ops[0]
}

// after returns the calls to method and pattern logged after call seq.
func (h *harness) after(seq int64, method, pattern string) []opencodefake.Call {
	var out []opencodefake.Call
	for _, c := range h.calls(method, pattern) {
		if c.Seq > seq {
			out = append(out, c)
		}
	}
	return out
}

// lastSeq is the number of the last call the fake logged.
func (h *harness) lastSeq() int64 {
	cs := h.fake.Calls()
	if len(cs) == 0 {
		return 0
	}
	return cs[len(cs)-1].Seq
}

// operator runs an operator command of the harness's scope:
// slim tasks ARGS... --directory D --server-url U FLAGS...
func (h *harness) operator(args []string, flags ...string) out {
	h.t.Helper()
	full := append([]string{"tasks"}, args...)
	full = append(full, "--directory", h.dir, "--server-url", h.url)
	return h.run(nil, append(full, flags...)...)
}

// observe feeds one host event to the scope, as the hook does.
func (h *harness) observe(event, session string, flags ...string) {
	h.t.Helper()
	args := append([]string{"tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", session}, flags...)
	if o := h.run(nil, append(args, event)...); o.code != 0 {
		h.t.Fatalf("observe %s %s: %s", event, session, o)
	}
}

// cancelText is task_cancel's answer for state and text.
func cancelText(id, state, text string) string {
	return "task_id: " + id + "\nstate: " + state + "\n\n<task_error>\n" + text + "\n</task_error>\n"
}

func wantOut(t *testing.T, o out, code int, stdout, stderr string) {
	t.Helper()
	if o.code != code || o.stdout != stdout || o.stderr != stderr {
		t.Fatalf("got %s\nwant exit %d\nstdout:\n%s\nstderr:\n%s", o, code, stdout, stderr)
	}
}

func TestCancelAbortsVerifiesTheStopAndRecordsTheTaskCancelled(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "obsolete work")
	gen := h.job(id).Generation
	before := h.lastSeq()
	o := h.tool("cancel", map[string]any{"task_id": id, "reason": "obsolete"})
	wantOut(t, o, 0, cancelText(id, "cancelled", "cancelled: obsolete"), "")

	j := h.job(id)
	if j.State != store.JobCancelled || !j.CancellationRequested || !j.TerminalUnreconciled || j.StatusUncertain || j.Generation != gen || j.ResultSummary != "cancelled: obsolete" {
		t.Fatalf("job after a verified cancel: %+v", j)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("the cancel left its lease: %+v", l)
	}
	if op := h.onlyOp(id, store.OpAbort); op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted || op.CallerAnswered || op.Generation != gen {
		t.Fatalf("abort op %+v", op)
	}
	aborts := h.after(before, "POST", "/session/"+id+"/abort")
	polls := h.after(before, "GET", "/session/status")
	if len(aborts) != 1 || len(polls) < 2 || polls[0].Seq < aborts[0].Seq {
		t.Fatalf("want one abort, then at least two status polls (the stable window); got %d aborts and %d polls", len(aborts), len(polls))
	}
	if n := len(h.calls("DELETE", "/session/**")); n != 0 {
		t.Fatalf("a cancel deleted %d sessions; it must keep the session", n)
	}
	if _, ok := h.fake.Session(id); !ok || h.fake.Busy(id) {
		t.Fatalf("the session is gone or still busy after the cancel")
	}
}

func TestCancelWhoseTaskStaysBusyFailsUncertainAndReleasesTheLease(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(h *harness, id string)
		last  string
	}{
		{"the abort did not take", func(h *harness, id string) {
			h.script(opencodefake.Script{Aborts: []opencodefake.Abort{{Keep: true}}})
		}, "busy"},
		{"the map shows it busy throughout", func(h *harness, id string) {
			h.setStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{id: {Type: "busy"}}})
		}, "busy"},
		{"the map shows it retrying", func(h *harness, id string) {
			h.setStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{id: {Type: "retry", Attempt: 2, Message: "rate limited"}}})
		}, "retry"},
		{"the map shows it processing an image", func(h *harness, id string) {
			h.setStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{id: {Type: "image_processing"}}})
		}, "busy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			// The verification must run out its budget: a short one.
			h.env["SLIM_TASKS_VERIFY_TIMEOUT_MS"] = "800"
			id := h.hangingJob("explorer", "x")
			tc.setup(h, id)
			msg := "Session abort returned but task did not stay stopped: " + id + " (" + tc.last + ")"
			o := h.tool("cancel", map[string]any{"task_id": id})
			wantOut(t, o, 0, cancelText(id, "running", msg), "")
			j := h.job(id)
			if j.State != store.JobRunning || !j.StatusUncertain || j.LastStatusError != msg || j.CancellationRequested {
				t.Fatalf("job after an unverified cancel: %+v", j)
			}
			if l := h.doc().Leases[id]; l != nil {
				t.Fatalf("the failed cancel kept its lease: %+v", l)
			}
			if n := len(h.calls("GET", "/session/status")); n < 3 {
				t.Fatalf("the verification read the map %d times; it must poll until its budget is spent", n)
			}
		})
	}
}

func TestCancelWhoseLastPollTheBudgetCutsShortReportsTheLastStatusSeen(t *testing.T) {
	// Every status answer takes 600 ms and the budget is 1000 ms, so the
	// verification's second poll is always cut off by the budget's end.
	// That poll saw nothing: the model must read the busy the first
	// poll saw, not a lookup timeout (seen under load in CI).
	h := newHarness(t)
	h.env["SLIM_TASKS_VERIFY_TIMEOUT_MS"] = "1000"
	h.env["SLIM_TASKS_VERIFY_POLL_MS"] = "50"
	id := h.hangingJob("explorer", "x")
	h.setStatus(opencodefake.StatusMap{DelayMS: 600, Sessions: map[string]opencodefake.StatusEntry{id: {Type: "busy"}}})
	before := h.lastSeq()
	o := h.tool("cancel", map[string]any{"task_id": id})
	msg := "Session abort returned but task did not stay stopped: " + id + " (busy)"
	wantOut(t, o, 0, cancelText(id, "running", msg), "")
	aborts := h.after(before, "POST", "/session/"+id+"/abort")
	if len(aborts) != 1 {
		t.Fatalf("%d aborts, want 1", len(aborts))
	}
	if polls := h.after(aborts[0].Seq, "GET", "/session/status"); len(polls) < 2 {
		t.Fatalf("the verification read the map %d times after the abort; the test needs a cut-off second poll", len(polls))
	}
	if j := h.job(id); j.LastStatusError != msg {
		t.Fatalf("job's last status error %q, want %q", j.LastStatusError, msg)
	}
}

func TestCancelWhoseAbortIsNotConfirmedFailsWithoutPolling(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "x")
	h.script(opencodefake.Script{Aborts: []opencodefake.Abort{{Reply: opencodefake.AbortFalse}}})
	o := h.tool("cancel", map[string]any{"task_id": id})
	msg := "Session abort was not confirmed: " + id
	wantOut(t, o, 0, cancelText(id, "running", msg), "")
	if n := len(h.calls("GET", "/session/status")); n != 0 {
		t.Fatalf("an unconfirmed abort was followed by %d status polls", n)
	}
	j := h.job(id)
	if j.State != store.JobRunning || !j.StatusUncertain || j.LastStatusError != msg {
		t.Fatalf("job %+v", j)
	}
	if op := h.onlyOp(id, store.OpAbort); op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeRejected4xx {
		t.Fatalf("abort op %+v", op)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("lease left: %+v", l)
	}
}

func TestCancelWhoseAbortFailsReportsTheHostsErrorAndReleasesTheLease(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "x")
	h.script(opencodefake.Script{Aborts: []opencodefake.Abort{{Reply: opencodefake.AbortError}}})
	o := h.tool("cancel", map[string]any{"task_id": id})
	msg := "HTTP 500: abort failed for session " + id
	wantOut(t, o, 0, cancelText(id, "running", msg), "")
	if j := h.job(id); j.State != store.JobRunning || !j.StatusUncertain || j.LastStatusError != msg {
		t.Fatalf("job %+v", j)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("lease left: %+v", l)
	}
}

func TestCancelWhoseAbortOutlivesItsDeadlineKeepsTheLeaseUntilTheAbortSettles(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "x")
	h.hold("abort", "POST", "/session/*/abort", 0, 1)
	// Only the held abort may run out its deadline; the later cancels
	// run with the usual one.
	o := h.toolPastDeadline("cancel", map[string]any{"task_id": id}, "abort", "SLIM_TASKS_ABORT_TIMEOUT_MS", "400")
	msg := "Session abort timed out after 400ms"
	wantOut(t, o, 0, cancelText(id, "running", msg), "")

	st := h.doc()
	l, j := st.Leases[id], st.Job(id)
	if l == nil || l.Kind != store.LeaseCancellation || l.State != store.LeaseHeld {
		t.Fatalf("lease while the abort is pending: %+v", l)
	}
	if alive, err := owner.Alive(l.Owner); err != nil || !alive {
		t.Fatalf("the pending abort's lease is not owned by a live settler (%v, %v): %+v", alive, err, l.Owner)
	}
	if op := st.Ops[l.OpID]; op == nil || op.Phase != store.PhaseSentUnknown || !op.CallerAnswered || !op.Owner.Same(l.Owner) {
		t.Fatalf("abort op while pending: %+v", op)
	}
	if j.State != store.JobRunning || !j.StatusUncertain || j.LastStatusError != msg {
		t.Fatalf("job while the abort is pending: %+v", j)
	}

	// Everything that needs the lease is refused meanwhile.
	unavailable := "stale/uncertain cancellation: cancellation lease unavailable for " + id
	wantOut(t, h.tool("revive", map[string]any{"task_id": id, "prompt": "again"}), 1, "", unavailable+"\n")
	wantOut(t, h.tool("message", map[string]any{"task_id": id, "message": "note"}), 1, "", "Task "+id+" cannot queue a message: message/control lease unavailable\n")
	wantOut(t, h.tool("cancel", map[string]any{"task_id": id}), 0, cancelText(id, "running", unavailable), "")
	if n := len(h.calls("POST", "/session/*/abort")); n != 1 {
		t.Fatalf("%d aborts sent while one was pending, want 1", n)
	}
	if n := len(h.calls("POST", "/session/*/prompt_async")) + len(h.calls("POST", "/session/*/message")); n != 1 {
		t.Fatalf("%d prompts sent, want only the launch's", n)
	}

	// The late abort settles: the lease goes, the task stays running and
	// uncertain, because nothing verified the stop.
	h.release("abort", nil)
	h.waitFor("the late abort to release the lease", func(st *store.State) bool { return st.Leases[id] == nil })
	j = h.job(id)
	if j.State != store.JobRunning || !j.StatusUncertain || j.CancellationRequested {
		t.Fatalf("a late abort changed the job: %+v", j)
	}
	if op := h.onlyOp(id, store.OpAbort); op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted || !op.CallerAnswered {
		t.Fatalf("abort op after the late settlement: %+v", op)
	}

	wantOut(t, h.tool("cancel", map[string]any{"task_id": id}), 0, cancelText(id, "cancelled", "cancelled"), "")
	if j := h.job(id); j.State != store.JobCancelled || j.StatusUncertain {
		t.Fatalf("job after the second cancel: %+v", j)
	}
}

func TestCancelOfAFinishedTaskSendsNoAbort(t *testing.T) {
	h := newHarness(t)
	id := h.completed("explorer", "done")
	wantOut(t, h.tool("cancel", map[string]any{"task_id": id}), 0, cancelText(id, "completed", "stale/uncertain cancellation: task is completed, not running"), "")
	h.acknowledge()
	wantOut(t, h.tool("cancel", map[string]any{"task_id": "exp-1"}), 0, cancelText(id, "completed", "stale/uncertain cancellation: task is completed, not running"), "")
	if n := len(h.calls("POST", "/session/*/abort")); n != 0 {
		t.Fatalf("%d aborts sent to a finished task", n)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("lease taken: %+v", l)
	}
}

func TestCancelOfAnUntrackedOrUnownedTaskAbortsNothing(t *testing.T) {
	h := newHarness(t)
	other := func() string {
		o := h.run(h.requestAs("ses_other", "orchestrator", map[string]any{"subagent_type": "explorer", "prompt": "p"}), "tasks", "task")
		if o.code != 0 {
			t.Fatal(o)
		}
		return strings.TrimPrefix(strings.SplitN(o.stdout, "\n", 2)[0], "task_id: ")
	}()
	for _, s := range []opencodefake.SessionSeed{{ID: "ses_Zmine", ParentID: parent}, {ID: "ses_Wtheirs", ParentID: "ses_other"}} {
		if _, err := h.fake.AddSession(s); err != nil {
			t.Fatal(err)
		}
	}
	unowned := "unknown or unowned background task"
	for _, tc := range []struct{ id, text string }{
		{parent, "cannot cancel parent session"},
		{other, unowned},
		{"exp-1", unowned},
		{"not-a-session", unowned},
		{"ses_Wtheirs", unowned},
		{"ses_gone", unowned},
		{"ses_Zmine", "best-effort/uncertain cancellation: session ownership was observed, but no tracked generation exists; no remote abort was attempted"},
	} {
		wantOut(t, h.tool("cancel", map[string]any{"task_id": tc.id}), 0, cancelText(tc.id, "unknown", tc.text), "")
	}
	if n := len(h.calls("POST", "/session/*/abort")); n != 0 {
		t.Fatalf("%d aborts sent for untracked tasks", n)
	}
	if l := h.doc().Leases; len(l) != 0 {
		t.Fatalf("leases taken: %+v", l)
	}
}

func TestCancelIsRefusedToCallersThatAreNotOrchestrators(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "x")
	for _, tc := range []struct {
		session, agent string
		args           map[string]any
		want           string
	}{
		{parent, "explorer", map[string]any{"task_id": id}, "task_cancel can only be used by orchestrator"},
		{"ses_unmanaged", "", map[string]any{"task_id": id}, "task_cancel can only be used in orchestrator sessions"},
		{"", "orchestrator", map[string]any{"task_id": id}, "task_cancel requires sessionID"},
		{parent, "orchestrator", map[string]any{}, "task_cancel requires task_id"},
	} {
		o := h.run(h.requestAs(tc.session, tc.agent, tc.args), "tasks", "cancel")
		wantOut(t, o, 1, "", tc.want+"\n")
	}
	// A call without an agent from the managed parent is the orchestrator.
	wantOut(t, h.run(h.requestAs(parent, "", map[string]any{"task_id": id}), "tasks", "cancel"), 0, cancelText(id, "cancelled", "cancelled"), "")
	if n := len(h.calls("POST", "/session/*/abort")); n != 1 {
		t.Fatalf("%d aborts sent, want the orchestrator's one", n)
	}
}

func TestCancelDoesNotCancelAGenerationThatChangedDuringTheVerification(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace bool // the relaunch also took a lease of its own
		text    func(id string, gen int64) string
	}{
		{"the generation changed", false, func(id string, gen int64) string {
			return "Task " + id + " run generation changed; refusing stale cancel"
		}},
		{"the lease was replaced", true, func(id string, gen int64) string {
			return "Cancellation lease is no longer valid for " + id + " generation " + itoa(int(gen))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.hangingJob("explorer", "x")
			gen := h.job(id).Generation
			h.hold("verify", "GET", "/session/status", 0, 1)
			wait := h.start("cancel", map[string]any{"task_id": id})
			h.waitHeld("verify", 1)
			var newGen int64
			h.mutate(func(st *store.State) error {
				j := st.Job(id)
				j.Generation = st.NextGeneration()
				j.State = store.JobRunning
				newGen = j.Generation
				if tc.replace {
					delete(st.Leases, id)
					_, err := st.AcquireLease(store.LeaseRequest{TaskID: id, Kind: store.LeaseRelaunch, Token: "successor", Generation: newGen}, st.Meta.CreatedAt)
					return err
				}
				return nil
			})
			h.release("verify", nil)
			o := wait()
			wantOut(t, o, 0, cancelText(id, "running", tc.text(id, gen)), "")
			j := h.job(id)
			if j.Generation != newGen || j.State != store.JobRunning || j.CancellationRequested {
				t.Fatalf("the newer generation was changed by the stale cancel: %+v", j)
			}
			l := h.doc().Leases[id]
			switch {
			case tc.replace && (l == nil || l.Token != "successor" || l.State != store.LeaseHeld):
				t.Fatalf("the successor's lease was touched: %+v", l)
			case !tc.replace && l != nil:
				t.Fatalf("the stale cancel kept its lease: %+v", l)
			}
		})
	}
}
