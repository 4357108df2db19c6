package tasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

// hangingJob launches a task whose run keeps the child busy until it is
// aborted, and returns its ID.
func (h *harness) hangingJob(agent, description string) string {
	h.t.Helper()
	if err := h.fake.QueueRuns("", opencodefake.Run{Hang: true}); err != nil {
		h.t.Fatal(err)
	}
	return h.launch(agent, description)
}

// setStatus scripts the fake's live status map.
func (h *harness) setStatus(m opencodefake.StatusMap) {
	h.t.Helper()
	if err := h.fake.SetStatus(m); err != nil {
		h.t.Fatal(err)
	}
}

// idleInMap makes the fake leave id out of the live status map, as a
// server does once a session stops, while its run never answers.
func (h *harness) idleInMap(id string) {
	h.setStatus(opencodefake.StatusMap{Sessions: map[string]opencodefake.StatusEntry{id: {Type: "idle"}}})
}

// fields parses "key: value" lines of a tool's answer.
func fields(text string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			out[k] = v
		}
	}
	return out
}

// wantStatus checks a task_status answer line by line: the header, the
// fixed lines, and then exactly the uncertainty lines wanted (none when
// lastError is "").
func wantStatus(t *testing.T, o out, alias, id, state, agent string, stuck bool, lastError string) map[string]string {
	t.Helper()
	if o.code != 0 || o.stderr != "" {
		t.Fatalf("task_status failed: %s", o)
	}
	lines := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n")
	want := []string{"Task " + alias + " (" + id + ")", "state: " + state, "agent: " + agent, "last_activity_at: ", "idle_for_seconds: ", "possibly_stuck: "}
	if stuck {
		want[5] += "true"
	} else {
		want[5] += "false"
	}
	if lastError != "" {
		want = append(want, "status_uncertain: true", "last_status_error: "+lastError)
	}
	if len(lines) != len(want) {
		t.Fatalf("task_status printed %d lines, want %d:\n%s", len(lines), len(want), o.stdout)
	}
	for i, w := range want {
		if strings.HasSuffix(w, ": ") && strings.HasPrefix(lines[i], w) || lines[i] == w {
			continue
		}
		t.Fatalf("line %d is %q, want %q\n%s", i+1, lines[i], w, o.stdout)
	}
	f := fields(o.stdout)
	if _, err := time.Parse(time.RFC3339Nano, f["last_activity_at"]); err != nil {
		t.Fatalf("last_activity_at %q is not an RFC 3339 time", f["last_activity_at"])
	}
	if strings.Contains(f["state"], "completed") {
		t.Fatalf("task_status implied completion:\n%s", o.stdout)
	}
	return f
}

func TestStatusOfABusyTaskIsCertainAndRecordsWhenItWasSeenBusy(t *testing.T) {
	h := newHarness(t)
	launched := time.Now()
	id := h.hangingJob("explorer", "map auth")
	maps := len(h.calls("GET", "/session/status"))
	before := time.Now()
	o := h.tool("status", map[string]any{"task_id": "exp-1"})
	after := time.Now()
	f := wantStatus(t, o, "exp-1", id, "busy", "explorer", false, "")
	if got, err := strconv.ParseInt(f["idle_for_seconds"], 10, 64); err != nil || got > int64(after.Sub(launched)/time.Second) {
		t.Errorf("a task launched %v ago has idle_for_seconds %s", after.Sub(launched), f["idle_for_seconds"])
	}
	if n := len(h.calls("GET", "/session/status")) - maps; n != 1 {
		t.Errorf("task_status read the live map %d times, want once", n)
	}
	j := h.job(id)
	if j.State != store.JobRunning || j.StatusUncertain || j.LastStatusError != "" || !j.StopConfirmationStartedAt.IsZero() {
		t.Fatalf("job after a busy observation: %+v", j)
	}
	if j.LastLiveBusyAt.Before(before.Add(-time.Millisecond)) || j.LastLiveBusyAt.After(after) {
		t.Fatalf("lastLiveBusyAt %v is not the observation's time (between %v and %v)", j.LastLiveBusyAt, before, after)
	}
}

