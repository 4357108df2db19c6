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

// notifying turns the parent notification on (the harness has it off)
// with the notify deadline d, and seeds the parent session, whose runs
// the notifications start end at once.
func (h *harness) notifying(d time.Duration) {
	h.t.Helper()
	h.env["SLIM_TASKS_NOTIFY"] = "1"
	h.env["SLIM_TASKS_NOTIFY_TIMEOUT_MS"] = fmt.Sprint(d.Milliseconds())
	h.parentSession()
}

// notices returns the notification prompts the parent received.
func (h *harness) notices() []opencodefake.Call {
	return h.calls("POST", "/session/"+parent+"/prompt_async")
}

// noticeText is the notification of a run of task id in state with the
// summary and result.
func noticeText(id, alias, state, summary, result string) string {
	tag := map[string]string{"completed": "task_result", "error": "task_error"}[state]
	return fmt.Sprintf("<task id=%q state=%q><summary>%s</summary><%s>%s</%s></task>\nBackground task %s ended; its full answer: task_result with task_id %s.",
		id, state, summary, tag, result, tag, alias, id)
}

// wantNotice checks a notification prompt's body: the parent's
// orchestrator agent, the client message ID of op, and one synthetic text
// part marked as internal with text.
func wantNotice(t *testing.T, c opencodefake.Call, op *store.Op, text string) {
	t.Helper()
	var body struct {
		MessageID string `json:"messageID"`
		Agent     string `json:"agent"`
		NoReply   bool   `json:"noReply"`
		Parts     []struct {
			Type      string         `json:"type"`
			Text      string         `json:"text"`
			Synthetic bool           `json:"synthetic"`
			Metadata  map[string]any `json:"metadata"`
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(c.Body), &body); err != nil {
		t.Fatal(err)
	}
	if body.MessageID != op.ClientMessageID || body.Agent != "orchestrator" || body.NoReply || len(body.Parts) != 1 {
		t.Fatalf("notification body %s; want agent orchestrator, message %s and one part", c.Body, op.ClientMessageID)
	}
	p := body.Parts[0]
	if p.Type != "text" || !p.Synthetic || p.Metadata["oh-my-opencode-slim.internalInitiator"] != true || p.Text != text {
		t.Fatalf("notification part %+v\nwant the synthetic internal text\n%s", p, text)
	}
}

func TestARunSlimLaunchedIsReportedToItsParentOnceWithoutClearingItsWait(t *testing.T) {
	h := newHarness(t)
	h.notifying(5 * time.Second)
	if o := h.tool("wait-for-user", map[string]any{"reason": "run the migration"}); o.code != 0 {
		t.Fatal(o)
	}
	id := h.completed("explorer", "the loader is in config.go")
	h.waitFor("the notification to be accepted", func(st *store.State) bool { return st.Job(id).Notification.Sent })
	j := h.job(id)
	op := h.onlyOp(id, store.OpNotification)
	if op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeAccepted || op.Generation != j.Generation || h.doc().Leases[id] != nil {
		t.Fatalf("after the notification: op %+v, lease %+v", op, h.doc().Leases[id])
	}
	if n := j.Notification; !n.Owed || n.Attempts != 1 || n.LastError != "" {
		t.Fatalf("notification record %+v", n)
	}
	calls := h.notices()
	if len(calls) != 1 {
		t.Fatalf("the parent got %d notifications, want 1", len(calls))
	}
	wantNotice(t, calls[0], op, noticeText(id, "exp-1", "completed", "job the loader is in config.go", "the loader is in config.go"))

	// The notification is not the user's answer: the gate's scan of the
	// parent's transcript and the hook's forwarding of it leave the wait.
	if g := h.gate(); g != "blocked:waiting_for_user" {
		t.Fatalf("gate after the notification: %s", g)
	}
	h.chat(op.ClientMessageID, false)
	if w := h.doc().Waits[parent]; w == nil || w.Status != store.WaitingForUser {
		t.Fatalf("the notification cleared the wait: %+v", w)
	}

	// Later passes and reads do not report the run again.
	for _, tool := range []string{"status", "result"} {
		if o := h.tool(tool, map[string]any{"task_id": id}); o.code != 0 {
			t.Fatal(o)
		}
	}
	time.Sleep(300 * time.Millisecond) // a notifier started by mistake has sent by now
	if n := len(h.notices()); n != 1 {
		t.Fatalf("the parent got %d notifications after more calls, want 1", n)
	}
}

func TestAFailedRunIsReportedAsAnError(t *testing.T) {
	h := newHarness(t)
	h.notifying(5 * time.Second)
	id := h.finishedJob("fixer", opencodefake.Run{Error: &opencodefake.MessageError{Name: "APIError", Data: opencodefake.ErrorData{Message: "rate limited"}}})
	h.waitFor("the notification to be accepted", func(st *store.State) bool { return st.Job(id).Notification.Sent })
	calls := h.notices()
	if len(calls) != 1 {
		t.Fatalf("%d notifications", len(calls))
	}
	wantNotice(t, calls[0], h.onlyOp(id, store.OpNotification), noticeText(id, "fix-1", "error", "job", "rate limited"))
}

func TestTheHostsOwnTaskIsNotReportedBySlim(t *testing.T) {
	h := newHarness(t)
	h.notifying(5 * time.Second)
	child, err := h.fake.AddSession(opencodefake.SessionSeed{ID: "ses_native1", ParentID: parent, Title: "native"})
	if err != nil {
		t.Fatal(err)
	}
	h.hookAfter(map[string]any{"description": "Map auth", "subagent_type": "explorer", "prompt": "find it", "background": true},
		`<task id="`+child.ID+`" state="running">`+"\n<summary>Background task started</summary>\n</task>")
	if err := h.fake.SetTranscript(child.ID, []opencodefake.Message{
		{Info: opencodefake.MessageInfo{ID: "msg_000000000001a", Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "find it"}}},
		{Info: opencodefake.MessageInfo{ID: "msg_000000000002a", Role: "assistant", Finish: "stop", Time: opencodefake.MessageTime{Created: 1, Completed: 2}}, Parts: []opencodefake.Part{{Type: "text", Text: "found"}}},
	}); err != nil {
		t.Fatal(err)
	}
	if o := h.tool("status", map[string]any{"task_id": child.ID}); o.code != 0 {
		t.Fatal(o)
	}
	if j := h.job(child.ID); j.State != store.JobCompleted || j.Notification.Owed {
		t.Fatalf("the native run: %+v", j)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(h.notices()); n != 0 || len(h.opsOf(child.ID, store.OpNotification)) != 0 {
		t.Fatalf("slim reported the host's own task %d times", n)
	}
}

func TestANotificationTheHostFailsIsTriedThreeTimesAndARefusalOnce(t *testing.T) {
	t.Run("server errors", func(t *testing.T) {
		h := newHarness(t)
		h.notifying(5 * time.Second)
		h.failNotices(500, `{"name":"UnknownError","data":{"message":"boom"}}`)
		id := h.completed("explorer", "done")
		h.waitFor("three attempts", func(st *store.State) bool {
			n := st.Job(id).Notification
			return n.Attempts == 3 && !notifyBusy(st, id)
		})
		j := h.job(id)
		if j.Notification.Sent || !strings.Contains(j.Notification.LastError, "the parent notification failed") || len(h.notices()) != 3 || h.doc().Leases[id] != nil {
			t.Fatalf("after three failures: %+v, %d calls, lease %+v", j.Notification, len(h.notices()), h.doc().Leases[id])
		}
		time.Sleep(1200 * time.Millisecond) // past the gap a fourth attempt would wait
		if n := len(h.notices()); n != 3 {
			t.Fatalf("%d attempts, want 3", n)
		}
	})
	t.Run("an authoritative refusal", func(t *testing.T) {
		h := newHarness(t)
		h.notifying(5 * time.Second)
		h.failNotices(400, `{"name":"BadRequest","data":{"message":"no"}}`)
		id := h.completed("explorer", "done")
		h.waitFor("the refusal", func(st *store.State) bool { return st.Job(id).Notification.LastError != "" && !notifyBusy(st, id) })
		time.Sleep(1200 * time.Millisecond)
		if j := h.job(id); j.Notification.Attempts != 1 || j.Notification.Sent || len(h.notices()) != 1 {
			t.Fatalf("after a refusal: %+v, %d calls", j.Notification, len(h.notices()))
		}
		if op := h.onlyOp(id, store.OpNotification); op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeRejected4xx {
			t.Fatalf("op %+v", op)
		}
	})
}

// failNotices makes the host answer every notification with status and
// body.
func (h *harness) failNotices(status int, body string) {
	h.t.Helper()
	h.respond("POST", "/session/"+parent+"/prompt_async", status, body)
}

// notifyBusy reports whether a notification of the task is unsettled or
// holds its lease.
func notifyBusy(st *store.State, id string) bool {
	if l := st.Leases[id]; l != nil && l.Kind == store.LeaseNotification {
		return true
	}
	for _, op := range st.Ops {
		if op.Kind == store.OpNotification && op.TaskID == id && !op.Phase.Final() {
			return true
		}
	}
	return false
}

// A revived run completes and its notification hangs: the lease is held
// only for the notify deadline, so a revive after it is accepted (and one
// before it takes the lease over); the late answer of the old
// notification changes nothing of the new run.
func TestAHungNotificationReleasesItsLeaseAtItsDeadlineAndALateAnswerLeavesTheNextRun(t *testing.T) {
	for _, early := range []bool{false, true} {
		name := map[bool]string{false: "revive after the deadline", true: "revive before the deadline"}[early]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			// Before the deadline: long enough for the revive and the
			// successor's lease to come first, so the deadline's release
			// is seen to leave the successor's lease alone.
			h.notifying(map[bool]time.Duration{false: 800 * time.Millisecond, true: 2500 * time.Millisecond}[early])
			id := h.reconciledJob("explorer", "first")
			h.waitFor("the first run's notification", func(st *store.State) bool { return !notifyBusy(st, id) })
			// The revived run hangs until the test ends it: a run that
			// ended before the revive answered would be recorded by the
			// revive itself, which sends no notice.
			if err := h.fake.QueueRuns(id, opencodefake.Run{Hang: true, Text: "second"}); err != nil {
				t.Fatal(err)
			}
			if o := h.tool("revive", map[string]any{"task_id": id, "prompt": "again"}); o.code != 0 {
				t.Fatal(o)
			}
			g2 := h.job(id).Generation
			if err := h.fake.Finish(id); err != nil {
				t.Fatal(err)
			}
			h.waitIdle(id)
			// The first run's notice may have been skipped (its result
			// was read first, under load); only the revived run's
			// notices are counted.
			before := h.lastSeq()
			h.hold("notice", "POST", "/session/"+parent+"/prompt_async", 0, 1)
			if o := h.tool("status", map[string]any{"task_id": id}); o.code != 0 || h.job(id).State != store.JobCompleted {
				t.Fatalf("the revived run is not completed: %s\n%+v", o, h.job(id))
			}
			h.waitFor("the notifier to take the lease", func(st *store.State) bool {
				l := st.Leases[id]
				return l != nil && l.Kind == store.LeaseNotification && l.Generation == g2
			})
			l := h.doc().Leases[id]
			if l.TerminalRevision == nil || *l.TerminalRevision != h.job(id).TerminalRevision || l.State != store.LeaseHeld {
				t.Fatalf("notification lease %+v", l)
			}
			if !early {
				h.waitFor("the lease to be released at the notify deadline", func(st *store.State) bool { return st.Leases[id] == nil })
				op := h.onlyOpOfGen(id, store.OpNotification, g2)
				if op.Phase != store.PhaseSentUnknown || !strings.Contains(op.Error, "still pending") {
					t.Fatalf("op after the deadline: %+v", op)
				}
			}
			h.queueHang()
			o := h.tool("revive", map[string]any{"task_id": id, "prompt": "third"})
			j := h.job(id)
			wantOut(t, o, 0, reviveText(id, j.Generation, "running", "started"), "")
			g3 := j.Generation
			if g3 <= g2 {
				t.Fatalf("generation %d after the revive, was %d", g3, g2)
			}
			// A successor's lease, as a task_message of the new run holds.
			h.mutate(func(st *store.State) error {
				_, err := st.AcquireLease(store.LeaseRequest{TaskID: id, Kind: store.LeaseMessage, Token: "successor", Generation: g3}, time.Now())
				return err
			})
			if early && h.doc().Leases[id].Token != "successor" {
				t.Fatal("the notify deadline passed before the successor's lease was taken; the test cannot see its release")
			}
			h.waitFor("the notify deadline", func(st *store.State) bool {
				op := opOfGen(st, id, store.OpNotification, g2)
				return op != nil && strings.Contains(op.Error, "still pending")
			})
			if l := h.doc().Leases[id]; l == nil || l.Token != "successor" {
				t.Fatalf("the successor's lease after the notify deadline: %+v", l)
			}
			h.release("notice", nil)
			h.waitFor("the old notification to settle", func(st *store.State) bool {
				op := opOfGen(st, id, store.OpNotification, g2)
				return op != nil && op.Phase.Final()
			})
			st := h.doc()
			op := opOfGen(st, id, store.OpNotification, g2)
			if op.Outcome != store.OutcomeAccepted {
				t.Fatalf("the old notification: %+v", op)
			}
			j = st.Job(id)
			if l := st.Leases[id]; l == nil || l.Token != "successor" || l.Generation != g3 {
				t.Fatalf("the successor's lease after the late answer: %+v", l)
			}
			if j.Generation != g3 || j.State != store.JobRunning || j.Notification.Sent || j.Notification.Attempts != 0 {
				t.Fatalf("the new run after the late answer: %+v", j)
			}
			if n := len(h.after(before, "POST", "/session/"+parent+"/prompt_async")); n != 1 {
				t.Fatalf("%d notifications of the revived run reached the parent, want the held one only", n)
			}
		})
	}
}

