package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// Texts of the background task scenario.
const (
	// childMarker is in the prompt the parent gives its subagent, so the
	// child's requests follow the child's script; reviveMarker is in the
	// revive's prompt, which starts the revived run's script.
	childMarker  = "CHILD-TASK-MARKER"
	reviveMarker = "REVIVE-TASK-MARKER"
	// taskNote is what task_message queues for the running child.
	taskNote = "Also check the README."
	// revivedText is the revived run's final answer.
	revivedText = "REVIVED-RESULT"
	parentText  = "All tasks handled."
	// taskAlias is the alias slim gives the parent's first task of agent
	// general: the agent's first three letters and a counter.
	taskAlias = "gen-1"
	// backgroundFlag turns on the host's background subagents: `task`
	// with background true answers at once and runs the child on.
	backgroundFlag = "OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS=1"
)

var (
	launchedTask = regexp.MustCompile(`<task id="(ses_[A-Za-z0-9_-]+)" state="running">`)
	generationN  = regexp.MustCompile(`(?m)^generation: ([0-9]+)$`)
)

// The background task tools against a real host. The host's primary agent
// (build, an orchestrator to slim) starts a general subagent with the
// host's own task tool in the background; slim tracks it from the tool's
// output. The parent then reads its status (busy), queues a note, asks for
// its result (still running), cancels it (the host aborts the model call
// the child was waiting on), revives it with a new prompt (a new
// generation, which reads the note and answers at once), waits, reads its
// status again and its result, and ends. Everything goes through `opencode
// serve`, because slim talks to the host over HTTP.
func TestBackgroundTaskTools(t *testing.T) {
	t.Parallel()
	p := newProject(t, withSlim, map[string]string{"README.md": "background tasks\n"})
	p.env = append(p.env, backgroundFlag)
	alias := map[string]any{"task_id": taskAlias}
	parent := []fp.Turn{
		fp.Calls(fp.Call("task", map[string]any{
			"description": "explore the project", "prompt": "Look around the project. " + childMarker,
			"subagent_type": "general", "background": true,
		})),
		fp.Calls(fp.Call("task_status", alias)),
		fp.Calls(fp.Call("task_message", map[string]any{"task_id": taskAlias, "message": taskNote})),
		fp.Calls(fp.Call("task_result", alias)),
		fp.Calls(fp.Call("task_cancel", map[string]any{"task_id": taskAlias, "reason": "changed plans"})),
		fp.Calls(fp.Call("task_revive", map[string]any{"task_id": taskAlias, "prompt": "Finish up and report. " + reviveMarker})),
		// Held back until the revived run (1.5 s) is surely over.
		{ToolCalls: []fp.ToolCall{fp.Call("task_status", alias)}, DelayMS: 6000},
		fp.Calls(fp.Call("task_result", alias)),
		fp.Text(parentText),
	}
	const (
		turnLaunch = iota
		turnStatus
		turnMessage
		turnResultRunning
		turnCancel
		turnRevive
		turnStatusDone
		turnResultDone
	)
	s := p.serve(parent, fp.Options{Scripts: map[string][]fp.Turn{
		// The child's first run waits on the model until it is aborted.
		childMarker: {{Text: "the first run must not finish", DelayMS: int(time.Minute / time.Millisecond)}},
		// The revived run answers after a moment, so that task_revive
		// sees it started and not already over.
		reviveMarker: {{Text: revivedText, DelayMS: 1500}},
	}})
	parentID := s.session()
	start := time.Now()
	final := s.prompt(parentID, "do it")
	t.Logf("the parent's turn loop took %.1fs", time.Since(start).Seconds())

	m := launchedTask.FindStringSubmatch(s.result(t, turnLaunch, 0))
	if m == nil {
		t.Fatalf("the host's task tool did not start a background task: %q", clip(s.result(t, turnLaunch, 0), 600))
	}
	childID := m[1]
	header := "Task " + taskAlias + " (" + childID + ")\n"

	t.Run("task_status shows the running child busy", func(t *testing.T) {
		got := s.result(t, turnStatus, 0)
		wantPrefix(t, "task_status", got, header+"state: busy\nagent: general\n")
	})
	t.Run("task_message queues a note the child reads on its next run", func(t *testing.T) {
		wantPrefix(t, "task_message", s.result(t, turnMessage, 0), "status: queued\n")
		var seen bool
		for _, r := range s.provider.Requests() {
			if r.Script != reviveMarker {
				continue
			}
			for _, msg := range r.Messages {
				seen = seen || (msg.Role == "user" && strings.Contains(msg.Text(), taskNote))
			}
		}
		if !seen {
			t.Errorf("the revived child's model requests do not carry the note %q", taskNote)
		}
	})
	t.Run("task_result of the running child says it is still running", func(t *testing.T) {
		got := s.result(t, turnResultRunning, 0)
		wantPrefix(t, "task_result", got, "task_id: "+childID+"\nstate: running\nmessage: Task is still running.")
	})
	t.Run("task_cancel stops the child's run at the host", func(t *testing.T) {
		got := s.result(t, turnCancel, 0)
		wantPrefix(t, "task_cancel", got, "task_id: "+childID+"\nstate: cancelled\n")
		if !strings.Contains(got, "cancelled: changed plans") {
			t.Errorf("task_cancel does not give the reason: %q", clip(got, 600))
		}
		// The host's own record: the first run's answer was aborted.
		msgs := childMessages(t, s, childID)
		var aborted bool
		for _, msg := range msgs {
			if msg.Info.Role == "assistant" {
				aborted = msg.Info.Error != nil && msg.Info.Error.Name == "MessageAbortedError"
				break
			}
		}
		if !aborted {
			t.Errorf("the child's first answer was not aborted at the host: %s", transcript(msgs))
		}
	})
	t.Run("task_revive starts a new generation", func(t *testing.T) {
		got := s.result(t, turnRevive, 0)
		wantPrefix(t, "task_revive", got, "task_id: "+childID+"\n")
		if !strings.Contains(got, "\nstate: running\nstatus: started") {
			t.Errorf("task_revive did not start the task: %q", clip(got, 600))
		}
		// A fresh store numbers the launch's generation 1.
		n := 0
		if g := generationN.FindStringSubmatch(got); g != nil {
			n, _ = strconv.Atoi(g[1])
		}
		if n <= 1 {
			t.Errorf("task_revive reports generation %d, want one after the launch's 1: %q", n, clip(got, 600))
		}
	})
	t.Run("the revived run finishes and task_result reads its answer", func(t *testing.T) {
		// The host lists only running sessions in its status map; a
		// finished run it no longer runs is reported with its outcome,
		// known from its transcript, and no uncertainty.
		got := s.result(t, turnStatusDone, 0)
		wantPrefix(t, "task_status after the revived run", got, header+"state: completed\n")
		if strings.Contains(got, "status_uncertain") {
			t.Errorf("a finished run's status is uncertain: %q", clip(got, 600))
		}
		if got := s.result(t, turnResultDone, 0); got != revivedText {
			t.Errorf("task_result after the revived run = %q, want %q", clip(got, 600), revivedText)
		}
		if got := final.text(); got != parentText {
			t.Errorf("the parent's last answer is %q, want %q", got, parentText)
		}
	})
	t.Run("the host has the child as the parent's session", func(t *testing.T) {
		var sess struct {
			ID       string `json:"id"`
			ParentID string `json:"parentID"`
		}
		s.api(t, http.MethodGet, "/session/"+childID, nil, &sess, 30*time.Second)
		if sess.ParentID != parentID {
			t.Errorf("the child session %s has parent %q, want %s", childID, sess.ParentID, parentID)
		}
	})
	t.Run("the resident slim ran the task tool calls that take no lease, processes the others", func(t *testing.T) {
		for cmd, n := range map[string]int{"tasks status": 2, "tasks result": 2, "tasks message": 0, "tasks cancel": 0, "tasks revive": 0} {
			if got := p.servedRuns(cmd); got[0] != n || len(got) > 1 {
				t.Errorf("%s: served runs by exit code %v, want %d with exit 0", cmd, got, n)
			}
		}
	})
	t.Run("slim's store tracks the job", func(t *testing.T) {
		stateDir := filepath.Join(p.root, "slim-state")
		files, _ := filepath.Glob(filepath.Join(stateDir, "tasks", "*", "state.json"))
		var found bool
		for _, f := range files {
			b, err := os.ReadFile(f)
			found = found || (err == nil && strings.Contains(string(b), childID))
		}
		if !found {
			t.Errorf("no task store under %s names %s (files %v)", stateDir, childID, files)
		}
		// The operator's view of the same store.
		cmd := exec.Command(p.slimBin, "tasks", "board", "--directory", p.dir, "--server-url", s.url, "--parent", parentID)
		cmd.Env = p.baseEnv()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("slim tasks board: %v\n%s", err, out)
		}
		if want := "- " + taskAlias + " / " + childID + " / general / completed"; !strings.Contains(string(out), want) {
			t.Errorf("slim tasks board lacks %q:\n%s", want, out)
		}
	})
	s.stop()
	if groupAlive(s.pid) {
		t.Errorf("processes of the server's group %d are still running after it stopped", s.pid)
	}
}

