package tasks_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks"
	"github.com/slimgate/slim/tasks/internal/store"
)

// queuedAnswer is task_message's answer once the host took the message.
func queuedAnswer(alias, id string) string {
	return "status: queued\nMessage queued for " + alias + " (" + id + ") without launching or resuming it.\n"
}

// messageOps returns the journal's message ops of a task.
func messageOps(st *store.State, id string) []*store.Op {
	var out []*store.Op
	for _, op := range st.Ops {
		if op.Kind == store.OpMessage && op.TaskID == id {
			out = append(out, op)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].CreatedAt.Before(out[b].CreatedAt) })
	return out
}

// holdMessages holds every task_message send to the task at hold name.
func (h *harness) holdMessages(id, name string) {
	h.t.Helper()
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/session/" + id + "/message", Hold: name}); err != nil {
		h.t.Fatal(err)
	}
}

func TestMessageIsQueuedWithoutAReplyAndReleasesItsLease(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("fixer", "fix the login")
	o := h.tool("message", map[string]any{"task_id": "fix-1", "message": "  Please continue.  "})
	if o.code != 0 || o.stdout != queuedAnswer("fix-1", id) || o.stderr != "" {
		t.Fatal(o)
	}
	for _, word := range []string{"delivered", "admitted", "nudge"} {
		if strings.Contains(o.stdout, word) {
			t.Fatalf("the answer says %q: %s", word, o)
		}
	}
	posts := h.calls("POST", "/session/"+id+"/message")
	if len(posts) != 1 {
		t.Fatalf("%d POSTs of the message, want 1", len(posts))
	}
	if want := `{"agent":"fixer","noReply":true,"parts":[{"type":"text","text":"Please continue."}]}`; posts[0].Body != want {
		t.Fatalf("wire body %s, want %s", posts[0].Body, want)
	}
	if n := len(h.calls("POST", "/session/*/prompt_async")); n != 1 {
		t.Fatalf("%d prompt_async calls, want only the launch's", n)
	}
	st := h.doc()
	if l := st.Leases[id]; l != nil {
		t.Fatalf("the message left its lease: %+v", l)
	}
	ops := messageOps(st, id)
	if len(ops) != 1 || ops[0].Phase != store.PhaseSettled || ops[0].Outcome != store.OutcomeAccepted || ops[0].SentAt.IsZero() {
		t.Fatalf("message ops %+v", ops)
	}
	if j := st.Job(id); j.State != store.JobRunning || j.StatusUncertain {
		t.Fatalf("the message changed the job: %+v", j)
	}
}

func TestRepeatedMessagesAreEachSentOnce(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("fixer", "fix the login")
	for _, m := range []string{"first note", "second note"} {
		if o := h.tool("message", map[string]any{"task_id": id, "message": m}); o.code != 0 || o.stdout != queuedAnswer("fix-1", id) {
			t.Fatal(o)
		}
	}
	posts := h.calls("POST", "/session/"+id+"/message")
	if len(posts) != 2 || !strings.Contains(posts[0].Body, `"first note"`) || !strings.Contains(posts[1].Body, `"second note"`) {
		t.Fatalf("posts %+v", posts)
	}
	for _, p := range posts {
		if !strings.Contains(p.Body, `"noReply":true`) {
			t.Fatalf("a message was sent to run: %s", p.Body)
		}
	}
	st := h.doc()
	if l := st.Leases[id]; l != nil {
		t.Fatalf("lease left: %+v", l)
	}
	if ops := messageOps(st, id); len(ops) != 2 || ops[0].Outcome != store.OutcomeAccepted || ops[1].Outcome != store.OutcomeAccepted {
		t.Fatalf("ops %+v", ops)
	}
}

