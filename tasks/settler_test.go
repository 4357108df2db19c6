package tasks_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// settlerOf returns the identity of the process that owns the task's
// lease once a settler has taken it over from the tool call fg.
func (h *harness) settlerOf(id string, fg int) owner.Identity {
	h.t.Helper()
	l := h.doc().Leases[id]
	if l == nil {
		h.t.Fatalf("task %s has no lease", id)
	}
	if l.Owner.PID == fg || l.Owner.PID == os.Getpid() {
		h.t.Fatalf("the lease is owned by pid %d, not by a settler", l.Owner.PID)
	}
	if op := h.doc().Ops[l.OpID]; op == nil || op.Phase != store.PhaseSentUnknown || !op.Owner.Same(l.Owner) {
		h.t.Fatalf("the lease's op is not the settler's sent op: %+v", op)
	}
	return l.Owner
}

// kill sends SIGKILL to the settler this test's tool call started.
func kill(t *testing.T, id owner.Identity) {
	t.Helper()
	if err := syscall.Kill(id.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill settler %d: %v", id.PID, err)
	}
	waitGone(t, id)
}

// procStat is what a test reads of a process's entry in the process
// table (readStat): its parent and its process group.
type procStat struct{ ppid, pgrp int }

// killGroup ends what is left of process group pgid, for a test that
// stops early: the group is a settler's session, which only this test
// started.
func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }

// deadIdentity names a live process (this test) with the wrong start
// time: a pid that was reused since the identity was recorded.
func deadIdentity(t *testing.T) owner.Identity {
	t.Helper()
	id := owner.Self()
	if id.StartTime == 0 || id.BootID == "" {
		t.Skip("this platform does not record process start times")
	}
	id.StartTime++
	if alive, err := owner.Alive(id); err != nil || alive {
		t.Fatalf("an identity with a wrong start time is alive=%v (%v)", alive, err)
	}
	return id
}

func TestSettlerGoesOnWhenTheToolCallIsKilledDuringTheAdmission(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	h.queueHang()
	adopted := adoptOrphans(t)
	h.hold("admit", "POST", "/session/*/prompt_async", 0, 1)
	fg, wait := h.startProc("revive", map[string]any{"task_id": id, "prompt": "again"})
	h.waitHeld("admit", 1)
	settler := h.settlerOf(id, fg.Pid)
	t.Cleanup(func() {
		if alive, _ := owner.Alive(settler); alive {
			killGroup(settler.PID)
		}
	})
	if err := fg.Kill(); err != nil {
		t.Fatal(err)
	}
	if o := wait(); o.code != -1 {
		t.Fatalf("the killed tool call ended %s", o)
	}
	if alive, err := owner.Alive(settler); err != nil || !alive {
		t.Fatalf("killing the tool call killed its settler (%v)", err)
	}
	if st, ok := readStat(t, settler.PID); adopted && (!ok || st.ppid != os.Getpid() || st.pgrp != settler.PID) {
		t.Fatalf("the orphaned settler %+v (found %v): want it adopted by this test, in a process group of its own", st, ok)
	}
	h.release("admit", nil)
	h.waitFor("the settler to register the admission", func(st *store.State) bool { return st.Leases[id] == nil })
	waitGone(t, settler)
	if adopted {
		// The settler's session is its process group: reaping the group
		// collects the settler and anything it left, and nothing of it
		// may be left over, running or a zombie.
		ws, ok := reapGroup(t, settler.PID)[settler.PID]
		if !ok || !ws.Exited() || ws.ExitStatus() != 0 {
			t.Fatalf("the settler was not reaped as exited 0: %v (reaped %v)", ws, ok)
		}
		if _, ok := readStat(t, settler.PID); ok {
			t.Fatalf("the settler %d is still in the process table after it was reaped", settler.PID)
		}
	}
	j := h.job(id)
	if j.Generation <= g1 || j.TaskGeneration != 2 || j.State != store.JobRunning {
		t.Fatalf("job after the settler's admission: %+v", j)
	}
	if op := h.onlyOp(id, store.OpReviveAdmission); op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted || op.CallerAnswered {
		t.Fatalf("op %+v", op)
	}
}

