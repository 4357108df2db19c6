package tasks_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

// gate runs the wake gate for the parent.
func (h *harness) gate() string {
	h.t.Helper()
	o := h.run(nil, "tasks", "wake-gate", "--directory", h.dir, "--server-url", h.url, "--session", parent)
	if o.code != 0 {
		h.t.Fatal(o)
	}
	return strings.TrimSpace(o.stdout)
}

// chat forwards a chat message of the parent, as the hook does.
func (h *harness) chat(messageID string, external bool) {
	h.t.Helper()
	args := []string{"tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", parent, "--message-id", messageID, "--agent", "orchestrator"}
	if external {
		args = append(args, "--external")
	} else {
		args = append(args, "--external=false")
	}
	if o := h.run(nil, append(args, "chat.message")...); o.code != 0 {
		h.t.Fatal(o)
	}
}

// parentSession seeds the parent session with a user message and todos.
func (h *harness) parentSession(todos ...opencodefake.Todo) {
	h.t.Helper()
	_, err := h.fake.AddSession(opencodefake.SessionSeed{ID: parent, Title: "orchestrator",
		Messages: []opencodefake.Message{{Info: opencodefake.MessageInfo{ID: "msg_000000000001user", Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "build it"}}}},
		Todos:    todos,
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

func TestWaitForUserArmsTheWaitAndTheGateHonoursIt(t *testing.T) {
	h := newHarness(t)
	h.parentSession(opencodefake.Todo{ID: "1", Content: "deploy", Status: "pending"})
	o := h.tool("wait-for-user", map[string]any{"reason": "Run the  migration\n and tell me"})
	want := "state: waiting_for_user\nprotocol: oh-my-opencode-slim.wait_for_user.v1\nreason: Run the migration and tell me\n\nEnd this turn now. Do not call more tools until the user responds.\n"
	if o.code != 0 || o.stdout != want {
		t.Fatalf("%s\nwant %q", o, want)
	}
	w := h.doc().Waits[parent]
	if w == nil || w.Status != store.WaitingForUser || w.BaselineUserMessageID != "msg_000000000001user" {
		t.Fatalf("wait %+v", w)
	}
	if g := h.gate(); g != "blocked:waiting_for_user" {
		t.Fatalf("gate %s", g)
	}
}

func TestTheWaitClearsOnlyForANewRealUserMessage(t *testing.T) {
	h := newHarness(t)
	h.parentSession(opencodefake.Todo{ID: "1", Content: "deploy", Status: "pending"})
	h.tool("wait-for-user", map[string]any{"reason": "do the manual step"})
	h.chat("msg_000000000001user", true) // the message the wait followed, delivered again
	if g := h.gate(); g != "blocked:waiting_for_user" {
		t.Fatalf("after a re-delivery: %s", g)
	}
	h.chat("msg_zzzzzzzzzzzzinjected", false) // a synthetic or internal message
	if g := h.gate(); g != "blocked:waiting_for_user" {
		t.Fatalf("after an internal message: %s", g)
	}
	h.chat("msg_zzzzzzzzzzzznew", true)
	if g := h.gate(); g != "allowed" {
		t.Fatalf("after a new user message: %s", g)
	}
	// Armed again, the same message does not clear it a second time.
	h.tool("wait-for-user", map[string]any{"reason": "again"})
	h.chat("msg_zzzzzzzzzzzznew", true)
	if g := h.gate(); g != "blocked:waiting_for_user" {
		t.Fatalf("the old message cleared a new wait: %s", g)
	}
}

func TestTheGateFindsTheUsersAnswerInTheTranscriptWithoutAHookFeed(t *testing.T) {
	h := newHarness(t)
	h.parentSession(opencodefake.Todo{ID: "1", Content: "deploy", Status: "in_progress"})
	h.tool("wait-for-user", map[string]any{"reason": "manual step"})
	// Newer user messages that are not the user's words: a synthetic
	// part, and a part marked as sent internally (a wake, a notification).
	for _, p := range []opencodefake.Part{
		{Type: "text", Text: "replayed", Synthetic: true},
		{Type: "text", Text: "wake", Synthetic: true, Metadata: map[string]any{"oh-my-opencode-slim.internalInitiator": true}},
	} {
		if _, err := h.fake.AppendMessage(parent, opencodefake.Message{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{p}}); err != nil {
			t.Fatal(err)
		}
		if g := h.gate(); g != "blocked:waiting_for_user" {
			t.Fatalf("a %q message in the transcript cleared the wait: %s", p.Text, g)
		}
	}
	if _, err := h.fake.AppendMessage(parent, opencodefake.Message{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "done"}}}); err != nil {
		t.Fatal(err)
	}
	if g := h.gate(); g != "allowed" {
		t.Fatalf("gate %s", g)
	}
}

