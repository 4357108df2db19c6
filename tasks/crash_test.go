//go:build unix

package tasks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks"
	"github.com/slimgate/slim/tasks/internal/store"
)

// The crash matrix: each lease-holding tool is killed at each point of
// the send rule (SLIM_TASKS_CRASH_AT makes the process SIGKILL itself
// there). After every crash the store must read, the evidence must be
// what was really sent, and nothing may be sent twice: a crash before
// the send releases the lease; a crash after it leaves the lease
// orphaned until evidence or an operator resolves it.

// crashArgs are each tool's arguments in the crash tests.
func crashArgs(tool, id string) map[string]any {
	switch tool {
	case "message":
		return map[string]any{"task_id": id, "message": "note"}
	case "revive":
		return map[string]any{"task_id": id, "prompt": "again"}
	}
	return map[string]any{"task_id": id}
}

// crashOnce runs one tool with the crash point set, then clears it.
func (h *harness) crashOnce(point, tool string, args any) out {
	h.t.Helper()
	h.env["SLIM_TASKS_CRASH_AT"] = point
	defer delete(h.env, "SLIM_TASKS_CRASH_AT")
	return h.tool(tool, args)
}

// reconcileNow runs one observation pass for the parent.
func (h *harness) reconcileNow() {
	h.t.Helper()
	if o := h.run(nil, "tasks", "reconcile", "--directory", h.dir, "--server-url", h.url, "--parent", parent); o.code != 0 {
		h.t.Fatal(o)
	}
}

// opOf returns the task's op of kind, failing unless there is exactly one.
func (h *harness) opOf(taskID string, kind store.OpKind) *store.Op {
	h.t.Helper()
	var found []*store.Op
	for _, op := range h.doc().Ops {
		if op.TaskID == taskID && op.Kind == kind {
			found = append(found, op)
		}
	}
	if len(found) != 1 {
		h.t.Fatalf("%d %s ops for %s, want 1", len(found), kind, taskID)
	}
	return found[0]
}

func TestCrashBeforeTheSettlerStartsReleasesTheLeaseAndSendsNothing(t *testing.T) {
	for _, c := range []struct {
		tool string
		kind store.OpKind
		path string
	}{
		{"message", store.OpMessage, "/session/*/message"},
		{"cancel", store.OpAbort, "/session/*/abort"},
		{"revive", store.OpReviveAdmission, "/session/*/prompt_async"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			h := newHarness(t)
			var id string
			if c.tool == "revive" {
				id = h.completed("explorer", "done")
			} else {
				id = h.hangingJob("explorer", "work")
			}
			sentBefore := len(h.calls("POST", c.path))
			gen := h.job(id).Generation
			o := h.crashOnce(tasks.CrashCaptured, c.tool, crashArgs(c.tool, id))
			if o.code != -1 {
				t.Fatalf("the tool call did not die: %s", o)
			}
			if l := h.doc().Leases[id]; l == nil || l.Kind == "" {
				t.Fatal("the crash left no lease to find")
			}
			if op := h.opOf(id, c.kind); op.Phase != store.PhasePrepared {
				t.Fatalf("op %+v", op)
			}
			h.reconcileNow()
			if l := h.doc().Leases[id]; l != nil {
				t.Fatalf("a lease of a dead caller that sent nothing was kept: %+v", l)
			}
			if op := h.opOf(id, c.kind); op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeNotSent {
				t.Fatalf("op %+v", op)
			}
			if n := len(h.calls("POST", c.path)) - sentBefore; n != 0 {
				t.Fatalf("%d sends after a crash before the send", n)
			}
			if g := h.job(id).Generation; g != gen {
				t.Fatalf("generation %d -> %d", gen, g)
			}
		})
	}
}