func TestStatusReadThatHangsIsUncertainNeverCompletion(t *testing.T) {
	h := newHarness(t)
	h.env["SLIM_TASKS_STATUS_TIMEOUT_MS"] = "300"
	id := h.hangingJob("explorer", "map auth")
	h.setStatus(opencodefake.StatusMap{Mode: opencodefake.StatusHang})
	start := time.Now()
	o := h.tool("status", map[string]any{"task_id": id})
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("task_status answered in %v, before its status deadline", took)
	}
	wantStatus(t, o, "exp-1", id, "running (unconfirmed)", "explorer", false, "Session status lookup timed out")
	j := h.job(id)
	if j.State != store.JobRunning || !j.StatusUncertain || j.LastStatusError != "Session status lookup timed out" || !j.StopConfirmationStartedAt.IsZero() {
		t.Fatalf("job after a hung status read: %+v", j)
	}
	if n := len(h.calls("GET", "/session/*/message")); n != 0 {
		t.Fatalf("an inconclusive map led to %d transcript reads", n)
	}
}

func TestStatusOfATaskAbsentFromAValidMapStartsItsStopConfirmation(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "map auth")
	h.idleInMap(id)
	before := time.Now()
	o := h.tool("status", map[string]any{"task_id": id})
	after := time.Now()
	wantStatus(t, o, "exp-1", id, "running (unconfirmed)", "explorer", false, "no live status entry for session")
	j := h.job(id)
	if j.State != store.JobRunning || !j.StatusUncertain || j.LastStatusError != "no live status entry for session" {
		t.Fatalf("job after one absent observation: %+v", j)
	}
	if s := j.StopConfirmationStartedAt; s.Before(before.Add(-time.Millisecond)) || s.After(after) {
		t.Fatalf("stopConfirmationStartedAt %v is not the observation's time (between %v and %v)", s, before, after)
	}
}

func TestStatusOfAMalformedMapIsUncertainAndNeverAStopCandidate(t *testing.T) {
	for _, c := range []struct {
		name string
		m    func(id string) opencodefake.StatusMap
		want string
	}{
		{"entry of an unknown type", func(id string) opencodefake.StatusMap {
			return opencodefake.StatusMap{Raw: map[string]json.RawMessage{id: json.RawMessage(`{"type":"weird"}`)}}
		}, "malformed live status entry for session"},
		{"top-level type key", func(string) opencodefake.StatusMap {
			return opencodefake.StatusMap{Mode: opencodefake.StatusTypeKey}
		}, "invalid session-status map response"},
		{"scalar", func(string) opencodefake.StatusMap {
			return opencodefake.StatusMap{Mode: opencodefake.StatusScalar}
		}, "invalid session-status response"},
		// An array must not read as an empty map: that would make every
		// running task a stop candidate.
		{"array", func(string) opencodefake.StatusMap {
			return opencodefake.StatusMap{Mode: opencodefake.StatusArray}
		}, "invalid session-status response"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			id := h.hangingJob("explorer", "map auth")
			h.setStatus(c.m(id))
			o := h.tool("status", map[string]any{"task_id": id})
			wantStatus(t, o, "exp-1", id, "running (unconfirmed)", "explorer", false, c.want)
			j := h.job(id)
			if j.State != store.JobRunning || !j.StatusUncertain || j.LastStatusError != c.want || !j.StopConfirmationStartedAt.IsZero() {
				t.Fatalf("job after a malformed map: %+v", j)
			}
		})
	}
}

