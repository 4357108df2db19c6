package tasks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/store"
)

type reviveArgs struct {
	idArgs
	Prompt string `json:"prompt"`
}

// runRevive is task_revive: resume a retained session with a new
// instruction, cancelling its current run first when it is running.
func runRevive(ctx context.Context, e *engine, req Request) (*Result, error) {
	var a reviveArgs
	if err := decodeArgs("task_revive", req.Args, &a); err != nil {
		return nil, err
	}
	if err := e.requireOrchestrator("task_revive", req); err != nil {
		return nil, err
	}
	name, prompt := a.id(), strings.TrimSpace(a.Prompt)
	switch {
	case name == "":
		return nil, toolErr("task_revive requires task_id")
	case prompt == "":
		return nil, toolErr("task_revive requires a non-empty prompt")
	}
	r, err := e.revive(ctx, req.Context.SessionID, name, prompt, true)
	if err != nil {
		return nil, err
	}
	return r.result(), nil
}

// reviveOutcome is what a revive did.
type reviveOutcome struct {
	taskID, alias string
	generation    int64
	state         string
	status        string // started, admission_unknown, completed, error
	uncertain     bool
	observation   string
	summary       string
}

func (r *reviveOutcome) result() *Result {
	var b strings.Builder
	fmt.Fprintf(&b, "task_id: %s\ngeneration: %d\nstate: %s\nstatus: %s\n", r.taskID, r.generation, r.state, r.status)
	if r.uncertain {
		obs := r.observation
		if obs == "" {
			obs = "Task termination is unconfirmed."
		}
		fmt.Fprintf(&b, "status_uncertain: true\nobservation: %s\n", obs)
	}
	if r.status == "admission_unknown" {
		b.WriteString("The host may have accepted the prompt. Admission is still pending; do not retry task_revive. Use task_status to inspect the session.\n")
	}
	switch {
	case r.summary != "" && r.state == "error":
		fmt.Fprintf(&b, "<task_error>\n%s\n</task_error>\n", r.summary)
	case r.summary != "":
		fmt.Fprintf(&b, "<task_result>\n%s\n</task_result>\n", r.summary)
	}
	return &Result{Status: r.status, State: r.state, TaskID: r.taskID, Alias: r.alias, Generation: r.generation,
		StatusUncertain: r.uncertain, Message: r.observation, Text: strings.TrimSuffix(b.String(), "\n")}
}