func TestASettlerKilledAfterMarkingTheSendLeavesAnOrphanThatOnlyAnOperatorFrees(t *testing.T) {
	for _, tool := range []string{"message", "cancel", "revive"} {
		t.Run(tool, func(t *testing.T) {
			h := newHarness(t)
			var id string
			if tool == "revive" {
				id = h.completed("explorer", "done")
			} else {
				id = h.hangingJob("explorer", "work")
			}
			posts := func() int {
				return len(h.calls("POST", "/session/*/message")) + len(h.calls("POST", "/session/*/abort")) + len(h.calls("POST", "/session/*/prompt_async"))
			}
			before := posts()
			args := crashArgs(tool, id)
			o := h.crashOnce(tasks.CrashSent, tool, args)
			// The tool call outlives its settler and answers by its
			// deadline, as for a send that never settles.
			if o.code == -1 {
				t.Fatalf("the tool call died with its settler: %s", o)
			}
			h.reconcileNow()
			l := h.doc().Leases[id]
			if l == nil || l.State != store.LeaseOrphaned {
				t.Fatalf("lease %+v, want orphaned", l)
			}
			if n := posts() - before; n != 0 {
				t.Fatalf("%d sends, want none", n)
			}
			// Nothing resends it, and the task's next operation is
			// refused with the way out named.
			again := h.tool(tool, args)
			if !strings.Contains(again.stdout+again.stderr, "slim tasks lease break --task "+id) {
				t.Fatalf("the refusal does not name the operator command: %s", again)
			}
			if n := posts() - before; n != 0 {
				t.Fatalf("%d sends after the orphan, want none", n)
			}
			if b := h.run(nil, "tasks", "lease", "break", "--directory", h.dir, "--server-url", h.url, "--task", id, "--confirm-not-admitted"); b.code != 0 {
				t.Fatal(b)
			}
			if h.doc().Leases[id] != nil {
				t.Fatal("lease break left the lease")
			}
		})
	}
}

func TestASettlerKilledAfterTheHostAnsweredIsResolvedByEvidenceOrNotAtAll(t *testing.T) {
	t.Run("message: outcome unknown, never resent", func(t *testing.T) {
		h := newHarness(t)
		id := h.hangingJob("explorer", "work")
		h.crashOnce(tasks.CrashAnswered, "message", map[string]any{"task_id": id, "message": "note"})
		h.reconcileNow()
		h.reconcileNow()
		if l := h.doc().Leases[id]; l == nil || l.State != store.LeaseOrphaned {
			t.Fatalf("lease %+v, want orphaned (the strict rule)", l)
		}
		if n := len(h.calls("POST", "/session/*/message")); n != 1 {
			t.Fatalf("%d message sends, want exactly 1", n)
		}
	})
	t.Run("cancel: the session is quiet, so the cancel is committed", func(t *testing.T) {
		h := newHarness(t)
		id := h.hangingJob("explorer", "work")
		h.crashOnce(tasks.CrashAnswered, "cancel", map[string]any{"task_id": id})
		h.waitIdle(id) // the abort reached the host and stopped the run
		h.reconcileNow()
		h.reconcileNow()
		if l := h.doc().Leases[id]; l != nil {
			t.Fatalf("lease %+v, want released by the evidence", l)
		}
		if j := h.job(id); j.State != store.JobCancelled {
			t.Fatalf("state %s, want cancelled", j.State)
		}
		if n := len(h.calls("POST", "/session/*/abort")); n != 1 {
			t.Fatalf("%d aborts, want exactly 1", n)
		}
	})
	t.Run("revive: its message is in the transcript, so the run is registered once", func(t *testing.T) {
		h := newHarness(t)
		id := h.completed("explorer", "done")
		gen := h.job(id).Generation
		h.runs("second answer")
		h.crashOnce(tasks.CrashAnswered, "revive", map[string]any{"task_id": id, "prompt": "again"})
		h.reconcileNow()
		h.reconcileNow()
		if l := h.doc().Leases[id]; l != nil {
			t.Fatalf("lease %+v, want released by the evidence", l)
		}
		j := h.job(id)
		if j.Generation <= gen {
			t.Fatalf("generation %d, want a new run after %d", j.Generation, gen)
		}
		if n := len(h.calls("POST", "/session/*/prompt_async")); n != 2 { // the launch and the revive
			t.Fatalf("%d prompts, want 2", n)
		}
		h.reconcileNow()
		if g := h.job(id).Generation; g != j.Generation {
			t.Fatalf("the run was registered twice: %d -> %d", j.Generation, g)
		}
	})
}

