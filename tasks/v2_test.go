package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

// An OpenCode v2 host, driven with host.flavor "v2". It has
// no live status map, an interrupt for an abort, a wait-for-idle call
// (which some builds lack), and no noReply.

// v2Harness is a harness whose requests say v2, against a fake serving
// the v2 API (without its wait route when noWait).
func v2Harness(t *testing.T, noWait bool) *harness {
	h := newHarness(t, func(o *opencodefake.Options) { o.V2, o.V2NoWait = true, noWait })
	h.flavor = "v2"
	return h
}

// wantNoV1Calls fails if anything reached a v1 session route: a v2 host
// answers them 404, and the status map is not there to be read.
func (h *harness) wantNoV1Calls() {
	h.t.Helper()
	for _, c := range h.fake.Calls() {
		if strings.HasPrefix(c.Path, "/session") {
			h.t.Fatalf("call %d went to the v1 route %s %s", c.Seq, c.Method, c.Path)
		}
	}
}

func TestOnAV2HostARunningTaskIsAlwaysUncertainAndAFinishedOneCompletes(t *testing.T) {
	h := v2Harness(t, false)
	c := h.hangingJob("explorer", "map auth")
	prompts := h.calls("POST", "/api/session/"+c+"/prompt")
	if len(prompts) != 1 {
		t.Fatalf("launch prompts: %+v", prompts)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(prompts[0].Body), &body); err != nil || body["delivery"] != "queue" || body["agent"] != "explorer" {
		t.Fatalf("launch prompt body %s", prompts[0].Body)
	}
	for range 2 { // two reads a grace apart would stop a task a valid map left out
		o := h.tool("status", map[string]any{"task_id": c})
		f := fields(o.stdout)
		if o.code != 0 || f["state"] != "running (unconfirmed)" || f["status_uncertain"] != "true" ||
			f["last_status_error"] != "the host serves OpenCode's v2 API, which has no live status map, and the session is not idle" {
			t.Fatalf("status of a running task on v2: %s", o)
		}
		time.Sleep(450 * time.Millisecond)
	}
	if j := h.job(c); j.State != store.JobRunning || !j.StopConfirmationStartedAt.IsZero() {
		t.Fatalf("job %+v", j)
	}
	waits := h.calls("POST", "/api/session/"+c+"/wait")
	if len(waits) != 2 || waits[0].Query.Get("timeoutMs") != "0" {
		t.Fatalf("idle probes: %+v", waits)
	}
	o := h.tool("result", map[string]any{"task_id": c})
	if o.code != 0 || !strings.Contains(o.stdout, "Task is still running") {
		t.Fatalf("result of a running task: %s", o)
	}

	d := h.completed("librarian", "found it")
	o = h.tool("status", map[string]any{"task_id": d})
	if f := fields(o.stdout); o.code != 0 || f["state"] != "completed" || f["status_uncertain"] != "" {
		t.Fatalf("status of a finished task on v2: %s", o)
	}
	if o := h.tool("result", map[string]any{"task_id": d}); o.code != 0 || !strings.Contains(o.stdout, "found it") {
		t.Fatalf("result: %s", o)
	}
	h.wantNoV1Calls()
}

func TestOnAV2HostCancelInterruptsThenWaitsForIdle(t *testing.T) {
	h := v2Harness(t, false)
	c := h.hangingJob("explorer", "map auth")
	o := h.tool("cancel", map[string]any{"task_id": c, "reason": "enough"})
	if o.code != 0 || !strings.Contains(o.stdout, "state: cancelled") {
		t.Fatalf("cancel: %s", o)
	}
	ints := h.calls("POST", "/api/session/"+c+"/interrupt")
	if len(ints) != 1 || strings.ReplaceAll(ints[0].Body, " ", "") != `{"continue":false}` {
		t.Fatalf("interrupts: %+v", ints)
	}
	var verify []opencodefake.Call
	for _, w := range h.calls("POST", "/api/session/"+c+"/wait") {
		if w.Seq > ints[0].Seq {
			verify = append(verify, w)
		}
	}
	if len(verify) != 1 || verify[0].Query.Get("timeoutMs") != knobs["SLIM_TASKS_VERIFY_TIMEOUT_MS"] {
		t.Fatalf("the verification's waits: %+v", verify)
	}
	if j := h.job(c); j.State != store.JobCancelled || j.ResultSummary != "cancelled: enough" {
		t.Fatalf("job %+v", j)
	}
	h.wantNoV1Calls()
}