func TestSettlerGoesOnWhenTheToolCallIsKilledDuringAMessageOrAnAbort(t *testing.T) {
	for _, c := range []struct {
		tool, path string
		kind       store.OpKind
		args       func(id string) map[string]any
		after      func(t *testing.T, h *harness, id string, fg int)
	}{
		{"message", "/message", store.OpMessage, func(id string) map[string]any { return map[string]any{"task_id": id, "message": "note"} },
			func(t *testing.T, h *harness, id string, fg int) {
				if l := h.doc().Leases[id]; l != nil {
					t.Fatalf("the settled message kept its lease: %+v", l)
				}
				if j := h.job(id); j.State != store.JobRunning {
					t.Fatalf("job after the message: %+v", j)
				}
			}},
		{"cancel", "/abort", store.OpAbort, func(id string) map[string]any { return map[string]any{"task_id": id, "reason": "obsolete"} },
			func(t *testing.T, h *harness, id string, fg int) {
				// A confirmed abort hands the lease back to the tool call
				// for the verification, and the tool call is dead: the
				// next call orphans the lease and resolves it by the
				// evidence, a valid map without the session.
				if l := h.doc().Leases[id]; l == nil || l.Owner.PID != fg {
					t.Fatalf("lease after the abort: %+v, want the tool call's", l)
				}
				h.reconcileNow()
				if l := h.doc().Leases[id]; l != nil {
					t.Fatalf("lease after the evidence: %+v", l)
				}
				if j := h.job(id); j.State != store.JobCancelled || !j.CancellationRequested {
					t.Fatalf("job after the abort: %+v", j)
				}
			}},
	} {
		t.Run(c.tool, func(t *testing.T) {
			h := newHarness(t)
			id := h.hangingJob("explorer", "work")
			h.hold("send", "POST", "/session/*"+c.path, 0, 1)
			fg, wait := h.startProc(c.tool, c.args(id))
			h.waitHeld("send", 1)
			settler := h.settlerOf(id, fg.Pid)
			if err := fg.Kill(); err != nil {
				t.Fatal(err)
			}
			if o := wait(); o.code != -1 {
				t.Fatalf("the killed tool call ended %s", o)
			}
			if alive, err := owner.Alive(settler); err != nil || !alive {
				t.Fatalf("killing the tool call killed its settler (%v)", err)
			}
			h.release("send", nil)
			waitGone(t, settler)
			if op := h.onlyOp(id, c.kind); op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted {
				t.Fatalf("op %+v", op)
			}
			c.after(t, h, id, fg.Pid)
			if n := len(h.calls("POST", "/session/"+id+c.path)); n != 1 {
				t.Fatalf("%d sends, want exactly 1", n)
			}
		})
	}
}