// opOfGen returns the task's op of kind for generation gen, or nil.
func opOfGen(st *store.State, id string, kind store.OpKind, gen int64) *store.Op {
	for _, op := range st.Ops {
		if op.TaskID == id && op.Kind == kind && op.Generation == gen {
			return op
		}
	}
	return nil
}

func (h *harness) onlyOpOfGen(id string, kind store.OpKind, gen int64) *store.Op {
	h.t.Helper()
	op := opOfGen(h.doc(), id, kind, gen)
	if op == nil {
		h.t.Fatalf("no %s op of generation %d for %s", kind, gen, id)
	}
	return op
}

func TestANotifierKilledAfterSendingNeverHoldsTheTask(t *testing.T) {
	h := newHarness(t)
	h.notifying(5 * time.Second)
	h.runs("done")
	id := h.launch("explorer", "job done")
	h.waitIdle(id)
	// The status call's notifier inherits the crash switch and kills
	// itself once it has marked its attempt sent.
	if o := h.crashOnce("sent", "status", map[string]any{"task_id": id}); o.code != 0 {
		t.Fatal(o)
	}
	h.waitFor("the notifier to mark its attempt sent", func(st *store.State) bool {
		op := opOfGen(st, id, store.OpNotification, st.Job(id).Generation)
		return op != nil && op.Phase == store.PhaseSentUnknown
	})
	h.waitFor("the notifier to die", func(st *store.State) bool {
		l := st.Leases[id]
		if l == nil {
			return false
		}
		ok, err := owner.Alive(l.Owner)
		return err == nil && !ok
	})
	// The next call that looks at leases frees it: the notification's
	// doubt is never an orphan that only an operator can clear.
	if o := h.tool("status", map[string]any{"task_id": id}); o.code != 0 {
		t.Fatal(o)
	}
	st := h.doc()
	op := opOfGen(st, id, store.OpNotification, st.Job(id).Generation)
	if st.Leases[id] != nil || op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeOrphaned {
		t.Fatalf("after the notifier died: lease %+v, op %+v", st.Leases[id], op)
	}
	if n := len(h.notices()); n != 0 {
		t.Fatalf("a notifier that died before sending reached the parent %d times", n)
	}
}

func TestNotificationsCanBeTurnedOff(t *testing.T) {
	h := newHarness(t)
	h.notifying(5 * time.Second)
	h.env["SLIM_TASKS_NOTIFY"] = "0"
	id := h.completed("explorer", "done")
	time.Sleep(300 * time.Millisecond)
	if n := len(h.notices()); n != 0 || len(h.opsOf(id, store.OpNotification)) != 0 {
		t.Fatalf("%d notifications with SLIM_TASKS_NOTIFY=0", n)
	}
	h.env["SLIM_TASKS_NOTIFY"] = "maybe"
	if o := h.tool("status", map[string]any{"task_id": id}); o.code != 2 || !strings.Contains(o.stderr, `SLIM_TASKS_NOTIFY="maybe"`) {
		t.Fatal(o)
	}
}
