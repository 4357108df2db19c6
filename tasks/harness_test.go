package tasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/internal/testbin"
	"github.com/slimgate/slim/tasks/internal/store"
)

// The scenario tests run the real slim binary, one process per tool
// call, against the fake OpenCode server on 127.0.0.1, and check the
// answer the model reads, the exit code, the calls on the wire and the
// store after every step.

func TestMain(m *testing.M) { os.Exit(testbin.M(m).Run()) }

// parent is the orchestrator session of every scenario.
const parent = "ses_parent"

// knobs are the deadlines the scenarios run with: short enough to keep
// the tests quick, long enough that a loaded machine does not miss a
// deadline a scenario does not mean to miss. A scenario that wants a
// deadline to pass holds the host's answer until it has.
var knobs = map[string]string{
	"SLIM_TASKS_STATUS_TIMEOUT_MS":    "1500",
	"SLIM_TASKS_MESSAGE_TIMEOUT_MS":   "1500",
	"SLIM_TASKS_ABORT_TIMEOUT_MS":     "1500",
	"SLIM_TASKS_VERIFY_TIMEOUT_MS":    "1200",
	"SLIM_TASKS_VERIFY_POLL_MS":       "40",
	"SLIM_TASKS_VERIFY_STABLE_MS":     "120",
	"SLIM_TASKS_BASELINE_TIMEOUT_MS":  "1500",
	"SLIM_TASKS_ADMISSION_TIMEOUT_MS": "1500",
	"SLIM_TASKS_LAUNCH_TIMEOUT_MS":    "3000",
	"SLIM_TASKS_STOP_GRACE_MS":        "400",
	"SLIM_TASKS_READ_TIMEOUT_MS":      "3000",
	// The parent notification is a write to the parent session after
	// any call that finds a run of slim's ended; the scenarios that are
	// not about it count the writes of the tool they are about, so it is
	// off but in the notification's own (notify_test.go).
	"SLIM_TASKS_NOTIFY": "0",
}

type harness struct {
	// flavor is the requests' host.flavor; empty sends none (v1).
	flavor string
	t      *testing.T
	bin    string
	fake   *opencodefake.Server
	url    string
	state  string
	dir    string
	env    map[string]string
	// maxGen is the highest generation seen per task, for I4.
	maxGen map[string]int64
	// leases are the lease tokens per task the last check saw, for I5;
	// broke is set by a step that broke a lease as an operator.
	leases map[string]string
	broke  bool
	seq    int64
	// broken: the test made the store unusable on purpose, so the
	// invariants, which read all of it, are not checked.
	broken bool
}

func newHarness(t *testing.T, opts ...func(*opencodefake.Options)) *harness {
	t.Helper()
	o := opencodefake.Options{}
	for _, f := range opts {
		f(&o)
	}
	fake := opencodefake.New(o)
	url, err := fake.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	h := &harness{t: t, bin: testbin.Shared(t), fake: fake, url: url, state: t.TempDir(), dir: t.TempDir(), env: map[string]string{}, maxGen: map[string]int64{}, leases: map[string]string{}}
	for k, v := range knobs {
		h.env[k] = v
	}
	return h
}

// out is one slim process's result.
type out struct {
	stdout, stderr string
	code           int
}

func (o out) String() string {
	return "exit " + itoa(o.code) + "\nstdout:\n" + o.stdout + "\nstderr:\n" + o.stderr
}

func itoa(n int) string { return strconv.Itoa(n) }

// request builds a tool request from the parent with the orchestrator
// agent.
func (h *harness) request(args any) []byte {
	return h.requestAs(parent, "orchestrator", args)
}