// childMessages reads a session's transcript from the host.
func childMessages(t *testing.T, s *hostServer, id string) []hostMessage {
	t.Helper()
	var msgs []hostMessage
	s.api(t, http.MethodGet, "/session/"+id+"/message", nil, &msgs, 30*time.Second)
	return msgs
}

// transcript summarizes messages for a failure: role, error and text.
func transcript(msgs []hostMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("\n  " + m.Info.Role)
		if m.Info.Error != nil {
			b.WriteString(" (" + m.Info.Error.Name + ")")
		}
		b.WriteString(": " + clip(m.text(), 120))
	}
	return b.String()
}

// wakeMarker is in slim's wake prompt, so the parent's woken runs follow
// their own script.
const wakeMarker = "Finish any incomplete TODOs"

// The wake sender against a real host. The parent (build, an orchestrator
// to slim) writes a todo list with work left and ends its turn; the
// plugin's idle spell runs `slim tasks wake` after the wake interval
// (1 s here), the gate finds the pending todo at the host, and the host
// runs the parent on slim's wake prompt. Nothing changes, so after the
// second wake the cap holds and no third is sent.
func TestAnIdleOrchestratorWithTodosLeftIsWokenTwiceAtMost(t *testing.T) {
	t.Parallel()
	p := newProject(t, withSlim, map[string]string{"README.md": "wakes\n"})
	p.env = append(p.env, "SLIM_TASKS_WAKE_INTERVAL_MS=1000")
	parent := []fp.Turn{
		fp.Calls(fp.Call("todowrite", map[string]any{"todos": []any{
			map[string]any{"id": "1", "content": "deploy the service", "status": "pending", "priority": "high"},
		}})),
		fp.Text("Paused with the deploy left."),
	}
	s := p.serve(parent, fp.Options{Scripts: map[string][]fp.Turn{wakeMarker: {fp.Text("Still waiting to deploy.")}}})
	s.prompt(s.session(), "plan the deploy")
	wakes := func() int {
		n := 0
		for _, r := range s.provider.Requests() {
			if r.Script == wakeMarker {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for wakes() < 2 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if n := wakes(); n != 2 {
		t.Fatalf("%d woken runs of the parent within 30 s, want 2\nplugin log:\n%s", n, tail(p.pluginLog(), 40))
	}
	// Two more intervals: the cap holds.
	time.Sleep(3 * time.Second)
	if n := wakes(); n != 2 {
		t.Fatalf("%d woken runs after the cap, want 2\nplugin log:\n%s", n, tail(p.pluginLog(), 40))
	}
	if log := p.pluginLog(); !strings.Contains(log, "blocked:cap_reached") {
		t.Errorf("the plugin log shows no capped wake:\n%s", tail(log, 40))
	}
	// The woken runs saw slim's prompt as the last user message.
	for _, r := range s.provider.Requests() {
		if r.Script != wakeMarker {
			continue
		}
		var last string
		for _, m := range r.Messages {
			if m.Role == "user" {
				last = m.Text()
			}
		}
		if !strings.HasPrefix(last, wakeMarker) {
			t.Errorf("a woken run's last user message is %q", clip(last, 300))
		}
	}
}