func TestSettlerKilledWhileSendingLeavesAnOrphanThatTheTranscriptResolves(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	baseline := h.lastMessageID(id)
	h.queueHang()
	h.hold("admit", "POST", "/session/*/prompt_async", 0, 1)
	h.env["SLIM_TASKS_ADMISSION_TIMEOUT_MS"] = "400"
	wait := h.start("revive", map[string]any{"task_id": id, "prompt": "again"})
	h.waitHeld("admit", 1)
	kill(t, h.settlerOf(id, 0))
	// The tool call cannot know whether the host took the prompt.
	wantOut(t, wait(), 0, reviveText(id, g1, "completed", "admission_unknown")+admissionUnknown, "")

	// The host carries out the request its client gave up on.
	h.release("admit", nil)
	h.waitCallsDone(0, "POST", "/session/"+id+"/prompt_async")

	h.tool("status", map[string]any{"task_id": id})
	st := h.doc()
	l := st.Leases[id]
	if l == nil || l.State != store.LeaseOrphaned || l.Kind != store.LeaseRelaunch {
		t.Fatalf("lease after its owner died: %+v", l)
	}
	if op := st.Ops[l.OpID]; op.Phase != store.PhaseOrphaned || op.Outcome != store.OutcomeOrphaned {
		t.Fatalf("op after its owner died: %+v", op)
	}
	if st.Job(id).Generation != g1 {
		t.Fatal("the orphan was registered before any evidence was read")
	}

	if o := h.operator([]string{"reconcile"}); o.code != 0 {
		t.Fatal(o)
	}
	j := h.job(id)
	if j.Generation <= g1 || j.TaskGeneration != 2 || j.State != store.JobRunning || j.BaselineMessageID != baseline {
		t.Fatalf("job after the evidence was found: %+v (baseline %s)", j, baseline)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("the resolved orphan kept its lease: %+v", l)
	}
	op := h.onlyOp(id, store.OpReviveAdmission)
	if op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted || !strings.Contains(op.Error, "found in the transcript") {
		t.Fatalf("op after the evidence was found: %+v", op)
	}
	if n := len(h.calls("POST", "/session/"+id+"/prompt_async")); n != 2 {
		t.Fatalf("%d prompts reached the task, want the launch's and the revive's: nothing may be sent again", n)
	}
}

func TestSettlerKilledBeforeTheHostSawThePromptLeavesAnOrphanOnlyAnOperatorFrees(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	h.hold("admit", "POST", "/session/*/prompt_async", 0, 1)
	h.env["SLIM_TASKS_ADMISSION_TIMEOUT_MS"] = "400"
	wait := h.start("revive", map[string]any{"task_id": id, "prompt": "again"})
	h.waitHeld("admit", 1)
	kill(t, h.settlerOf(id, 0))
	wantOut(t, wait(), 0, reviveText(id, g1, "completed", "admission_unknown")+admissionUnknown, "")
	// The host never acts on it.
	h.release("admit", &opencodefake.Response{Status: 503})
	h.waitCallsDone(0, "POST", "/session/"+id+"/prompt_async")

	for i := 0; i < 2; i++ {
		if o := h.operator([]string{"reconcile"}); o.code != 0 {
			t.Fatal(o)
		}
	}
	l := h.doc().Leases[id]
	if l == nil || l.State != store.LeaseOrphaned {
		t.Fatalf("without evidence the orphan must stay: %+v", l)
	}
	if j := h.job(id); j.Generation != g1 || j.State != store.JobReconciled {
		t.Fatalf("job %+v", j)
	}
	refusal := "Task " + id + " cannot be revived: relaunch lease unavailable (the relaunch lease is orphaned: " + l.Note +
		"; an operator can inspect it with `slim tasks lease inspect` and free it with `slim tasks lease break --task " + id + "`)\n"
	wantOut(t, h.tool("revive", map[string]any{"task_id": id, "prompt": "again"}), 1, "", refusal)

	o := h.operator([]string{"lease", "break"}, "--task", id)
	wantOut(t, o, 2, "", "slim: task "+id+"'s relaunch lease protects a prompt that may have been admitted; check the session's transcript, then pass --confirm-not-admitted\n")
	o = h.operator([]string{"lease", "break"}, "--task", id, "--confirm-not-admitted")
	wantOut(t, o, 0, "broke the orphaned relaunch lease of "+id+" (generation "+itoa(int(g1))+")\n", "")
	if op := h.onlyOp(id, store.OpReviveAdmission); op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeOrphaned || op.Error != "lease broken by an operator" {
		t.Fatalf("op after the break: %+v", op)
	}

	h.queueHang()
	o = h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
	wantOut(t, o, 0, reviveText(id, h.job(id).Generation, "running", "started"), "")
}

