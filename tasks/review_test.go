package tasks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

func TestResultIsRefusedWhileARevivesPromptMayBeInTheTranscript(t *testing.T) {
	h := newHarness(t)
	id := h.completed("explorer", "first answer")
	h.mutate(func(st *store.State) error {
		_, err := st.AcquireLease(store.LeaseRequest{TaskID: id, Kind: store.LeaseRelaunch, Token: "t1", Generation: st.Job(id).Generation}, time.Now())
		return err
	})
	o := h.tool("result", map[string]any{"task_id": id})
	if o.code != 1 || !strings.Contains(o.stderr, "is being revived; wait for its new run's result") {
		t.Fatal(o)
	}
	if j := h.job(id); j.State != store.JobCompleted || !j.TerminalUnreconciled {
		t.Fatalf("a refused result acknowledged the run: %+v", j)
	}
}

func TestAFailedRunReportedByResultIsAcknowledgedAndMayBeRunAgain(t *testing.T) {
	h := newHarness(t)
	id := h.finishedJob("explorer", opencodefake.Run{Error: &opencodefake.MessageError{Name: "ProviderError", Data: opencodefake.ErrorData{Message: "provider exploded"}}})
	prompt := h.job(id).Objective
	if o := h.tool("result", map[string]any{"task_id": id}); o.code != 1 || !strings.Contains(o.stderr, "ended in error: provider exploded") {
		t.Fatal(o)
	}
	if j := h.job(id); j.State != store.JobReconciled || j.TerminalState != store.JobError {
		t.Fatalf("job %+v: a reported failure must be acknowledged", j)
	}
	// The same objective may now be launched again: its failure was read.
	o := h.tool("task", map[string]any{"subagent_type": "explorer", "prompt": strings.TrimPrefix(prompt, "")})
	if o.code != 0 {
		t.Fatalf("a relaunch of a read failure was refused: %s", o)
	}
}

func TestAnIdleTaskWhoseTranscriptCannotBeReadIsUncertainNeverStopped(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "work")
	h.idleInMap(id)
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "GET", Path: "/session/" + id + "/message", Respond: &opencodefake.Response{Status: 500, Text: "boom"}}); err != nil {
		t.Fatal(err)
	}
	h.tool("status", map[string]any{"task_id": id})
	time.Sleep(600 * time.Millisecond) // past the stop grace of the knobs
	h.tool("status", map[string]any{"task_id": id})
	j := h.job(id)
	if j.State != store.JobRunning || !j.StatusUncertain || !strings.Contains(j.LastStatusError, "transcript could not be read") {
		t.Fatalf("job %+v: an unread transcript must leave the run running and uncertain", j)
	}
}

func TestAReviveWhoseAnswerAndTranscriptAreLostIsOrphanedNotFailed(t *testing.T) {
	h := newHarness(t)
	id := h.reconciledJob("explorer", "first")
	gen := h.job(id).Generation
	h.queueHang()
	// The prompt's answer is dropped after the host carried it out, and
	// every transcript read after it fails: nothing says whether it was
	// admitted.
	if err := h.fake.AddFaults(
		opencodefake.Fault{Method: "POST", Path: "/session/" + id + "/prompt_async", Times: 1, DropAfter: true},
		opencodefake.Fault{Method: "GET", Path: "/session/" + id + "/message", Call: 2, Respond: &opencodefake.Response{Status: 500, Text: "boom"}},
	); err != nil {
		t.Fatal(err)
	}
	h.tool("revive", map[string]any{"task_id": id, "prompt": "again"})
	h.waitFor("the settler to give up", func(st *store.State) bool {
		l := st.Leases[id]
		return l != nil && l.State == store.LeaseOrphaned
	})
	if g := h.job(id).Generation; g != gen {
		t.Fatalf("generation %d -> %d on no evidence", gen, g)
	}
	if n := len(h.calls("POST", "/session/*/prompt_async")); n != 2 { // the launch and the one revive
		t.Fatalf("%d prompts", n)
	}
	// The transcript readable again shows the prompt: the next pass
	// registers the run once.
	h.fake.ClearFaults()
	h.reconcileNow()
	h.reconcileNow()
	if l := h.doc().Leases[id]; l != nil {
		t.Fatalf("lease %+v after the evidence", l)
	}
	if g := h.job(id).Generation; g <= gen {
		t.Fatalf("generation %d, want a new run", g)
	}
}

func TestAWaitArmedWithoutABaselineIsNotClearedByAnOldMessage(t *testing.T) {
	h := newHarness(t)
	h.parentSession(opencodefake.Todo{ID: "1", Content: "deploy", Status: "pending"})
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "GET", Path: "/session/" + parent + "/message", Times: 1, Respond: &opencodefake.Response{Status: 500, Text: "boom"}}); err != nil {
		t.Fatal(err)
	}
	if o := h.tool("wait-for-user", map[string]any{"reason": "manual step"}); o.code != 0 {
		t.Fatal(o)
	}
	if w := h.doc().Waits[parent]; w == nil || w.BaselineUserMessageID != "" {
		t.Fatalf("wait %+v: the test needs a wait armed without a baseline", w)
	}
	if g := h.gate(); g != "blocked:waiting_for_user" {
		t.Fatalf("the user message from before the wait cleared it: %s", g)
	}
}
