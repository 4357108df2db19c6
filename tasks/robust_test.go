package tasks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

// docPath is the store's document.
func (h *harness) docPath() string {
	return filepath.Join(store.ScopeDir(h.state, h.dir, h.url), store.DocumentName)
}

func TestACorruptStoreFailsEveryCommandClosedWithoutTouchingTheHost(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "map auth")
	h.waitFor("the launch to be journalled", func(st *store.State) bool { return st.Job(id) != nil })
	good, err := os.ReadFile(h.docPath())
	if err != nil {
		t.Fatal(err)
	}
	// A torn write: the first half of the document.
	bad := good[:len(good)/2]
	if err := os.WriteFile(h.docPath(), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	calls := len(h.fake.Calls())
	scope := []string{"--directory", h.dir, "--server-url", h.url}
	for _, c := range []struct {
		name  string
		stdin []byte
		args  []string
	}{
		{"task", h.request(map[string]any{"subagent_type": "explorer", "prompt": "again"}), []string{"tasks", "task"}},
		{"status", h.request(map[string]any{"task_id": id}), []string{"tasks", "status"}},
		{"result", h.request(map[string]any{"task_id": id}), []string{"tasks", "result"}},
		{"message", h.request(map[string]any{"task_id": id, "message": "hi"}), []string{"tasks", "message"}},
		{"cancel", h.request(map[string]any{"task_id": id}), []string{"tasks", "cancel"}},
		{"revive", h.request(map[string]any{"task_id": id, "prompt": "again"}), []string{"tasks", "revive"}},
		{"wait-for-user", h.request(map[string]any{"reason": "check the output"}), []string{"tasks", "wait-for-user"}},
		{"board", nil, append([]string{"tasks", "board", "--parent", parent}, scope...)},
		{"reconcile", nil, append([]string{"tasks", "reconcile"}, scope...)},
		{"observe", nil, append(append([]string{"tasks", "observe"}, scope...), "--session", id, "session.deleted")},
		{"wake-gate", nil, append([]string{"tasks", "wake-gate", "--session", parent}, scope...)},
		{"lease inspect", nil, append([]string{"tasks", "lease", "inspect"}, scope...)},
		{"lease break", nil, append([]string{"tasks", "lease", "break", "--task", id}, scope...)},
	} {
		h.seq++
		cmd, so, se := h.command(c.stdin, c.args...)
		err := cmd.Run()
		code := 0
		if err != nil {
			code = cmd.ProcessState.ExitCode()
		}
		if code != 3 || !strings.Contains(se.String(), "store unreadable") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 3 and store unreadable", c.name, code, so.String(), se.String())
		}
		if got := h.fake.Calls()[calls:]; len(got) != 0 {
			t.Errorf("%s sent %s %s to the host with a corrupt store", c.name, got[0].Method, got[0].Path)
			calls += len(got)
		}
	}
	if now, err := os.ReadFile(h.docPath()); err != nil || !bytes.Equal(now, bad) {
		t.Fatalf("the corrupt document was rewritten (%v)", err)
	}
}

func TestATemporaryLeftByAKilledWriterIsIgnoredAndCleanedUp(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "map auth")
	// A writer killed between writing its temporary and the rename
	// leaves a temporary beside the document: here, one that claims the
	// task completed.
	cur, err := os.ReadFile(h.docPath())
	if err != nil {
		t.Fatal(err)
	}
	orphan := bytes.Replace(cur, []byte(`"state":"running"`), []byte(`"state":"completed"`), 1)
	if bytes.Equal(orphan, cur) {
		t.Fatal("setup: the document has no running job")
	}
	tmp := filepath.Join(filepath.Dir(h.docPath()), "."+store.DocumentName+".tmp-killed")
	if err := os.WriteFile(tmp, orphan, 0o600); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, h.tool("status", map[string]any{"task_id": id}), "exp-1", id, "busy", "explorer", false, "")
	if s := h.job(id).State; s != store.JobRunning {
		t.Fatalf("the task is %s: the killed writer's temporary was read", s)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatalf("the temporary is still there after a transaction (%v)", err)
	}
}