func TestARejectedWaitChangesNothing(t *testing.T) {
	h := newHarness(t)
	h.parentSession(opencodefake.Todo{ID: "1", Content: "deploy", Status: "pending"})
	if g := h.gate(); g != "allowed" {
		t.Fatalf("gate before: %s", g)
	}
	before, err := os.ReadFile(h.docPath())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		session, agent, reason, want string
	}{
		{parent, "fixer", "x", "wait_for_user can only be used by orchestrator"},
		{parent, "orchestrator", " \n ", "wait_for_user requires a non-empty reason"},
		{"ses_unmanaged", "", "x", "wait_for_user can only be used in orchestrator sessions"},
	}
	for _, c := range cases {
		o := h.run(h.requestAs(c.session, c.agent, map[string]any{"reason": c.reason}), "tasks", "wait-for-user")
		if o.code != 1 || strings.TrimSpace(o.stderr) != c.want || o.stdout != "" {
			t.Fatalf("%+v: %s", c, o)
		}
	}
	for id, w := range h.doc().Waits {
		t.Fatalf("a rejected call armed a wait for %s: %+v", id, w)
	}
	if after, err := os.ReadFile(h.docPath()); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("a rejected call changed the store (%v)", err)
	}
	if g := h.gate(); g != "allowed" {
		t.Fatalf("gate after the rejected calls: %s", g)
	}
}

func TestDeletingTheParentClearsItsWaitAndAFallbackTeardownDoesNot(t *testing.T) {
	h := newHarness(t)
	h.parentSession()
	h.tool("wait-for-user", map[string]any{"reason": "x"})
	obs := func(extra ...string) {
		args := append([]string{"tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", parent}, extra...)
		if o := h.run(nil, append(args, "session.deleted")...); o.code != 0 {
			t.Fatal(o)
		}
	}
	obs("--fallback")
	if w := h.doc().Waits[parent]; w == nil || w.Status != store.WaitingForUser || w.LastRearmIdentity != "msg_000000000001user" {
		t.Fatalf("a fallback teardown cleared the wait or its rearm identity: %+v", w)
	}
	obs()
	if w := h.doc().Waits[parent]; w != nil {
		t.Fatalf("the parent's deletion kept its wait: %+v", w)
	}
}

func TestTheGateNeedsIncompleteTodosAnIdleParentAndCapsRepeatedWakes(t *testing.T) {
	h := newHarness(t)
	h.parentSession(opencodefake.Todo{ID: "1", Content: "a", Status: "completed"}, opencodefake.Todo{ID: "2", Content: "b", Status: "cancelled"})
	if g := h.gate(); g != "blocked:no_incomplete_todos" {
		t.Fatalf("gate %s", g)
	}
	if err := h.fake.SetTodos(parent, []opencodefake.Todo{{ID: "1", Content: "a", Status: "weird"}, {ID: "2", Content: "b", Status: "pending"}}); err != nil {
		t.Fatal(err)
	}
	if g := h.gate(); g != "blocked:no_incomplete_todos" {
		t.Fatalf("a todo status the gate cannot read must fail closed: %s", g)
	}
	if err := h.fake.SetTodos(parent, []opencodefake.Todo{{ID: "1", Content: "a", Status: "pending"}}); err != nil {
		t.Fatal(err)
	}
	h.fake.SetStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{parent: {Type: "busy"}}})
	if g := h.gate(); g != "blocked:busy" {
		t.Fatalf("gate %s", g)
	}
	h.fake.SetStatus(opencodefake.StatusMap{Mode: "error"})
	if g := h.gate(); g != "blocked:busy" {
		t.Fatalf("an unreadable parent state must fail closed: %s", g)
	}
	h.fake.SetStatus(opencodefake.StatusMap{})
	for i := 0; i < 2; i++ {
		if g := h.gate(); g != "allowed" {
			t.Fatalf("wake %d: %s", i+1, g)
		}
	}
	if g := h.gate(); g != "blocked:cap_reached" {
		t.Fatalf("a third wake with nothing changed: %s", g)
	}
	h.chat("msg_zzzzzzzzzzzzuser", true)
	if g := h.gate(); g != "allowed" {
		t.Fatalf("a user message must re-arm the cap: %s", g)
	}
	h.env["SLIM_TASKS_WAKE"] = "0"
	if g := h.gate(); g != "blocked:disabled" {
		t.Fatalf("gate %s", g)
	}
}