func TestStatusCallsABusyTaskWithoutActivityPossiblyStuck(t *testing.T) {
	const quiet = 121 * time.Second
	// The fake stamps everything it records as if it happened 121 s ago,
	// so the child's last activity is that old.
	h := newHarness(t, func(o *opencodefake.Options) { o.Now = func() time.Time { return time.Now().Add(-quiet) } })
	id := h.hangingJob("explorer", "map auth")
	h.mutate(func(st *store.State) error {
		j := st.Job(id)
		j.RunStartedAt = j.RunStartedAt.Add(-2 * quiet)
		return nil
	})
	msgs, err := h.fake.Messages(id)
	if err != nil || len(msgs) == 0 {
		t.Fatal(msgs, err)
	}
	last := time.UnixMilli(msgs[len(msgs)-1].Info.Time.Created)
	before := time.Now()
	o := h.tool("status", map[string]any{"task_id": id})
	after := time.Now()
	f := wantStatus(t, o, "exp-1", id, "busy", "explorer", true, "")
	lo, hi := int64(before.Sub(last)/time.Second), int64(after.Sub(last)/time.Second)
	if got, err := strconv.ParseInt(f["idle_for_seconds"], 10, 64); err != nil || got < lo || got > hi {
		t.Fatalf("idle_for_seconds %s, want %d..%d", f["idle_for_seconds"], lo, hi)
	}
	if at, _ := time.Parse(time.RFC3339Nano, f["last_activity_at"]); !at.Equal(last) {
		t.Fatalf("last_activity_at %v, want the child's last message at %v", at, last)
	}

	// An inconclusive read never calls a task stuck, however long it has
	// been quiet.
	h.mutate(func(st *store.State) error {
		j := st.Job(id)
		j.LastLiveBusyAt = j.LastLiveBusyAt.Add(-2 * quiet)
		return nil
	})
	h.setStatus(opencodefake.StatusMap{Mode: opencodefake.StatusError})
	o = h.tool("status", map[string]any{"task_id": id})
	f = wantStatus(t, o, "exp-1", id, "running (unconfirmed)", "explorer", false, "HTTP 500: session status lookup failed")
	if got, _ := strconv.ParseInt(f["idle_for_seconds"], 10, 64); got < int64(quiet/time.Second) {
		t.Fatalf("idle_for_seconds %d after a quiet of %v", got, quiet)
	}
}

func TestStatusOfAnotherParentsTaskIsUnknown(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "map auth")
	maps := len(h.calls("GET", "/session/status"))
	o := h.run(h.requestAs("ses_other", "orchestrator", map[string]any{"task_id": id}), "tasks", "status")
	if o.code != 1 || o.stdout != "" || !strings.HasPrefix(o.stderr, "Unknown task ID or alias: "+id+".") {
		t.Fatal(o)
	}
	o = h.run(h.requestAs("ses_other", "orchestrator", map[string]any{"task_id": "exp-1"}), "tasks", "status")
	if o.code != 1 || o.stderr != "Unknown task ID or alias: exp-1\n" {
		t.Fatal(o)
	}
	if n := len(h.calls("GET", "/session/status")) - maps; n != 0 {
		t.Fatalf("a refused task_status read the live map %d times", n)
	}
	if j := h.job(id); j.StatusUncertain || !j.LastLiveBusyAt.IsZero() {
		t.Fatalf("another parent's call changed the job: %+v", j)
	}
}

// sleepPast sleeps until d has passed since t0: a stop needs two
// observations at least the grace apart, so time itself must pass.
func sleepPast(t0 time.Time, d time.Duration) {
	time.Sleep(time.Until(t0.Add(d + 20*time.Millisecond)))
}

// sleepPastStop sleeps until d has passed since the first observation of
// task id without a live entry, as the store recorded it. The grace is
// measured between the slim processes' observations, not from the test's
// clock: a slow first process would otherwise leave the second
// observation within the grace.
func (h *harness) sleepPastStop(id string, d time.Duration) {
	h.t.Helper()
	start := h.job(id).StopConfirmationStartedAt
	if start.IsZero() {
		h.t.Fatalf("task %s has no stop confirmation started", id)
	}
	sleepPast(start, d)
}

func TestStatusConfirmsAStopAcrossTwoCallsAGraceApart(t *testing.T) {
	h := newHarness(t)
	grace := 400 * time.Millisecond // SLIM_TASKS_STOP_GRACE_MS
	id := h.hangingJob("explorer", "map auth")
	h.idleInMap(id)
	t0 := time.Now()
	o := h.tool("status", map[string]any{"task_id": id})
	wantStatus(t, o, "exp-1", id, "running (unconfirmed)", "explorer", false, "no live status entry for session")
	o = h.tool("status", map[string]any{"task_id": id})
	if time.Since(t0) < grace {
		wantStatus(t, o, "exp-1", id, "running (unconfirmed)", "explorer", false, "no live status entry for session")
		if s := h.job(id).State; s != store.JobRunning {
			t.Fatalf("a second absent observation within the grace made the task %s", s)
		}
	}
	h.sleepPastStop(id, grace)
	gen := h.job(id).Generation
	o = h.tool("status", map[string]any{"task_id": id})
	wantStatus(t, o, "exp-1", id, "stopped (unconfirmed)", "explorer", false, "no live status entry for session")
	j := h.job(id)
	if j.State != store.JobStopped || !j.TerminalUnreconciled || j.ResultSummary != "Background session stopped before a terminal task result was received." || j.Generation != gen || j.CompletedAt.IsZero() {
		t.Fatalf("job after a confirmed stop: %+v", j)
	}
}

