package tasks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// wake runs `slim tasks wake` for the parent.
func (h *harness) wake() out {
	h.t.Helper()
	return h.wakeOf(parent)
}

// wakeOf runs `slim tasks wake` for session.
func (h *harness) wakeOf(session string) out {
	h.t.Helper()
	return h.run(nil, "tasks", "wake", "--directory", h.dir, "--server-url", h.url, "--session", session)
}

// wakes are the wake prompts the parent got.
func (h *harness) wakes() []opencodefake.Call {
	var out []opencodefake.Call
	for _, c := range h.calls("POST", "/session/"+parent+"/prompt_async") {
		if strings.Contains(c.Body, "Finish any incomplete TODOs") {
			out = append(out, c)
		}
	}
	return out
}

// orchestratorParent seeds the parent, whose last user message ran as
// the orchestrator agent, with pending work.
func (h *harness) orchestratorParent() {
	h.t.Helper()
	if _, err := h.fake.AddSession(opencodefake.SessionSeed{ID: parent, Title: "orchestrator",
		Messages: []opencodefake.Message{{Info: opencodefake.MessageInfo{ID: "msg_000000000001user", Role: "user", Agent: "orchestrator"}, Parts: []opencodefake.Part{{Type: "text", Text: "build it"}}}},
		Todos:    []opencodefake.Todo{{ID: "1", Content: "deploy", Status: "pending"}},
	}); err != nil {
		h.t.Fatal(err)
	}
}