func TestATaskRunningBeforeARestartIsStoppedOnlyByTwoObservationsAGraceApart(t *testing.T) {
	h := newHarness(t)
	// The store says C runs; the host has it, idle, with only its prompt:
	// no slim process of the launch is left.
	const c = "ses_restarted"
	if _, err := h.fake.AddSession(opencodefake.SessionSeed{ID: c, ParentID: parent, Messages: []opencodefake.Message{
		{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "map auth"}}},
	}}); err != nil {
		t.Fatal(err)
	}
	h.mutate(func(st *store.State) error {
		now := time.Now().Add(-time.Hour)
		st.Live[c] = &store.Job{TaskID: c, ParentSessionID: parent, Agent: "explorer", Description: "map auth", Alias: "exp-1",
			State: store.JobRunning, Generation: st.NextGeneration(), TaskGeneration: 1, Background: true,
			LaunchedAt: now, LastLaunchedAt: now, RunStartedAt: now, UpdatedAt: now}
		st.AliasCounters[store.AliasKey(parent, "exp")] = 1
		return nil
	})
	gen := h.job(c).Generation
	wantStatus(t, h.tool("status", map[string]any{"task_id": c}), "exp-1", c, "running (unconfirmed)", "explorer", false, "no live status entry for session")
	h.sleepPastStop(c, 400*time.Millisecond)
	wantStatus(t, h.tool("status", map[string]any{"task_id": c}), "exp-1", c, "stopped (unconfirmed)", "explorer", false, "no live status entry for session")
	if j := h.job(c); j.State != store.JobStopped || !j.TerminalUnreconciled || j.Generation != gen {
		t.Fatalf("job after the stop: %+v", j)
	}

	// It works again (unacknowledged): running, same generation.
	h.setStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{c: {Type: "busy"}}})
	wantStatus(t, h.tool("status", map[string]any{"task_id": c}), "exp-1", c, "busy", "explorer", false, "")
	if j := h.job(c); j.State != store.JobRunning || j.TerminalUnreconciled || j.Generation != gen || !j.CompletedAt.IsZero() {
		t.Fatalf("job after busy: %+v", j)
	}

	// The host deleted it meanwhile: the job is dropped and tombstoned,
	// not kept as a ghost.
	h.setStatus(opencodefake.StatusMap{})
	if err := h.fake.DeleteSession(c); err != nil {
		t.Fatal(err)
	}
	o := h.tool("status", map[string]any{"task_id": c})
	if o.code != 1 || o.stderr != "Task "+c+" ("+c+") is no longer tracked: its session was deleted.\n" {
		t.Fatal(o)
	}
	st := h.doc()
	if st.Job(c) != nil || st.Tombstone(c) == nil || st.Tombstone(c).Reason != "session deleted" || st.DeletionEpoch(c) != st.Tombstone(c).Epoch {
		t.Fatalf("job %+v, tombstone %+v, epoch %d", st.Job(c), st.Tombstone(c), st.DeletionEpoch(c))
	}
	if board := h.run(nil, "tasks", "board", "--directory", h.dir, "--server-url", h.url, "--parent", parent); board.code != 0 || strings.Contains(board.stdout, c) {
		t.Fatalf("the deleted task is still on the board: %s", board)
	}
}