func TestABusyObservationBetweenTwoAbsentOnesRestartsTheGrace(t *testing.T) {
	h := newHarness(t)
	grace := 400 * time.Millisecond
	id := h.hangingJob("explorer", "map auth")
	h.idleInMap(id)
	t0 := time.Now()
	h.tool("status", map[string]any{"task_id": id})
	h.setStatus(opencodefake.StatusMap{}) // the hanging run is busy again
	wantStatus(t, h.tool("status", map[string]any{"task_id": id}), "exp-1", id, "busy", "explorer", false, "")
	if j := h.job(id); !j.StopConfirmationStartedAt.IsZero() || j.StatusUncertain {
		t.Fatalf("a busy observation left the stop candidacy: %+v", j)
	}
	h.idleInMap(id)
	sleepPast(t0, grace)
	o := h.tool("status", map[string]any{"task_id": id})
	wantStatus(t, o, "exp-1", id, "running (unconfirmed)", "explorer", false, "no live status entry for session")
	if j := h.job(id); j.State != store.JobRunning || j.StopConfirmationStartedAt.Before(t0.Add(grace)) {
		t.Fatalf("the grace did not restart after the busy observation: %+v", j)
	}
}

// waitHeld waits until n requests wait at the fake's hold id.
func (h *harness) waitHeld(id string, n int) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.fake.WaitHeld(ctx, id, n); err != nil {
		h.t.Fatalf("hold %s: %v", id, err)
	}
}

// TestStatusAndMessageOfARunningTaskNeverReadTheArchive: the calls on a
// running task read and rewrite only the live document, however many
// finished tasks the scope keeps. With the archive's contents replaced by
// bytes that do not decode, any call that read it would fail with exit 3.
func TestStatusAndMessageOfARunningTaskNeverReadTheArchive(t *testing.T) {
	h := newHarness(t)
	id := h.hangingJob("explorer", "map auth")
	h.mutate(func(st *store.State) error {
		for i := range 40 {
			tid := fmt.Sprintf("ses_done%04d", i)
			st.Live[tid] = &store.Job{TaskID: tid, ParentSessionID: parent, Agent: "explorer", Alias: fmt.Sprintf("old-%d", i),
				State: store.JobReconciled, TerminalState: store.JobCompleted, Generation: st.NextGeneration()}
		}
		return nil
	})
	dir := store.ScopeDir(h.state, h.dir, h.url)
	arcs, _ := filepath.Glob(filepath.Join(dir, store.ArchivePrefix+"*"))
	if len(arcs) != 1 {
		t.Fatalf("archives %v, want one holding the finished jobs", arcs)
	}
	garbage := []byte("not an archive")
	h.broken = true
	if err := os.WriteFile(arcs[0], garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{id, "exp-1"} {
		wantStatus(t, h.tool("status", map[string]any{"task_id": name}), "exp-1", id, "busy", "explorer", false, "")
	}
	if o := h.tool("message", map[string]any{"task_id": "exp-1", "message": "also look at the tests"}); o.code != 0 {
		t.Fatalf("message: %s", o)
	}
	if got, _ := os.ReadFile(arcs[0]); !bytes.Equal(got, garbage) {
		t.Fatal("the archive was rewritten")
	}
	// A call that needs a finished task does read it, and fails closed.
	if o := h.tool("result", map[string]any{"task_id": "old-3"}); o.code != 3 {
		t.Fatalf("result of an archived task with an unusable archive: %s", o)
	}
}