// A launch sends its prompt itself, without a lease: the job is recorded
// and the send marked before the prompt, so a launch killed on either
// side of the prompt leaves a tracked task that observation settles by
// what the host shows, and nothing sends the prompt again.
func TestALaunchKilledAroundItsPromptLeavesATrackedTaskAndNeverResendsIt(t *testing.T) {
	launchArgs := map[string]any{"description": "map auth", "subagent_type": "explorer", "prompt": "map auth"}
	// launched kills the launch at point and returns the one child it
	// created and recorded.
	launched := func(h *harness, point string) string {
		h.t.Helper()
		if o := h.crashOnce(point, "task", launchArgs); o.code != -1 {
			h.t.Fatalf("the launch did not die: %s", o)
		}
		jobs := allJobs(h.doc())
		if len(jobs) != 1 || len(h.calls("POST", "/session")) != 1 {
			h.t.Fatalf("%d jobs for %d created sessions, want the one child tracked", len(jobs), len(h.calls("POST", "/session")))
		}
		for id, j := range jobs {
			if j.State != store.JobRunning || j.ParentSessionID != parent || j.Alias != "exp-1" {
				h.t.Fatalf("job %+v", j)
			}
			if op := h.opOf(id, store.OpLaunch); op.Phase != store.PhaseSentUnknown {
				h.t.Fatalf("launch op %+v, want sent_unknown", op)
			}
			return id
		}
		return ""
	}
	t.Run("before the prompt: stopped by two observations, never prompted", func(t *testing.T) {
		h := newHarness(t)
		id := launched(h, tasks.CrashSent)
		h.reconcileNow()
		// The dead launch's op protects nothing (it has no lease): it is
		// settled as orphaned, for the journal to prune.
		if op := h.opOf(id, store.OpLaunch); op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeOrphaned {
			t.Fatalf("the dead launch's op %+v, want settled as orphaned", op)
		}
		// Nothing ran: absent from the map twice, a grace apart.
		h.sleepPastStop(id, 400*time.Millisecond)
		h.reconcileNow()
		if j := h.job(id); j.State != store.JobStopped || !j.TerminalUnreconciled {
			t.Fatalf("job %+v, want stopped", j)
		}
		if n := len(h.calls("POST", "/session/*/prompt_async")); n != 0 {
			t.Fatalf("%d prompts after a launch killed before its prompt", n)
		}
		wantOut(t, h.tool("result", map[string]any{"task_id": id}), 1, "", "Task "+id+" has no confirmed completed result\n")
	})
	t.Run("after the host took the prompt: the run is confirmed, prompted once", func(t *testing.T) {
		h := newHarness(t)
		if err := h.fake.QueueRuns("", opencodefake.Run{Hang: true}); err != nil {
			t.Fatal(err)
		}
		id := launched(h, tasks.CrashAnswered)
		gen := h.job(id).Generation
		wantStatus(t, h.tool("status", map[string]any{"task_id": id}), "exp-1", id, "busy", "explorer", false, "")
		h.reconcileNow()
		j := h.job(id)
		if j.State != store.JobRunning || j.StatusUncertain || j.LastLiveBusyAt.IsZero() || j.Generation != gen {
			t.Fatalf("job %+v", j)
		}
		if n := len(h.calls("POST", "/session/"+id+"/prompt_async")); n != 1 {
			t.Fatalf("%d prompts, want exactly 1", n)
		}
	})
}