// An interrupt the host confirms while the run goes on is not a cancel:
// the wait for idle runs out.
func TestOnAV2HostAnInterruptThatDidNotTakeIsNotACancel(t *testing.T) {
	h := v2Harness(t, false)
	c := h.hangingJob("explorer", "map auth")
	h.script(opencodefake.Script{Aborts: []opencodefake.Abort{{Keep: true}}})
	o := h.tool("cancel", map[string]any{"task_id": c})
	want := "Session abort returned but task did not stay stopped: " + c + " (busy: the host's wait for idle ended after 1200ms)"
	if o.code != 0 || !strings.Contains(o.stdout, "state: running") || !strings.Contains(o.stdout, want) {
		t.Fatalf("cancel: %s\nwant %q", o, want)
	}
	if j := h.job(c); j.State != store.JobRunning || !j.StatusUncertain {
		t.Fatalf("job %+v", j)
	}
}

// Without the wait route, a cancel is verified only by an idle time at
// or after the abort started.
func TestOnAV2HostWithoutWaitCancelTrustsOnlyAnIdleTimeAfterTheAbort(t *testing.T) {
	t.Run("idle after the interrupt", func(t *testing.T) {
		h := v2Harness(t, true)
		c := h.hangingJob("explorer", "map auth")
		o := h.tool("cancel", map[string]any{"task_id": c})
		if o.code != 0 || !strings.Contains(o.stdout, "state: cancelled") {
			t.Fatalf("cancel: %s", o)
		}
		if len(h.calls("GET", "/api/session/"+c)) == 0 {
			t.Fatal("the session's idle time was not read")
		}
	})
	t.Run("still busy", func(t *testing.T) {
		h := v2Harness(t, true)
		c := h.hangingJob("explorer", "map auth")
		h.script(opencodefake.Script{Aborts: []opencodefake.Abort{{Keep: true}}})
		o := h.tool("cancel", map[string]any{"task_id": c})
		want := "Session abort returned but task did not stay stopped: " + c + " (host-info: the session reports no idle time)"
		if o.code != 0 || !strings.Contains(o.stdout, want) {
			t.Fatalf("cancel: %s\nwant %q", o, want)
		}
	})
	t.Run("idle since before the interrupt", func(t *testing.T) {
		// The run ended at the host before the cancel, unobserved (no
		// wait route: nothing shows it idle), and the host confirms the
		// interrupt: its idle time is older than the abort.
		h := v2Harness(t, true)
		h.runs("done early")
		c := h.launch("explorer", "map auth")
		h.waitIdle(c)
		time.Sleep(20 * time.Millisecond)
		if err := h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/api/session/*/interrupt",
			Respond: &opencodefake.Response{Status: 200, Body: json.RawMessage(`{"interrupted":true}`)}}); err != nil {
			t.Fatal(err)
		}
		o := h.tool("cancel", map[string]any{"task_id": c})
		if o.code != 0 || !strings.Contains(o.stdout, "did not stay stopped: "+c+" (host-info: idle since ") ||
			!strings.Contains(o.stdout, ", before the abort at ") {
			t.Fatalf("cancel: %s", o)
		}
		if j := h.job(c); j.State != store.JobRunning || !j.StatusUncertain {
			t.Fatalf("job %+v", j)
		}
	})
}

func TestOnAV2HostReviveWithoutWaitIsRefusedBeforeAnyAbortOrPrompt(t *testing.T) {
	h := v2Harness(t, true)
	running := h.hangingJob("explorer", "map auth")
	stopped := h.hangingJob("explorer", "map db")
	if o := h.tool("cancel", map[string]any{"task_id": stopped}); !strings.Contains(o.stdout, "state: cancelled") {
		t.Fatalf("cancel: %s", o)
	}
	const want = "task_revive idle-verification capability unavailable: the host serves OpenCode's v2 API, which has no live status map, and it has no wait-for-idle call (POST /api/session/{id}/wait); no abort or prompt was sent\n"
	for _, id := range []string{running, stopped} {
		before := h.lastSeq()
		wantOut(t, h.tool("revive", map[string]any{"task_id": id, "prompt": "again"}), 1, "", want)
		for _, c := range h.after(before, "POST", "/**") {
			if !strings.HasSuffix(c.Path, "/wait") {
				t.Fatalf("a refused revive sent %s %s", c.Method, c.Path)
			}
		}
		if l := h.doc().Leases[id]; l != nil {
			t.Fatalf("a refused revive left a lease: %+v", l)
		}
	}
	if j := h.job(running); j.State != store.JobRunning || !h.fake.Busy(running) {
		t.Fatalf("the running task was touched: %+v", j)
	}
}

func TestOnAV2HostReviveCancelsWaitsAndQueuesItsPrompt(t *testing.T) {
	h := v2Harness(t, false)
	c := h.hangingJob("explorer", "map auth")
	g1 := h.job(c).Generation
	h.runs("second answer")
	before := h.lastSeq()
	o := h.tool("revive", map[string]any{"task_id": c, "prompt": "now the db"})
	if o.code != 0 || !strings.Contains(o.stdout, "status: ") {
		t.Fatalf("revive: %s", o)
	}
	var order []string
	var prompt opencodefake.Call
	for _, call := range h.after(before, "POST", "/api/session/"+c+"/*") {
		action := call.Path[strings.LastIndex(call.Path, "/")+1:]
		if n := len(order); n == 0 || order[n-1] != action {
			order = append(order, action)
		}
		if action == "prompt" {
			prompt = call
		}
	}
	// The capability probe, the interrupt, the verification, the live
	// check, the prompt.
	if got := strings.Join(order, ","); got != "wait,interrupt,wait,prompt" {
		t.Fatalf("calls in order: %s", got)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(prompt.Body), &body); err != nil || body["delivery"] != "queue" || !strings.HasPrefix(body["messageID"].(string), "msg") {
		t.Fatalf("revive prompt body %s", prompt.Body)
	}
	h.waitIdle(c)
	if o := h.tool("status", map[string]any{"task_id": c}); !strings.Contains(o.stdout, "state: completed") {
		t.Fatalf("status after the revived run: %s", o)
	}
	if j := h.job(c); j.Generation <= g1 || j.ResultSummary != "second answer" {
		t.Fatalf("job %+v", j)
	}
	h.wantNoV1Calls()
}

// A revive whose session does not become idle within the status
// deadline sends nothing.
func TestOnAV2HostReviveOfABusySessionTimesOutItsIdleWait(t *testing.T) {
	h := v2Harness(t, false)
	c := h.completed("explorer", "first")
	// The capability probe finds it idle; by the live check it is busy
	// (the host's wait answers 408).
	if err := h.fake.AddFaults(opencodefake.Fault{Method: "POST", Path: "/api/session/*/wait", Call: 2, Times: 1,
		Respond: &opencodefake.Response{Status: 408, Body: json.RawMessage(`{"name":"TimeoutError","data":{"message":"not idle"}}`)}}); err != nil {
		t.Fatal(err)
	}
	before := h.lastSeq()
	wantOut(t, h.tool("revive", map[string]any{"task_id": c, "prompt": "again"}), 1, "",
		"Task "+c+": Session idle wait timed out; the revive prompt was NOT sent\n")
	for _, call := range h.after(before, "POST", "/**") {
		if !strings.HasSuffix(call.Path, "/wait") {
			t.Fatalf("a refused revive sent %s %s", call.Method, call.Path)
		}
	}
}

