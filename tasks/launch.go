package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

type taskArgs struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
	TaskID       string `json:"task_id,omitempty"`
	// Background is accepted for the native tool's shape; every task
	// slim starts runs in the background.
	Background *bool `json:"background,omitempty"`
	// Command is accepted for the native tool's shape and ignored.
	Command string `json:"command,omitempty"`
}

// label is the job's short name: the description, else the prompt's
// first line, on one line and cut to 48 characters.
func label(a taskArgs) string {
	l := oneLine(a.Description)
	if l == "" {
		first, _, _ := strings.Cut(strings.TrimSpace(a.Prompt), "\n")
		l = oneLine(first)
	}
	return cut(l, 48)
}

// runTask is task: start a specialist in a new child session of the
// caller, in the background, and return its task ID at once. With a
// task_id naming a reusable finished task of the same agent, that
// session is resumed with the prompt instead.
func runTask(ctx context.Context, e *engine, req Request) (*Result, error) {
	var a taskArgs
	if err := decodeArgs("task", req.Args, &a); err != nil {
		return nil, err
	}
	parent := req.Context.SessionID
	agent := strings.TrimSpace(a.SubagentType)
	prompt := strings.TrimSpace(a.Prompt)
	switch {
	case agent == "":
		return nil, toolErr("task requires subagent_type")
	case prompt == "":
		return nil, toolErr("task requires a non-empty prompt")
	}
	if e.cfg.isOrchestrator(req.Context.Agent) {
		if err := e.update(func(st *store.State) error {
			registerOrchestrator(st, parent, req.Context.Agent, e.now())
			return nil
		}); err != nil {
			return nil, err
		}
	}
	if id := strings.TrimSpace(a.TaskID); id != "" {
		if r, err := e.resume(ctx, parent, id, agent, prompt); r != nil || err != nil {
			return r, err
		}
	}
	objective := oneLine(prompt)
	var dup *store.Job
	if err := e.view(func(st *store.State) error {
		// An unread result is never settled, so never archived.
		for _, j := range liveJobsOf(st, parent) {
			if j.TerminalUnreconciled && j.Agent == agent && j.Objective == objective && isCanonicalTerminal(j.State) {
				c := *j
				dup = &c
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if dup != nil {
		return nil, toolErr("Task %s (%s) already ran this objective with %s and its result has not been read; use task_result %s instead of launching a duplicate.", dup.Alias, dup.TaskID, agent, dup.TaskID)
	}
	cctx, cancel := context.WithTimeout(ctx, e.t.Launch)
	sess, err := e.host.CreateSession(cctx, parent, label(a))
	cancel()
	if err != nil {
		return nil, toolErr("task: the host did not create the child session: %v", err)
	}
	if !isSessionID(sess.ID) {
		return nil, toolErr("task: the host answered a session ID of an unknown form: %q", sess.ID)
	}
	clientMsg := opencode.NewMessageID()
	var job store.Job
	var opID string
	err = e.update(func(st *store.State) error {
		now := e.now()
		j := registerLaunch(st, newJob{TaskID: sess.ID, Parent: parent, Agent: agent, Description: label(a), Objective: objective}, now)
		id, err := store.NewToken()
		if err != nil {
			return err
		}
		if _, err := st.AddOp(store.OpRequest{ID: id, Kind: store.OpLaunch, TaskID: j.TaskID, Generation: j.Generation, ClientMessageID: clientMsg, Owner: e.self, LocalDeadlineAt: now.Add(e.t.Launch)}, now); err != nil {
			return err
		}
		if _, err := st.MarkSent(id, e.self, now); err != nil {
			return err
		}
		job, opID = *j, id
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.crashPoint(CrashSent)
	pctx, cancel := context.WithTimeout(ctx, e.t.Launch)
	err = e.host.PromptAsync(pctx, job.TaskID, opencode.Prompt{MessageID: clientMsg, Agent: agent, Parts: []opencode.PromptPart{{Type: "text", Text: prompt}}})
	cancel()
	e.crashPoint(CrashAnswered)
	uncertain := false
	var refusal error
	uerr := e.update(func(st *store.State) error {
		now := e.now()
		phase, outcome := outcomeOf(err)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		finish(st, opID, phase, outcome, msg, now, false)
		j := st.Job(job.TaskID)
		if j == nil || j.Generation != job.Generation || err == nil {
			return nil
		}
		if opencode.Authoritative(err) {
			markTerminal(j, job.Generation, store.JobError, "the host refused the launch prompt: "+msg, now)
			refusal = toolErr("task: the host refused the prompt for %s: %s", job.TaskID, msg)
			return nil
		}
		markUncertain(j, job.Generation, "the launch prompt's outcome is unknown: "+msg, now)
		uncertain = true
		return nil
	})
	if uerr != nil {
		return nil, uerr
	}
	if refusal != nil {
		return nil, refusal
	}
	text := fmt.Sprintf("task_id: %s\nstate: running\n", job.TaskID)
	if uncertain {
		text += "status_uncertain: true\n"
	}
	text += "\n<task_result>\nBackground task started.\n</task_result>"
	return &Result{Status: "started", State: "running", TaskID: job.TaskID, Alias: job.Alias, Generation: job.Generation, StatusUncertain: uncertain, Text: text}, nil
}

// resume handles task(task_id=...): a running task is refused, a leased
// one too, a reusable one of the same agent is relaunched with the
// prompt, and anything else returns nil so a new session is started.
func (e *engine) resume(ctx context.Context, parent, id, agent, prompt string) (*Result, error) {
	job, err := e.lookup(parent, id)
	if err != nil || job == nil {
		return nil, err
	}
	if job.State == store.JobRunning {
		return nil, toolErr("Task %s is still running and cannot be resumed or amended with task(). Use task_status to inspect it, task_message to queue a note for it, or task_cancel to stop it.", id)
	}
	if !reusable(job, agent) {
		return nil, nil
	}
	var leased bool
	if err := e.update(func(st *store.State) error {
		// A dead caller's lease that never sent anything is released
		// first, as every capture does.
		st.ReapDeadOwners(owner.Alive, e.now())
		leased = blocksRelaunch(st.Leases[job.TaskID])
		return nil
	}); err != nil {
		return nil, err
	}
	if leased {
		return nil, toolErr("Task %s cannot be resumed safely: its current generation is already owned by another lifecycle operation. Do not launch a duplicate with the same task_id.", id)
	}
	r, err := e.revive(ctx, parent, job.TaskID, prompt, false)
	if err != nil {
		if te, ok := AsError(err); ok && strings.Contains(te.Message, "relaunch lease unavailable") {
			return nil, toolErr("Task %s cannot be resumed safely: its current generation is already owned by another lifecycle operation. Do not launch a duplicate with the same task_id.", id)
		}
		return nil, err
	}
	text := fmt.Sprintf("task_id: %s\nstate: %s\n", r.taskID, r.state)
	if r.status == "admission_unknown" {
		text += "status_uncertain: true\n\n<task_result>\nThe host may have accepted the prompt; admission is still pending. Use task_status to inspect the session; do not resume it again.\n</task_result>"
	} else {
		text += "\n<task_result>\nBackground task resumed.\n</task_result>"
	}
	res := r.result()
	res.Text = text
	return res, nil
}