func TestALaunchAnsweredAfterItsTaskWasDeletedDoesNotBringItBack(t *testing.T) {
	h := newHarness(t)
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/session/*/prompt_async", Times: 1, Hold: "launch"}); err != nil {
		t.Fatal(err)
	}
	wait := h.start("task", map[string]any{"description": "map auth", "subagent_type": "explorer", "prompt": "map auth"})
	h.waitHeld("launch", 1)
	var c string
	for id := range allJobs(h.doc()) {
		c = id
	}
	if c == "" {
		t.Fatal("the launch registered no job before its prompt")
	}
	if o := h.run(nil, "tasks", "observe", "--directory", h.dir, "--server-url", h.url, "--session", c, "session.deleted"); o.code != 0 {
		t.Fatal(o)
	}
	st := h.doc()
	e1 := st.DeletionEpoch(c)
	if st.Job(c) != nil || st.Tombstone(c) == nil || e1 == 0 || st.Tombstone(c).Epoch != e1 {
		t.Fatalf("after the deletion: job %+v, tombstone %+v, epoch %d", st.Job(c), st.Tombstone(c), e1)
	}
	if err := h.fake.Release("launch", nil); err != nil {
		t.Fatal(err)
	}
	if o := wait(); o.code != 0 {
		t.Fatal(o)
	}
	// The late answer and later observations leave the deletion standing.
	h.waitIdle(c)
	h.run(nil, "tasks", "reconcile", "--directory", h.dir, "--server-url", h.url)
	if o := h.tool("status", map[string]any{"task_id": c}); o.code != 1 || !strings.HasPrefix(o.stderr, "Unknown task ID or alias: "+c) {
		t.Fatal(o)
	}
	st = h.doc()
	if st.Job(c) != nil || st.Tombstone(c) == nil || st.DeletionEpoch(c) != e1 || st.Leases[c] != nil {
		t.Fatalf("after the late answer: job %+v, tombstone %+v, epoch %d (want %d)", st.Job(c), st.Tombstone(c), st.DeletionEpoch(c), e1)
	}

	// Only a launch that really registers C again clears the tombstone:
	// here the host hands out the same session ID once more.
	body, _ := json.Marshal(map[string]any{"id": c, "slug": "c", "projectID": "p", "directory": h.dir, "parentID": parent, "title": "again", "version": "1", "time": map[string]any{"created": 1, "updated": 1}})
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/session", Times: 1, Respond: &opencodefake.Response{Status: 200, Body: body}}); err != nil {
		t.Fatal(err)
	}
	if got := h.launch("explorer", "again"); got != c {
		t.Fatalf("the launch registered %s, want %s", got, c)
	}
	st = h.doc()
	if j := st.Job(c); j == nil || j.State != store.JobRunning || j.Alias != "exp-2" || st.Tombstone(c) != nil {
		t.Fatalf("after a new launch: job %+v, tombstone %+v", j, st.Tombstone(c))
	}
}

func TestWithoutTheServersPasswordReadsStayUncertainAndWritesFailWithoutChange(t *testing.T) {
	h := newHarness(t, func(o *opencodefake.Options) { o.Password = "s3cret" })
	h.env["OPENCODE_SERVER_PASSWORD"] = "s3cret"
	id := h.hangingJob("explorer", "map auth")
	done := h.finishedJob("fixer", opencodefake.Run{Text: "fixed"})
	for _, c := range h.fake.Calls() {
		if c.AuthUser != "opencode" || c.Status == 401 {
			t.Fatalf("%s %s went without the credentials: %+v", c.Method, c.Path, c)
		}
	}
	before := h.doc()

	want := "HTTP 401: the OpenCode server wants credentials: set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME when the user is not \"opencode\")"
	for _, password := range []string{"", "wrong"} {
		h.env["OPENCODE_SERVER_PASSWORD"] = password
		if password != "" {
			want = "HTTP 401: the OpenCode server wants credentials and refused the ones sent: check OPENCODE_SERVER_PASSWORD and OPENCODE_SERVER_USERNAME"
		}
		wantStatus(t, h.tool("status", map[string]any{"task_id": id}), "exp-1", id, "running (unconfirmed)", "explorer", false, want)
		for _, c := range []struct {
			tool string
			args map[string]any
			err  string
		}{
			{"message", map[string]any{"task_id": id, "message": "hi"}, "Task message transport failed: " + want},
			{"result", map[string]any{"task_id": done}, "Task " + done + ": its transcript could not be read: " + want},
			{"task", map[string]any{"subagent_type": "explorer", "prompt": "more"}, "task: the host did not create the child session: " + want},
		} {
			o := h.tool(c.tool, c.args)
			if o.code != 1 || o.stdout != "" || o.stderr != c.err+"\n" {
				t.Errorf("%s with password %q: %s", c.tool, password, o)
			}
		}
	}
	after := h.doc()
	if len(allJobs(after)) != len(allJobs(before)) || len(after.Leases) != 0 {
		t.Fatalf("jobs %d -> %d, leases %+v", len(allJobs(before)), len(allJobs(after)), after.Leases)
	}
	for jid, b := range allJobs(before) {
		a := allJobs(after)[jid]
		if a.State != b.State || a.Generation != b.Generation || !a.LastUsedAt.Equal(b.LastUsedAt) {
			t.Fatalf("job %s changed: %+v -> %+v", jid, b, a)
		}
	}
	for _, op := range after.Ops {
		if op.Kind == store.OpMessage && (op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeRejected4xx) {
			t.Fatalf("a refused message was journalled %s/%s", op.Phase, op.Outcome)
		}
	}
	if n := len(h.calls("POST", "/session/*/message")); n != 2 {
		t.Fatalf("%d message calls reached the host, want the 2 refused ones", n)
	}
	for _, c := range h.calls("POST", "/session/*/message") {
		if c.Status != 401 || c.Outcome != opencodefake.OutcomeUnauthorized {
			t.Fatalf("a message call was not refused: %+v", c)
		}
	}
}