func (h *harness) requestAs(session, agent string, args any) []byte {
	req := map[string]any{
		"args":    args,
		"context": map[string]any{"sessionID": session, "agent": agent, "directory": h.dir, "callID": "call_" + itoa(int(h.seq))},
		"host":    map[string]any{"serverUrl": h.url},
	}
	if h.flavor != "" {
		req["host"].(map[string]any)["flavor"] = h.flavor
	}
	b, err := json.Marshal(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

// command starts a slim process (not waited on).
func (h *harness) command(stdin []byte, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(h.bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	cmd.Env = append(os.Environ(), "SLIM_STATE_DIR="+h.state, "HOME="+h.state, "XDG_CONFIG_HOME="+filepath.Join(h.state, "config"))
	for k, v := range h.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd, &so, &se
}

// run runs slim with stdin and waits for it, then checks the invariants.
func (h *harness) run(stdin []byte, args ...string) out {
	h.t.Helper()
	h.seq++
	h.broke = slices.Contains(args, "break")
	cmd, so, se := h.command(stdin, args...)
	err := cmd.Run()
	o := out{stdout: so.String(), stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
	case err != nil:
		h.t.Fatalf("slim %v: %v", args, err)
	}
	h.invariants()
	return o
}

// tool runs one task tool from the parent.
func (h *harness) tool(name string, args any) out {
	h.t.Helper()
	return h.run(h.request(args), "tasks", name)
}

// start runs a tool in the background; wait returns its result.
func (h *harness) start(name string, args any) func() out {
	h.t.Helper()
	_, wait := h.startProc(name, args)
	return wait
}

// startProc runs a tool in the background like start, and also returns
// its process, for a test that kills it.
func (h *harness) startProc(name string, args any) (*os.Process, func() out) {
	h.t.Helper()
	h.seq++
	cmd, so, se := h.command(h.request(args), "tasks", name)
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	done := make(chan out, 1)
	go func() {
		err := cmd.Wait()
		o := out{stdout: so.String(), stderr: se.String()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			o.code = ee.ExitCode()
		}
		done <- o
	}()
	return cmd.Process, func() out {
		h.t.Helper()
		select {
		case o := <-done:
			h.invariants()
			return o
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			h.t.Fatalf("slim tasks %s did not finish", name)
			return out{}
		}
	}
}

func (h *harness) scope() *store.Store {
	st, err := store.Open(store.ScopeDir(h.state, h.dir, h.url), store.Options{})
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// doc returns the store's state, its archive read (so that it can be
// looked at after the View that read it).
func (h *harness) doc() *store.State {
	h.t.Helper()
	var out *store.State
	if err := h.scope().View(func(s *store.State) error { s.Archive(); out = s; return nil }); err != nil {
		h.t.Fatal(err)
	}
	return out
}

// job returns the task's job, failing when there is none.
func (h *harness) job(taskID string) *store.Job {
	h.t.Helper()
	j := h.doc().Job(taskID)
	if j == nil {
		h.t.Fatalf("no job %s in the store", taskID)
	}
	return j
}

// mutate changes the store as another process would.
func (h *harness) mutate(fn func(*store.State) error) {
	h.t.Helper()
	if err := h.scope().Update(fn); err != nil {
		h.t.Fatal(err)
	}
}

// invariants checks what must hold after every step: the store reads
// (the schema check covers one lease per task, filed under its own
// key), generations never go back (I4), a lease's generation is never
// newer than its job's, every final op is settled, and every remote
// write on the wire was journalled as sent first and sent once (I3, I6;
// see wire).
func (h *harness) invariants() {
	h.t.Helper()
	if h.broken {
		return
	}
	if _, err := os.Stat(filepath.Join(store.ScopeDir(h.state, h.dir, h.url), store.DocumentName)); err != nil {
		return
	}
	// The call log is read before the store: every write is journalled
	// as sent before it goes out, so the store read after it holds the op
	// of every call logged, even one a background settler or notifier
	// made in between.
	calls := h.fake.Calls()
	st := h.doc()
	for j := range st.Jobs() {
		id := j.TaskID
		if j.Generation < h.maxGen[id] {
			h.t.Fatalf("I4: task %s went from generation %d back to %d", id, h.maxGen[id], j.Generation)
		}
		h.maxGen[id] = j.Generation
		if l := st.Leases[id]; l != nil && l.Generation > j.Generation {
			h.t.Fatalf("task %s has a lease for generation %d, newer than its job's %d", id, l.Generation, j.Generation)
		}
	}
	for id, op := range st.Ops {
		if op.Phase.Final() && op.SettledAt.IsZero() {
			h.t.Fatalf("op %s is %s but has no settledAt", id, op.Phase)
		}
		// A notification is the one write whose lease ends before it
		// settles: at its notify deadline, or when a relaunch takes it.
		if op.Phase == store.PhaseSentUnknown && op.LeaseToken != "" && op.Kind != store.OpNotification && op.Kind != store.OpWake {
			if l := st.Leases[op.TaskID]; l == nil || l.Token != op.LeaseToken {
				h.t.Fatalf("op %s is sent_unknown but its lease is gone", id)
			}
		}
	}
	h.leaseInvariants(st)
	h.wire(st, calls)
}

// leaseInvariants checks I2 and I5 on what a step left:
//
//   - I2: a lease names its job's current generation (a run that moved on
//     leaves no lease of the old one behind, so no old lease can write);
//   - I5: a lease gone since the last step went with the end of its own
//     op (settled, or never sent), or is a notification's, whose lease
//     ends at its deadline or when a relaunch takes it, or an operator
//     broke it. No lease is released by another holder's op.
func (h *harness) leaseInvariants(st *store.State) {
	h.t.Helper()
	for id, l := range st.Leases {
		if j := st.Job(id); j != nil && l.Generation != j.Generation {
			h.t.Fatalf("I2: task %s has a %s lease of generation %d, but its job is at generation %d", id, l.Kind, l.Generation, j.Generation)
		}
	}
	for id, token := range h.leases {
		if l := st.Leases[id]; l != nil && l.Token == token {
			continue
		}
		var op *store.Op
		for _, o := range st.Ops {
			if o.LeaseToken == token {
				op = o
			}
		}
		switch {
		case h.broke, op == nil, op.Phase.Final(), op.Kind == store.OpNotification:
		default:
			h.t.Fatalf("I5: task %s's lease %s is gone while its %s op is %s", id, token, op.Kind, op.Phase)
		}
	}
	clear(h.leases)
	for id, l := range st.Leases {
		h.leases[id] = l.Token
	}
	h.broke = false
}

// wire checks the host's call log against the journal: a write reaches
// the host only after its op was marked sent, in the same transaction as
// the last check of its lease and record, and no op is sent twice.
//
//   - Every prompt (a launch's or a revive's to the task's session, a
//     notification's to its parent, a wake's to the session woken) carries the client message ID of one
//     op of its kind for that session that is marked sent, and no ID is
//     prompted twice.
//   - A session gets no more queued messages than it has message ops
//     marked sent, and no more aborts than it has abort ops and revive
//     ops marked sent (a revive admitted for a deleted record is
//     compensated with one abort).
func (h *harness) wire(st *store.State, calls []opencodefake.Call) {
	h.t.Helper()
	prompted := map[string]bool{}
	messages, aborts := map[string]int{}, map[string]int{}
	for _, c := range calls {
		if c.Method != "POST" {
			continue
		}
		// A v2 host's routes are under /api, and name the calls
		// otherwise: prompt for prompt_async, interrupt for abort.
		session, action, ok := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(c.Path, "/api"), "/session/"), "/")
		if !ok || strings.Contains(action, "/") {
			continue
		}
		if strings.HasPrefix(c.Path, "/api/") {
			switch action {
			case "prompt":
				action = "prompt_async"
			case "interrupt":
				action = "abort"
			}
		}
		switch action {
		case "prompt_async":
			var body struct {
				MessageID string `json:"messageID"`
			}
			_ = json.Unmarshal([]byte(c.Body), &body)
			if prompted[body.MessageID] {
				h.t.Fatalf("I6: prompt %q was sent to %s twice", body.MessageID, session)
			}
			prompted[body.MessageID] = true
			sent := false
			for _, op := range st.Ops {
				if op.ClientMessageID != body.MessageID || op.SentAt.IsZero() {
					continue
				}
				switch op.Kind {
				case store.OpLaunch, store.OpReviveAdmission:
					sent = sent || op.TaskID == session
				case store.OpNotification:
					j := st.Job(op.TaskID)
					sent = sent || j == nil || j.ParentSessionID == session
				case store.OpWake:
					sent = sent || op.TaskID == session
				}
			}
			if body.MessageID == "" || !sent {
				h.t.Fatalf("I3: call %d prompted %s with message %q, which no op marked sent carries", c.Seq, session, body.MessageID)
			}
		case "message":
			messages[session]++
		case "abort":
			aborts[session]++
		}
	}
	sentOps := func(session string, kinds ...store.OpKind) int {
		n := 0
		for _, op := range st.Ops {
			if op.TaskID == session && !op.SentAt.IsZero() && slices.Contains(kinds, op.Kind) {
				n++
			}
		}
		return n
	}
	for session, n := range messages {
		if ops := sentOps(session, store.OpMessage); n > ops {
			h.t.Fatalf("I3: %s was sent %d messages for %d message ops marked sent", session, n, ops)
		}
	}
	for session, n := range aborts {
		if ops := sentOps(session, store.OpAbort, store.OpReviveAdmission); n > ops {
			h.t.Fatalf("I3: %s was sent %d aborts for %d abort and revive ops marked sent", session, n, ops)
		}
	}
}

// launch starts a task of agent and returns its ID.
func (h *harness) launch(agent, description string) string {
	h.t.Helper()
	o := h.tool("task", map[string]any{"description": description, "subagent_type": agent, "prompt": "work on " + description})
	if o.code != 0 {
		h.t.Fatalf("launch: %s", o)
	}
	first, _, _ := strings.Cut(o.stdout, "\n")
	id, ok := strings.CutPrefix(first, "task_id: ")
	if !ok {
		h.t.Fatalf("launch printed no task_id: %s", o)
	}
	return id
}

// waitIdle waits until the fake has finished the session's run.
func (h *harness) waitIdle(id string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.fake.WaitIdle(ctx, id); err != nil {
		h.t.Fatal(err)
	}
}

// calls returns the logged calls to method and path pattern.
func (h *harness) calls(method, pattern string) []opencodefake.Call {
	return h.fake.CallsTo(method, pattern)
}

// waitOps waits until fn holds for the store, polling it (never a fixed
// sleep), for at most 10 s.
func (h *harness) waitFor(what string, fn func(*store.State) bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if fn(h.doc()) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("timed out waiting for %s", what)
}

// wantLines fails unless every line of want appears in text, in order.
func wantLines(t *testing.T, o out, want ...string) {
	t.Helper()
	rest := o.stdout + o.stderr
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("want %q in the output, in order\n%s", w, o)
		}
		rest = rest[i+len(w):]
	}
}

// allJobs returns every job of st, live and archived, by task ID.
func allJobs(st *store.State) map[string]*store.Job {
	out := map[string]*store.Job{}
	for j := range st.Jobs() {
		out[j.TaskID] = j
	}
	return out
}