func TestAWakeGoesOnlyToAnOrchestratorAndIsCapped(t *testing.T) {
	h := newHarness(t)
	h.parentSession(opencodefake.Todo{ID: "1", Content: "deploy", Status: "pending"})
	// A transcript that names no orchestrator agent: nothing is sent, and
	// no store is made; a chat message from the hook does not make a
	// session an orchestrator to the sender either.
	if o := h.wake(); o.code != 0 || o.stdout != "blocked:unmanaged\n" || len(h.calls("POST", "/**")) != 0 {
		t.Fatalf("wake of an unmanaged session: %s", o)
	}
	if _, err := os.Stat(filepath.Join(store.ScopeDir(h.state, h.dir, h.url), store.DocumentName)); err == nil {
		t.Fatal("a wake of an unmanaged session made a store")
	}
	h.chat("msg_000000000001user", true)
	if o := h.wake(); o.stdout != "blocked:unmanaged\n" {
		t.Fatalf("wake of a session registered by a chat message with no agent in its transcript: %s", o)
	}
	if _, err := h.fake.AppendMessage(parent, opencodefake.Message{Info: opencodefake.MessageInfo{Role: "user", Agent: "orchestrator"}, Parts: []opencodefake.Part{{Type: "text", Text: "go on"}}}); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.QueueRuns(parent, opencodefake.Run{DurationMS: 10, Text: "on it"}, opencodefake.Run{DurationMS: 10, Text: "on it"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		o := h.wake()
		id, ok := strings.CutPrefix(strings.TrimSpace(o.stdout), "sent ")
		if o.code != 0 || !ok {
			t.Fatalf("wake %d: %s", i, o)
		}
		ws := h.wakes()
		if len(ws) != i {
			t.Fatalf("wake %d: %d wake prompts reached the parent", i, len(ws))
		}
		ops := h.opsOf(parent, store.OpWake)
		if len(ops) != i || ops[i-1].ClientMessageID != id || ops[i-1].Phase != store.PhaseSettled || ops[i-1].Outcome != store.OutcomeAccepted {
			t.Fatalf("wake %d: ops %+v", i, ops)
		}
		wantNotice(t, ws[i-1], ops[i-1], tasks.WakeText)
		h.waitIdle(parent)
	}
	// Nothing changed since: the cap holds, and nothing is sent.
	if o := h.wake(); o.code != 0 || o.stdout != "blocked:cap_reached\n" || len(h.wakes()) != 2 {
		t.Fatalf("a third wake with nothing changed: %s", o)
	}
	// The wake prompts are slim's own: they never count as the user's
	// answer. A wait armed now holds the wakes back.
	if o := h.tool("wait-for-user", map[string]any{"reason": "run the migration"}); o.code != 0 {
		t.Fatal(o)
	}
	h.chat("msg_zzzzzzzzzzzzuser", true) // re-arms the cap, but the wait came after it
	if o := h.tool("wait-for-user", map[string]any{"reason": "run the migration"}); o.code != 0 {
		t.Fatal(o)
	}
	if o := h.wake(); o.stdout != "blocked:waiting_for_user\n" || len(h.wakes()) != 2 {
		t.Fatalf("a wake while the parent waits for its user: %s", o)
	}
	h.env["SLIM_TASKS_WAKE"] = "0"
	if o := h.wake(); o.stdout != "blocked:disabled\n" {
		t.Fatalf("a wake with wakes off: %s", o)
	}
}

// A failing host is not stormed: each failed wake counts against the
// cap, as its reservation was made before the prompt.
func TestAFailedWakeKeepsItsReservation(t *testing.T) {
	h := newHarness(t)
	h.orchestratorParent()
	h.respond("POST", "/session/"+parent+"/prompt_async", 500, "")
	for i := 1; i <= 2; i++ {
		o := h.wake()
		if o.code != 1 || !strings.HasPrefix(o.stderr, "slim: the wake prompt to "+parent+" may not have arrived: HTTP 500") {
			t.Fatalf("failing wake %d: %s", i, o)
		}
	}
	for _, op := range h.opsOf(parent, store.OpWake) {
		if op.Outcome != store.OutcomeFailed5xx || !op.Phase.Final() {
			t.Fatalf("a failed wake's op: %+v", op)
		}
	}
	if o := h.wake(); o.stdout != "blocked:cap_reached\n" {
		t.Fatalf("a third wake after two failures: %s", o)
	}
	if n := len(h.calls("POST", "/session/"+parent+"/prompt_async")); n != 2 {
		t.Fatalf("%d wake prompts were sent, want 2", n)
	}
}

// The wakes' own messages keep the cap, whenever their events arrive; any
// other prompt to the session (a notification, another tool's) is progress
// the wakes did not make and re-arms it, as a user message does. Busy and
// idle events, which arrive in any order, change nothing.
func TestOnlyTheWakesOwnMessagesKeepTheCap(t *testing.T) {
	h := newHarness(t)
	h.orchestratorParent()
	o := h.wake()
	id, ok := strings.CutPrefix(strings.TrimSpace(o.stdout), "sent ")
	if !ok {
		t.Fatal(o)
	}
	h.waitIdle(parent)
	for _, ev := range [][]string{{"session.status", "--status", "busy"}, {"session.idle"}, {"session.status", "--status", "busy"}} {
		h.observe(ev[0], parent, ev[1:]...)
	}
	obs := func(messageID string) {
		args := []string{"tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", parent, "--message-id", messageID, "--agent", "orchestrator", "--external=false", "chat.message"}
		if o := h.run(nil, args...); o.code != 0 {
			t.Fatal(o)
		}
	}
	obs(id)
	if k := h.doc().Wake[parent]; k == nil || k.UnchangedWakeCount != 1 {
		t.Fatalf("after the wake's own message and busy and idle events: %+v", k)
	}
	obs("msg_zzzzzzzzzzzznotice")
	if k := h.doc().Wake[parent]; k != nil {
		t.Fatalf("another prompt left the cap armed: %+v", k)
	}
}

// The sender's last check, in the transaction that marks its wake sent:
// another wake still in flight stops it. (The same check refuses a
// reservation dropped since the gate made it; no host call comes between
// the two for a test to slip a change into.)
func TestAWakeWhileAnotherIsInFlightSendsNothing(t *testing.T) {
	h := newHarness(t)
	h.orchestratorParent()
	// Another sender's wake, journalled as sent by a live process and not
	// settled yet.
	h.mutate(func(st *store.State) error {
		if _, err := st.AddOp(store.OpRequest{ID: "other", Kind: store.OpWake, TaskID: parent, ClientMessageID: "msg_other", Owner: owner.Self()}, time.Now()); err != nil {
			return err
		}
		_, err := st.MarkSent("other", owner.Self(), time.Now())
		return err
	})
	if o := h.wake(); o.stdout != "blocked:busy\n" || len(h.wakes()) != 0 {
		t.Fatalf("a wake while another is in flight: %s", o)
	}
}

// A sender killed after journalling its wake as sent, before the prompt
// went out, sends nothing; the next pass settles the op (it has no
// lease), and the next wake is a new one.
func TestAWakeSenderKilledAfterMarkingItSentSendsNothingTwice(t *testing.T) {
	h := newHarness(t)
	h.orchestratorParent()
	h.env["SLIM_TASKS_CRASH_AT"] = "sent"
	if o := h.wake(); o.code == 0 {
		t.Fatalf("the crash point did not fire: %s", o)
	}
	delete(h.env, "SLIM_TASKS_CRASH_AT")
	if n := len(h.wakes()); n != 0 {
		t.Fatalf("%d wake prompts after a crash before sending", n)
	}
	h.reconcileNow()
	op := h.onlyOp(parent, store.OpWake)
	if op.Phase != store.PhaseSettled || op.Outcome != store.OutcomeOrphaned {
		t.Fatalf("the dead sender's op: %+v", op)
	}
	if o := h.wake(); o.code != 0 || !strings.HasPrefix(o.stdout, "sent ") || len(h.wakes()) != 1 {
		t.Fatalf("the next wake: %s", o)
	}
}

// A session no task tool has seen is managed when its transcript says it
// runs as an orchestrator agent: it is registered, with that agent, and
// woken as it; a child's session is not.
func TestAWakeFindsAnOrchestratorByItsTranscript(t *testing.T) {
	h := newHarness(t)
	for id, agent := range map[string]string{parent: "build", "ses_child": "explorer"} {
		if _, err := h.fake.AddSession(opencodefake.SessionSeed{ID: id,
			Messages: []opencodefake.Message{{Info: opencodefake.MessageInfo{Role: "user", Agent: agent}, Parts: []opencodefake.Part{{Type: "text", Text: "go"}}}},
			Todos:    []opencodefake.Todo{{ID: "1", Content: "deploy", Status: "pending"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if o := h.wakeOf("ses_child"); o.stdout != "blocked:unmanaged\n" {
		t.Fatalf("wake of a child: %s", o)
	}
	o := h.wake()
	if o.code != 0 || !strings.HasPrefix(o.stdout, "sent ") {
		t.Fatalf("wake of an orchestrator found by its transcript: %s", o)
	}
	if orch := h.doc().Orchestrators[parent]; orch == nil || orch.Agent != "build" {
		t.Fatalf("orchestrator %+v", orch)
	}
	if _, managed := h.doc().Orchestrators["ses_child"]; managed {
		t.Fatal("the child was registered as an orchestrator")
	}
	ws := h.wakes()
	if len(ws) != 1 || !strings.Contains(ws[0].Body, `"agent":"build"`) {
		t.Fatalf("wake prompts %+v", ws)
	}
	// A session registered by a task tool call (with no agent) is not
	// thereby an orchestrator to the sender.
	h.mutate(func(st *store.State) error {
		st.Orchestrators["ses_child"] = &store.Orchestrator{FirstSeenAt: time.Now()}
		return nil
	})
	if o := h.wakeOf("ses_child"); o.stdout != "blocked:unmanaged\n" {
		t.Fatalf("wake of a registered child: %s", o)
	}
}

// A gate that refused because it could not read the host (failing
// closed) makes the sender fail, so its caller tries again later, and
// nothing is sent.
func TestAWakeWhoseGateCouldNotReadTheHostFails(t *testing.T) {
	h := newHarness(t)
	h.orchestratorParent()
	h.respond("GET", "/session/"+parent+"/todo", 500, "")
	o := h.wake()
	if o.code != 1 || !strings.HasPrefix(o.stderr, "slim: the wake gate could not read the host (the parent's todos: HTTP 500") ||
		!strings.Contains(o.stderr, "answered blocked:no_incomplete_todos; nothing was sent") || len(h.wakes()) != 0 {
		t.Fatalf("wake with unreadable todos: %s", o)
	}
}