func TestAnotherUserNameIsSentWhenTheServerWantsIt(t *testing.T) {
	h := newHarness(t, func(o *opencodefake.Options) { o.Username, o.Password = "alice", "s3cret" })
	h.env["OPENCODE_SERVER_PASSWORD"] = "s3cret"
	h.env["OPENCODE_SERVER_USERNAME"] = "alice"
	id := h.hangingJob("explorer", "map auth")
	wantStatus(t, h.tool("status", map[string]any{"task_id": id}), "exp-1", id, "busy", "explorer", false, "")
	for _, c := range h.fake.Calls() {
		if c.AuthUser != "alice" || c.Status == 401 {
			t.Fatalf("call %+v", c)
		}
	}
}

func TestManyConcurrentCallersLoseNoUpdateAndNeverShareALease(t *testing.T) {
	h := newHarness(t)
	h.env["SLIM_TASKS_MESSAGE_TIMEOUT_MS"] = "10000"
	h.env["SLIM_TASKS_ABORT_TIMEOUT_MS"] = "10000"
	h.env["SLIM_TASKS_VERIFY_TIMEOUT_MS"] = "5000"
	const tasksN, statusN = 5, 20
	for range tasksN {
		if err := h.fake.QueueRuns("", opencodefake.Run{Hang: true}); err != nil {
			t.Fatal(err)
		}
	}
	// The launches race each other for generations and aliases.
	var launches []func() out
	for i := range tasksN {
		launches = append(launches, h.start("task", map[string]any{"description": fmt.Sprintf("part %d", i), "subagent_type": "explorer", "prompt": fmt.Sprintf("work on part %d", i)}))
	}
	var ids []string
	for _, w := range launches {
		o := w()
		if o.code != 0 {
			t.Fatal(o)
		}
		ids = append(ids, strings.TrimPrefix(strings.SplitN(o.stdout, "\n", 2)[0], "task_id: "))
	}
	st := h.doc()
	gens, aliases := map[int64]bool{}, map[string]bool{}
	for _, id := range ids {
		j := st.Job(id)
		if j == nil || gens[j.Generation] || aliases[j.Alias] {
			t.Fatalf("job %s: %+v (a generation or alias issued twice, or the job lost)", id, j)
		}
		gens[j.Generation], aliases[j.Alias] = true, true
	}
	if len(allJobs(st)) != tasksN || st.Meta.GenerationSeq < tasksN {
		t.Fatalf("%d jobs, generation sequence %d", len(allJobs(st)), st.Meta.GenerationSeq)
	}

	// Sample the store while the callers run: one lease per task, held
	// for the task's current run, and one unsettled leased op per lease.
	stop := make(chan struct{})
	var sampled sync.WaitGroup
	var sampleErr error
	samples := 0
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var s *store.State
			if err := h.scope().View(func(x *store.State) error { s = x; return nil }); err != nil {
				sampleErr = err
				return
			}
			samples++
			pending := map[string]int{}
			for _, op := range s.Ops {
				if op.LeaseToken != "" && !op.Phase.Final() {
					pending[op.TaskID]++
				}
			}
			for k, l := range s.Leases {
				j := s.Job(k)
				if l.TaskID != k || j == nil || l.Generation != j.Generation || pending[k] > 1 {
					sampleErr = fmt.Errorf("lease %+v for job %+v with %d unsettled ops", l, j, pending[k])
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	var waits []func() out
	cancelled, messaged := ids[0], ids[1]
	waits = append(waits, h.start("cancel", map[string]any{"task_id": cancelled, "reason": "enough"}))
	waits = append(waits, h.start("message", map[string]any{"task_id": messaged, "message": "keep going"}))
	for i := range statusN {
		waits = append(waits, h.start("status", map[string]any{"task_id": ids[i%tasksN]}))
	}
	for i, w := range waits {
		o := w()
		switch {
		case o.code != 0:
			t.Errorf("caller %d: %s", i, o)
		case i == 0 && !strings.Contains(o.stdout, "state: cancelled\n"):
			t.Errorf("the cancel: %s", o)
		case i == 1 && !strings.Contains(o.stdout, "status: queued\n"):
			t.Errorf("the message: %s", o)
		}
	}
	close(stop)
	sampled.Wait()
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	st = h.doc()
	if j := st.Job(cancelled); j.State != store.JobCancelled || j.ResultSummary != "cancelled: enough" {
		t.Fatalf("the cancelled job: %+v", j)
	}
	for _, id := range ids {
		j := st.Job(id)
		if id != cancelled && j.State != store.JobRunning {
			t.Fatalf("job %s is %s", id, j.State)
		}
		if st.Leases[id] != nil {
			t.Fatalf("lease left on %s: %+v", id, st.Leases[id])
		}
	}
	if ops := messageOps(st, messaged); len(ops) != 1 || ops[0].Outcome != store.OutcomeAccepted {
		t.Fatalf("message ops %+v", ops)
	}
	if n := len(h.calls("POST", "/session/*/abort")); n != 1 {
		t.Fatalf("%d aborts, want 1", n)
	}
	t.Logf("%d store samples while %d callers ran", samples, len(waits))
}

// One observation pass looks at no more than 16 tasks, so a call's cost
// does not grow with the board; a tool call on a task beyond them still
// observes that task.
func TestAnObservationPassLooksAtNoMoreThanSixteenTasks(t *testing.T) {
	h := newHarness(t)
	const n = 18
	var ids []string
	h.mutate(func(st *store.State) error {
		now := time.Now()
		for i := range n {
			c := fmt.Sprintf("ses_bound%02d", i)
			if _, err := h.fake.AddSession(opencodefake.SessionSeed{ID: c, ParentID: parent, Messages: []opencodefake.Message{
				{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "work"}}},
			}}); err != nil {
				return err
			}
			st.Live[c] = &store.Job{TaskID: c, ParentSessionID: parent, Agent: "explorer", Description: "work", Alias: fmt.Sprintf("exp-%d", i+1),
				State: store.JobRunning, Generation: st.NextGeneration(), TaskGeneration: 1, Background: true,
				LaunchedAt: now, LastLaunchedAt: now, RunStartedAt: now, UpdatedAt: now}
			ids = append(ids, c)
		}
		st.AliasCounters[store.AliasKey(parent, "exp")] = n
		return nil
	})
	before := h.lastSeq()
	h.reconcileNow()
	if reads := h.after(before, "GET", "/session/*/message"); len(reads) != 16 {
		t.Fatalf("one pass read %d transcripts of %d idle tasks, want 16", len(reads), n)
	}
	marked := 0
	for _, id := range ids {
		if !h.job(id).StopConfirmationStartedAt.IsZero() {
			marked++
		}
	}
	if marked != 16 {
		t.Fatalf("%d tasks became stop candidates, want the 16 looked at", marked)
	}
	var last string
	for _, id := range ids {
		if h.job(id).StopConfirmationStartedAt.IsZero() {
			last = id
		}
	}
	wantStatus(t, h.tool("status", map[string]any{"task_id": last}), h.job(last).Alias, last, "running (unconfirmed)", "explorer", false, "no live status entry for session")
	if h.job(last).StopConfirmationStartedAt.IsZero() {
		t.Fatal("task_status did not observe the task it was asked about")
	}
}