func TestSettlerWhoseSafetyCapPassesLeavesTheAdmissionOrphanedForEvidence(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	g1 := h.job(id).Generation
	h.queueHang()
	h.hold("admit", "POST", "/session/*/prompt_async", 0, 1)
	h.env["SLIM_TASKS_SAFETY_CAP_MS"] = "200"
	h.env["SLIM_TASKS_ADMISSION_TIMEOUT_MS"] = "600"
	o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
	wantOut(t, o, 0, reviveText(id, g1, "completed", "admission_unknown")+admissionUnknown, "")
	// The cap counts from the settler's start, which a slow machine can
	// put after the caller's deadline.
	h.waitFor("the safety cap to orphan the lease", func(st *store.State) bool {
		l := st.Leases[id]
		return l != nil && l.State == store.LeaseOrphaned
	})
	st := h.doc()
	l := st.Leases[id]
	if l == nil || l.State != store.LeaseOrphaned || !strings.Contains(l.Note, "safety cap") {
		t.Fatalf("lease after the safety cap passed: %+v", l)
	}
	if op := st.Ops[l.OpID]; op.Phase != store.PhaseOrphaned || op.Outcome != store.OutcomeOrphaned || !op.CallerAnswered {
		t.Fatalf("op after the safety cap passed: %+v", op)
	}
	if st.Job(id).Generation != g1 {
		t.Fatal("a capped admission registered a run")
	}
	// The host admits it after all: the transcript says so.
	h.release("admit", nil)
	h.waitCallsDone(0, "POST", "/session/"+id+"/prompt_async")
	h.tool("status", map[string]any{"task_id": id})
	if j := h.job(id); j.Generation <= g1 || j.State != store.JobRunning {
		t.Fatalf("job after the late admission was found: %+v", j)
	}
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("lease %+v", l)
	}
}