func TestOnAV2HostTaskMessageIsRefusedAndSendsNothing(t *testing.T) {
	h := v2Harness(t, false)
	c := h.hangingJob("explorer", "map auth")
	before := h.lastSeq()
	o := h.tool("message", map[string]any{"task_id": c, "message": "also check the cache"})
	if o.code != 1 || !strings.HasPrefix(o.stderr, "task_message is not available on this host: it serves OpenCode's v2 API") {
		t.Fatalf("message: %s", o)
	}
	if calls := h.after(before, "", "/**"); len(calls) != 0 {
		t.Fatalf("a refused message made calls: %+v", calls)
	}
}

func TestOnAV2HostNoWakePromptIsSent(t *testing.T) {
	h := v2Harness(t, false)
	if g := h.run(nil, "tasks", "wake-gate", "--flavor", "v2", "--directory", h.dir, "--server-url", h.url, "--session", parent); strings.TrimSpace(g.stdout) != "blocked:unsupported_host" {
		t.Fatal(g)
	}
}

// A host whose wait ignores its timeout (it holds the call) costs one
// call the status deadline in all, however many tasks it has: the probes
// share it, and the ones it leaves no room for are not sent.
func TestOnAV2HostTheIdleProbesOfACallShareOneDeadline(t *testing.T) {
	h := v2Harness(t, false)
	ids := []string{h.hangingJob("explorer", "a"), h.hangingJob("explorer", "b"), h.hangingJob("explorer", "c")}
	h.hold("waits", "POST", "/api/session/*/wait", 0, 0)
	before := h.lastSeq()
	if o := h.operator([]string{"reconcile"}, "--flavor", "v2", "--parent", parent); o.code != 0 {
		t.Fatal(o)
	}
	// 1500 ms of status deadline: the first probe's own bound (1 s) and
	// what is left of it for the second.
	if n := len(h.after(before, "POST", "/api/session/*/wait")); n != 2 {
		t.Fatalf("%d idle probes were sent, want 2", n)
	}
	if j := h.job(ids[2]); !j.StatusUncertain || !strings.HasSuffix(j.LastStatusError, "the idle checks of this call ran out of time") {
		t.Fatalf("the task no probe was left for: %+v", j)
	}
	h.release("waits", nil)
}