func TestMessageRejectedByTheHostFailsAndFreesTheTaskForACancel(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("fixer", "fix the login")
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/session/*/message", Times: 1,
		Respond: &opencodefake.Response{Status: 409, Body: []byte(`{"name":"ConflictError","data":{"message":"session is locked"}}`)}}); err != nil {
		t.Fatal(err)
	}
	o := h.tool("message", map[string]any{"task_id": id, "message": "Please continue."})
	if o.code != 1 || o.stdout != "" || o.stderr != "Task message transport failed: HTTP 409: session is locked\n" {
		t.Fatal(o)
	}
	st := h.doc()
	if l := st.Leases[id]; l != nil {
		t.Fatalf("a rejected message kept its lease: %+v", l)
	}
	if ops := messageOps(st, id); len(ops) != 1 || ops[0].Phase != store.PhaseRejected || ops[0].Outcome != store.OutcomeRejected4xx {
		t.Fatalf("ops %+v", ops)
	}
	o = h.tool("cancel", map[string]any{"task_id": id, "reason": "enough"})
	if o.code != 0 || !strings.Contains(o.stdout, "state: cancelled\n") {
		t.Fatalf("a cancel right after the rejected message: %s", o)
	}
}

func TestMessageThatOutlivesItsDeadlineKeepsTheLeaseUntilItSettles(t *testing.T) {
	h := newHarness(t)
	h.env["SLIM_TASKS_MESSAGE_TIMEOUT_MS"] = "600"
	id := h.hangingJob("fixer", "fix the login")
	h.holdMessages(id, "msg")
	wait := h.start("message", map[string]any{"task_id": id, "message": "Please continue."})
	h.waitHeld("msg", 1)
	o := wait()
	if o.code != 1 || o.stdout != "" || o.stderr != "Task message transport timed out after 600ms\n" {
		t.Fatal(o)
	}
	st := h.doc()
	l := st.Leases[id]
	ops := messageOps(st, id)
	if l == nil || l.Kind != store.LeaseMessage || l.State != store.LeaseHeld || len(ops) != 1 || l.Token != ops[0].LeaseToken {
		t.Fatalf("after the deadline: lease %+v, ops %+v", l, ops)
	}
	if op := ops[0]; op.Phase != store.PhaseSentUnknown || !op.CallerAnswered || op.Owner != l.Owner || l.Owner.PID <= 0 {
		t.Fatalf("the settler does not own the pending send: op %+v, lease %+v", op, l)
	}

	// While the send is pending, nothing else may take the task.
	o = h.tool("cancel", map[string]any{"task_id": id})
	if want := "task_id: " + id + "\nstate: running\n\n<task_error>\nstale/uncertain cancellation: cancellation lease unavailable for " + id + "\n</task_error>\n"; o.code != 0 || o.stdout != want {
		t.Fatalf("cancel during the pending message: %s", o)
	}
	if n := len(h.calls("POST", "/session/*/abort")); n != 0 {
		t.Fatalf("%d aborts sent while the message lease was held", n)
	}

	if err := h.fake.Release("msg", nil); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the settler to settle the message", func(st *store.State) bool {
		ops := messageOps(st, id)
		return st.Leases[id] == nil && len(ops) == 1 && ops[0].Phase == store.PhaseSettled
	})
	if op := messageOps(h.doc(), id)[0]; op.Outcome != store.OutcomeAccepted {
		t.Fatalf("the late send settled %+v", op)
	}
	if n := len(h.calls("POST", "/session/"+id+"/message")); n != 1 {
		t.Fatalf("%d POSTs of the message, want 1", n)
	}
	o = h.tool("cancel", map[string]any{"task_id": id})
	if o.code != 0 || !strings.Contains(o.stdout, "state: cancelled\n") {
		t.Fatalf("cancel after the message settled: %s", o)
	}
}

func TestSecondMessageWhileOneIsSendingIsRefused(t *testing.T) {
	h := newHarness(t)
	h.env["SLIM_TASKS_MESSAGE_TIMEOUT_MS"] = "10000" // the first must not time out while the second runs
	id := h.hangingJob("fixer", "fix the login")
	h.holdMessages(id, "msg")
	first := h.start("message", map[string]any{"task_id": id, "message": "first"})
	h.waitHeld("msg", 1)
	o := h.tool("message", map[string]any{"task_id": "fix-1", "message": "second"})
	if o.code != 1 || o.stdout != "" || o.stderr != "Task fix-1 cannot queue a message: message/control lease unavailable\n" {
		t.Fatal(o)
	}
	if err := h.fake.Release("msg", nil); err != nil {
		t.Fatal(err)
	}
	if o := first(); o.code != 0 || o.stdout != queuedAnswer("fix-1", id) {
		t.Fatal(o)
	}
	posts := h.calls("POST", "/session/"+id+"/message")
	if len(posts) != 1 || !strings.Contains(posts[0].Body, `"first"`) {
		t.Fatalf("posts %+v, want only the first message", posts)
	}
	if st := h.doc(); st.Leases[id] != nil || len(messageOps(st, id)) != 1 {
		t.Fatalf("lease %+v, ops %+v", st.Leases[id], messageOps(st, id))
	}
}