func TestTheGateStaysShutWhileTheParentWaitsOnAQuestionOrAPermission(t *testing.T) {
	h := newHarness(t)
	h.parentSession(opencodefake.Todo{ID: "1", Content: "a", Status: "pending"})
	h.fake.AddSession(opencodefake.SessionSeed{ID: "ses_elsewhere"})
	// Another session's question is not the parent's.
	if _, err := h.fake.AskQuestion("ses_elsewhere", "Which database?"); err != nil {
		t.Fatal(err)
	}
	q, err := h.fake.AskQuestion(parent, "Which database?")
	if err != nil {
		t.Fatal(err)
	}
	if g := h.gate(); g != "blocked:input_wait" {
		t.Fatalf("gate with a question pending: %s", g)
	}
	if err := h.fake.Answer(q.ID); err != nil {
		t.Fatal(err)
	}
	p, err := h.fake.AskPermission(parent, "bash", "make deploy")
	if err != nil {
		t.Fatal(err)
	}
	if g := h.gate(); g != "blocked:input_wait" {
		t.Fatalf("gate with a permission pending: %s", g)
	}
	// Nothing was reserved while the parent waited: two wakes are still
	// allowed once the user has answered.
	if err := h.fake.Answer(p.ID); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if g := h.gate(); g != "allowed" {
			t.Fatalf("wake %d after the answers: %s", i+1, g)
		}
	}
	// A list the gate cannot read fails closed.
	h.fake.Reset()
	h.parentSession(opencodefake.Todo{ID: "2", Content: "b", Status: "pending"})
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "GET", Path: "/permission", Respond: &opencodefake.Response{Status: 500, Body: json.RawMessage(`{"error":"down"}`)}}); err != nil {
		t.Fatal(err)
	}
	if g := h.gate(); g != "blocked:input_wait" {
		t.Fatalf("gate when the permissions cannot be read: %s", g)
	}
}

// A request that says v1 to a server that serves only v2 (no
// /session/status, a 404) is never taken for a quiet session.
func TestAV2ServerBehindAV1RequestKeepsTheTaskUncertainAndWritesNothing(t *testing.T) {
	h := newHarness(t, func(o *opencodefake.Options) { o.V2 = true })
	const c = "ses_onv2"
	h.mutate(func(st *store.State) error {
		now := time.Now()
		st.Live[c] = &store.Job{TaskID: c, ParentSessionID: parent, Agent: "explorer", Description: "map auth", Alias: "exp-1",
			State: store.JobRunning, Generation: st.NextGeneration(), TaskGeneration: 1, Background: true,
			LaunchedAt: now, LastLaunchedAt: now, RunStartedAt: now, UpdatedAt: now}
		st.AliasCounters[store.AliasKey(parent, "exp")] = 1
		return nil
	})
	for range 2 { // two reads a grace apart would stop a task absent from a valid map
		o := h.tool("status", map[string]any{"task_id": c})
		f := fields(o.stdout)
		if o.code != 0 || f["state"] != "running (unconfirmed)" || f["status_uncertain"] != "true" || !strings.Contains(f["last_status_error"], "404") {
			t.Fatalf("status against a v2 server: %s", o)
		}
		time.Sleep(450 * time.Millisecond)
	}
	if j := h.job(c); j.State != store.JobRunning || !j.StatusUncertain || !j.StopConfirmationStartedAt.IsZero() {
		t.Fatalf("job %+v", j)
	}
	if n := len(h.calls("POST", "/**")); n != 0 {
		t.Fatalf("%d writes reached the host", n)
	}
}