func TestLeaseOfAProcessWhosePIDWasReusedCountsAsDead(t *testing.T) {
	dead := func(t *testing.T) owner.Identity { return deadIdentity(t) }
	live := func(*testing.T) owner.Identity { return owner.Self() }
	// lease writes a lease of kind on the task with an op in phase,
	// owned by who.
	lease := func(h *harness, id string, kind store.LeaseKind, opKind store.OpKind, phase store.Phase, who owner.Identity) {
		h.mutate(func(st *store.State) error {
			gen := st.Job(id).Generation
			if _, err := st.AcquireLease(store.LeaseRequest{TaskID: id, Kind: kind, Token: "tok", Generation: gen, OpID: "op1", Owner: who}, st.Meta.CreatedAt); err != nil {
				return err
			}
			if _, err := st.AddOp(store.OpRequest{ID: "op1", Kind: opKind, TaskID: id, Generation: gen, LeaseToken: "tok", ClientMessageID: "msg_never_sent", Owner: who}, st.Meta.CreatedAt); err != nil {
				return err
			}
			if phase == store.PhaseSentUnknown {
				_, err := st.MarkSent("op1", who, st.Meta.CreatedAt)
				return err
			}
			return nil
		})
	}
	note := func(h *harness, id string) string {
		l := h.doc().Leases[id]
		if l == nil {
			h.t.Fatal("no lease")
		}
		return " (the " + string(l.Kind) + " lease is " + string(l.State) + ": " + l.Note + "; an operator can inspect it with `slim tasks lease inspect` and free it with `slim tasks lease break --task " + id + "`)"
	}

	t.Run("a sent revive becomes an orphan the refusal names", func(t *testing.T) {
		h := newHarness(t)
		id := h.reconciledJob("explorer", "first")
		lease(h, id, store.LeaseRelaunch, store.OpReviveAdmission, store.PhaseSentUnknown, dead(t))
		o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
		h.tool("status", map[string]any{"task_id": id})
		l := h.doc().Leases[id]
		if l == nil || l.State != store.LeaseOrphaned || l.Token != "tok" {
			t.Fatalf("lease of a reused pid: %+v", l)
		}
		wantOut(t, o, 1, "", "Task "+id+" cannot be revived: relaunch lease unavailable"+note(h, id)+"\n")
		if n := len(h.calls("POST", "/session/"+id+"/prompt_async")); n != 1 {
			t.Fatalf("%d prompts; the orphan's task may not be prompted", n)
		}
	})
	t.Run("a live owner's lease stays held", func(t *testing.T) {
		h := newHarness(t)
		id := h.reconciledJob("explorer", "first")
		lease(h, id, store.LeaseRelaunch, store.OpReviveAdmission, store.PhaseSentUnknown, live(t))
		wantOut(t, h.tool("revive", map[string]any{"task_id": id, "prompt": "again"}), 1, "", "Task "+id+" cannot be revived: relaunch lease unavailable\n")
		h.tool("status", map[string]any{"task_id": id})
		if l := h.doc().Leases[id]; l == nil || l.State != store.LeaseHeld {
			t.Fatalf("a live owner's lease was orphaned: %+v", l)
		}
	})
	t.Run("an unsent op's lease is released by the next caller", func(t *testing.T) {
		h := newHarness(t)
		id := h.reconciledJob("explorer", "first")
		lease(h, id, store.LeaseRelaunch, store.OpReviveAdmission, store.PhasePrepared, dead(t))
		h.queueHang()
		o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
		wantOut(t, o, 0, reviveText(id, h.job(id).Generation, "running", "started"), "")
		if op := h.doc().Ops["op1"]; op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeNotSent {
			t.Fatalf("the dead owner's unsent op: %+v", op)
		}
	})
	t.Run("an orphaned message lease stays for an operator", func(t *testing.T) {
		h := newHarness(t)
		id := h.hangingJob("explorer", "x")
		lease(h, id, store.LeaseMessage, store.OpMessage, store.PhaseSentUnknown, dead(t))
		h.tool("status", map[string]any{"task_id": id})
		h.tool("status", map[string]any{"task_id": id})
		if l := h.doc().Leases[id]; l == nil || l.State != store.LeaseOrphaned {
			t.Fatalf("an orphaned message lease was resolved without evidence: %+v", l)
		}
		wantOut(t, h.tool("message", map[string]any{"task_id": id, "message": "note"}), 1, "", "Task "+id+" cannot queue a message: message/control lease unavailable"+note(h, id)+"\n")
	})
	t.Run("an orphaned cancel of a busy task stays", func(t *testing.T) {
		h := newHarness(t)
		id := h.hangingJob("explorer", "x")
		lease(h, id, store.LeaseCancellation, store.OpAbort, store.PhaseSentUnknown, dead(t))
		o := h.tool("cancel", map[string]any{"task_id": id})
		wantOut(t, o, 0, cancelText(id, "running", "stale/uncertain cancellation: cancellation lease unavailable for "+id+note(h, id)), "")
		h.tool("status", map[string]any{"task_id": id})
		if l := h.doc().Leases[id]; l == nil || l.State != store.LeaseOrphaned {
			t.Fatalf("an orphaned cancel of a busy task was resolved: %+v", l)
		}
		if j := h.job(id); j.State != store.JobRunning {
			t.Fatalf("job %+v", j)
		}
	})
	t.Run("an orphaned cancel of a quiet task is committed", func(t *testing.T) {
		h := newHarness(t)
		id := h.hangingJob("explorer", "x")
		gen := h.job(id).Generation
		lease(h, id, store.LeaseCancellation, store.OpAbort, store.PhaseSentUnknown, dead(t))
		h.idleInMap(id)
		h.tool("status", map[string]any{"task_id": id})
		if l := h.doc().Leases[id]; l != nil {
			t.Fatalf("the orphaned cancel of a quiet task kept its lease: %+v", l)
		}
		if j := h.job(id); j.State != store.JobCancelled || j.Generation != gen {
			t.Fatalf("job %+v", j)
		}
		if op := h.doc().Ops["op1"]; op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted {
			t.Fatalf("op %+v", op)
		}
	})
}