// revive runs the relaunch protocol for the parent's job name with
// prompt. allowCancel lets it cancel a running generation first
// (task_revive); a resume through task never does.
func (e *engine) revive(ctx context.Context, parent, name, prompt string, allowCancel bool) (*reviveOutcome, error) {
	job, err := e.lookup(parent, name)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, toolErr("Unknown or unowned background task: %s", name)
	}
	if e.v2() {
		if err := e.reviveCapableV2(ctx, name, job.TaskID); err != nil {
			return nil, err
		}
	}
	if job.State == store.JobRunning && allowCancel {
		_, text, ok, err := e.cancelTracked(ctx, job, "revived")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, toolErr("%s", text)
		}
		if job, err = e.lookup(parent, job.TaskID); err != nil {
			return nil, err
		} else if job == nil {
			return nil, toolErr("Task %s is no longer tracked; refusing stale revive", name)
		}
	}
	if !retainedTerminal(job) {
		return nil, toolErr("Task %s cannot be revived: state %s is not a verified retained terminal session", name, job.State)
	}
	clientMsg := opencode.NewMessageID()
	var c *captured
	var epoch, epochSeq int64
	err = e.update(func(st *store.State) error {
		j := st.Job(job.TaskID)
		switch {
		case j == nil:
			return toolErr("Task %s is no longer tracked; refusing stale revive", name)
		case j.Generation != job.Generation:
			return toolErr("Task %s run generation changed; refusing stale revive", name)
		}
		var err error
		c, err = e.capture(st, j, store.LeaseRelaunch, store.OpReviveAdmission, clientMsg, e.t.Admission)
		if isLeaseHeld(err) {
			return toolErr("Task %s cannot be revived: relaunch lease unavailable%s", name, leaseNote(st, j.TaskID))
		}
		epoch, epochSeq = st.DeletionEpoch(j.TaskID), st.Meta.EpochSeq
		return err
	})
	if err != nil {
		return nil, err
	}
	job = &c.job
	failed := func(msg string) (*reviveOutcome, error) {
		if err := e.abandon(c, msg); err != nil {
			return nil, err
		}
		return nil, toolErr("Task %s revive failed: %s", name, msg)
	}
	// The baseline: the last message before the revive's prompt.
	bctx, cancel := context.WithTimeout(ctx, e.t.Baseline)
	msgs, err := e.host.Messages(bctx, job.TaskID, 0)
	timedOut := errors.Is(bctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	switch {
	case ctx.Err() != nil:
		return failed("the call was stopped; the revive prompt was NOT sent")
	case timedOut:
		return failed("Baseline capture deadline exceeded; the revive prompt was NOT sent")
	case err != nil:
		return failed("Baseline capture failed (" + err.Error() + "); the revive prompt was NOT sent")
	}
	baseline := opencode.LastID(msgs)
	if e.v2() {
		if why, refusal := e.liveCheckV2(ctx, name, job.TaskID); refusal != "" {
			e.abandon(c, why)
			return nil, toolErr("%s", refusal)
		}
	}
	snap := e.snapshot(ctx)
	switch ob := snap.observe(job.TaskID); {
	case ob.known():
		e.abandon(c, "the session is "+string(ob.live))
		return nil, toolErr("Task %s is executing at the host (live status: %s); the revive prompt was NOT sent and no duplicate was launched. Use task_status to inspect it.", name, ob.live)
	case !ob.absent:
		e.abandon(c, ob.err)
		return nil, toolErr("Task %s could not be verified against the live session map (%s); the revive prompt was NOT sent. Retry task_revive.", name, ob.err)
	}
	p := &opencode.Prompt{MessageID: clientMsg, Agent: job.Agent, Parts: []opencode.PromptPart{{Type: "text", Text: prompt}}}
	h, err := e.spawnSettler(order{
		Scope: scope{Directory: e.dir, ServerURL: e.server, Flavor: e.flavor}, OpID: c.opID, Foreground: e.self,
		Name: name, Prompt: p, Baseline: baseline, LastLiveBusyAt: job.LastLiveBusyAt, Epoch: epoch, EpochSeq: epochSeq,
	})
	if err != nil {
		e.abandon(c, err.Error())
		return nil, err
	}
	op, timedOut, err := e.awaitOp(ctx, h, c.opID, e.t.Admission)
	if err != nil {
		return nil, err
	}
	pre := &reviveOutcome{taskID: job.TaskID, alias: job.Alias, generation: job.Generation, state: string(job.State)}
	if job.State == store.JobReconciled {
		pre.state = string(job.TerminalState)
	}
	switch {
	case timedOut:
		pre.status = "admission_unknown"
		pre.uncertain, pre.observation = job.StatusUncertain, job.LastStatusError
		return pre, nil
	case op.Phase == store.PhaseRejected && op.Outcome == store.OutcomeNotSent:
		return nil, toolErr("%s", op.Error)
	case compensated(op):
		return nil, toolErr("Task %s revive failed: admission accepted but invalidated by loss of the record; compensation initiated", name)
	case op.Outcome != store.OutcomeAccepted:
		return nil, toolErr("%s", op.Error)
	}
	return e.afterAdmission(ctx, name, job.TaskID, baseline, op.Generation)
}

// afterAdmission reads the revived run once after its baseline (a fast
// run may already be over) and reports the job as it now stands.
func (e *engine) afterAdmission(ctx context.Context, name, taskID, baseline string, gen int64) (*reviveOutcome, error) {
	rctx, cancel := e.readCtx(ctx)
	msgs, err := e.host.Messages(rctx, taskID, 0)
	cancel()
	var oc opencode.Outcome
	if err == nil && (baseline == "" || opencode.HasID(msgs, baseline)) {
		oc = opencode.Judge(opencode.After(msgs, baseline))
	}
	var out *reviveOutcome
	err = e.update(func(st *store.State) error {
		j := st.Job(taskID)
		switch {
		case j == nil:
			return toolErr("Task %s revive became stale before launch completed", name)
		case j.Generation != gen:
			return toolErr("Task %s revive became stale before launch completed", name)
		}
		now := e.now()
		if oc.Done && j.State == store.JobRunning {
			if oc.Error != "" {
				markTerminal(j, gen, store.JobError, oc.Error, now)
			} else {
				markTerminal(j, gen, store.JobCompleted, oc.Text, now)
			}
			// This answer reports the end to the parent, so no notice
			// is owed for it.
			j.Notification.Owed = false
		}
		out = &reviveOutcome{taskID: j.TaskID, alias: j.Alias, generation: j.Generation, state: string(j.State), status: "started",
			uncertain: j.StatusUncertain, observation: j.LastStatusError}
		if j.State != store.JobRunning {
			out.status, out.summary = string(j.State), j.ResultSummary
		}
		return nil
	})
	return out, err
}