// A run that replaced the task's between the revive's look-up and its
// lease is not revived (here another process's relaunch lands while the
// revive waits on the host's wait-for-idle, which a v2 revive asks before
// taking its lease).
func TestAReviveWhoseTaskWasRelaunchedBeforeItsLeaseIsRefused(t *testing.T) {
	h := v2Harness(t, false)
	c := h.completed("explorer", "first")
	h.hold("probe", "POST", "/api/session/*/wait", 0, 1)
	wait := h.start("revive", map[string]any{"task_id": c, "prompt": "again"})
	h.waitHeld("probe", 1)
	h.mutate(func(st *store.State) error {
		j := st.Job(c)
		j.Generation, j.TaskGeneration = st.NextGeneration(), j.TaskGeneration+1
		return nil
	})
	before := h.lastSeq()
	h.release("probe", nil)
	wantOut(t, wait(), 1, "", "Task "+c+" run generation changed; refusing stale revive\n")
	for _, call := range h.after(before, "POST", "/**") {
		t.Fatalf("a refused revive sent %s %s", call.Method, call.Path)
	}
	if l := h.doc().Leases[c]; l != nil {
		t.Fatalf("a refused revive left a lease: %+v", l)
	}
}

// A job the pass had no time to probe keeps its place in the fair order:
// only the jobs it asked about are recorded as observed.
func TestOnAV2HostAJobLeftUnprobedKeepsItsTurn(t *testing.T) {
	h := v2Harness(t, false)
	ids := h.runningJobs(17)
	h.hold("waits", "POST", "/api/session/*/wait", 0, 0)
	if o := h.operator([]string{"reconcile"}, "--flavor", "v2", "--parent", parent); o.code != 0 {
		t.Fatal(o)
	}
	h.release("waits", nil)
	probed := map[string]bool{}
	for _, c := range h.calls("POST", "/api/session/*/wait") {
		probed[strings.TrimSuffix(strings.TrimPrefix(c.Path, "/api/session/"), "/wait")] = true
	}
	if len(probed) == 0 || len(probed) >= 16 {
		t.Fatalf("%d jobs probed, want a few within the deadline", len(probed))
	}
	for _, id := range ids {
		if observed := !h.job(id).LastObservedAt.IsZero(); observed != probed[id] {
			t.Fatalf("%s: recorded observed %v, probed %v", id, observed, probed[id])
		}
	}
}

// On v2 an interrupt answers {"interrupted": false} when nothing was
// running: that is not a failed abort, the idle check decides.
func TestOnAV2HostAnInterruptOfANoLongerRunningSessionIsVerifiedNotRefused(t *testing.T) {
	h := v2Harness(t, false)
	h.runs("done early")
	c := h.launch("explorer", "map auth")
	h.waitIdle(c)
	o := h.tool("cancel", map[string]any{"task_id": c})
	if o.code != 0 || !strings.Contains(o.stdout, "state: cancelled") {
		t.Fatalf("cancel of a session that had stopped: %s", o)
	}
}