func TestMessageToATaskNotRunningOrBeingCancelledIsRefusedBeforeAnySend(t *testing.T) {
	h := newHarness(t)
	done := h.finishedJob("explorer", opencodefake.Run{Text: "findings"})
	cancelling := h.hangingJob("fixer", "fix the login")
	h.mutate(func(st *store.State) error {
		st.Job(cancelling).CancellationRequested = true
		return nil
	})
	long := strings.Repeat("x", 501)
	for _, c := range []struct {
		id, message, want string
	}{
		{done, "more", "Task " + done + " cannot queue a message: board state is completed, not running"},
		{cancelling, "more", "Task " + cancelling + " cannot queue a message: cancellation was requested"},
		{cancelling, "   ", "task_message requires a non-empty message"},
		{cancelling, long, "task_message: the message is longer than 500 characters"},
		{"exp-9", "more", "Unknown task ID or alias: exp-9"},
	} {
		o := h.tool("message", map[string]any{"task_id": c.id, "message": c.message})
		if o.code != 1 || o.stdout != "" || o.stderr != c.want+"\n" {
			t.Errorf("%s %q: %s", c.id, shorten(c.message, 10), o)
		}
	}
	if n := len(h.calls("POST", "/session/*/message")); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
	st := h.doc()
	if len(st.Leases) != 0 || len(messageOps(st, done))+len(messageOps(st, cancelling)) != 0 {
		t.Fatalf("a refused message left leases %+v or ops", st.Leases)
	}
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// settlerAfter writes a settler program that first runs slim with args
// (another process acting between the tool call's capture and the
// settler's last check), then becomes the real settler.
func (h *harness) settlerAfter(args ...string) string {
	h.t.Helper()
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	env := map[string]string{"SLIM_STATE_DIR": h.state, "HOME": h.state, "XDG_CONFIG_HOME": filepath.Join(h.state, "config")}
	for k, v := range h.env {
		env[k] = v
	}
	for k, v := range env {
		b.WriteString("export " + k + "=" + q(v) + "\n")
	}
	b.WriteString(q(h.bin))
	for _, a := range args {
		b.WriteString(" " + q(a))
	}
	b.WriteString(" </dev/null 3>&- || exit 1\n")
	b.WriteString("exec " + q(h.bin) + " tasks _settle \"$@\"\n")
	path := filepath.Join(h.t.TempDir(), "settler.sh")
	if err := os.WriteFile(path, []byte(b.String()), 0o700); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// callWithSettler runs a tool in this process with the settler program
// given, and returns its answer or refusal.
func (h *harness) callWithSettler(settler, tool string, args any) (*tasks.Result, error) {
	h.t.Helper()
	req, err := tasks.ReadRequest(bytes.NewReader(h.request(args)))
	if err != nil {
		h.t.Fatal(err)
	}
	tm, err := tasks.TimeoutsFromEnv(func(k string) string { return h.env[k] })
	if err != nil {
		h.t.Fatal(err)
	}
	cfg := tasks.Config{StateDir: h.state, Timeouts: tm, SettlerPath: settler, SettlerArgs: []string{settler}}
	res, err := tasks.Call(context.Background(), cfg, tool, req)
	h.invariants()
	return res, err
}

func TestMessageToATaskDeletedBeforeTheSendIsRefusedAndSendsNothing(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("fixer", "fix the login")
	settler := h.settlerAfter("tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", id, "session.deleted")
	_, err := h.callWithSettler(settler, "message", map[string]any{"task_id": id, "message": "Please continue."})
	te, ok := tasks.AsError(err)
	if !ok || te.Kind != tasks.Tool || te.Message != "Task "+id+" is no longer tracked; refusing stale message" {
		t.Fatalf("got %v, want the stale-message refusal", err)
	}
	if n := len(h.calls("POST", "/session/*/message")); n != 0 {
		t.Fatalf("%d messages sent for a deleted task", n)
	}
	st := h.doc()
	if st.Job(id) != nil || st.Leases[id] != nil || st.Tombstone(id) == nil {
		t.Fatalf("job %+v, lease %+v, tombstone %+v; want no job, no lease, a tombstone", st.Job(id), st.Leases[id], st.Tombstone(id))
	}
	if ops := messageOps(st, id); len(ops) != 1 || ops[0].Phase != store.PhaseRejected || ops[0].Outcome != store.OutcomeNotSent || !ops[0].SentAt.IsZero() {
		t.Fatalf("ops %+v", ops)
	}
}

func TestAStoppedMessageCallAnswersAtOnceAndTheSettlerKeepsTheLease(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "work")
	h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/session/*/message", Hold: "stopped"})
	cmd, _, se := h.command(h.request(map[string]any{"task_id": id, "message": "note"}), "tasks", "message")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h.waitHeld("stopped", 1)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the stopped call took %v to end", took)
	}
	if err == nil || !strings.Contains(se.String(), "stopped before the host answered") {
		t.Fatalf("exit %v, stderr %q", err, se.String())
	}
	if l := h.doc().Leases[id]; l == nil || l.Kind != store.LeaseMessage || l.State != store.LeaseHeld {
		t.Fatalf("lease %+v: the settler must keep it until the send settles", l)
	}
	h.fake.Release("stopped", nil)
	h.waitFor("the settler to release the lease", func(st *store.State) bool { return st.Leases[id] == nil })
	if n := len(h.calls("POST", "/session/*/message")); n != 1 {
		t.Fatalf("%d sends, want 1", n)
	}
}
