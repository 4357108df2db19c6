package tasks

import (
	"context"
	"fmt"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/store"
)

// runResult is task_result: the final answer of a completed task, read
// from the child's transcript. It never prompts and takes no lease; the
// generation is checked around every read, so a relaunch in between is
// refused rather than mixed up with the old answer.
func runResult(ctx context.Context, e *engine, req Request) (*Result, error) {
	var a idArgs
	if err := decodeArgs("task_result", req.Args, &a); err != nil {
		return nil, err
	}
	parent, name := req.Context.SessionID, a.id()
	if name == "" {
		return nil, toolErr("task_result requires task_id")
	}
	job, err := e.lookup(parent, name)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return e.untrackedResult(ctx, parent, name)
	}
	snap := e.snapshot(ctx)
	if needsObservation(job) {
		if err := e.reconcile(ctx, parent, job.TaskID, snap); err != nil {
			return nil, err
		}
		if job, err = e.lookup(parent, job.TaskID); err != nil {
			return nil, err
		} else if job == nil {
			return nil, toolErr("Task %s is no longer tracked: its session was deleted.", name)
		}
	}
	switch terminalOf(job) {
	case store.JobError:
		detail := job.LastStatusError
		if detail == "" {
			detail = job.ResultSummary
		}
		if detail == "" {
			detail = "no error details available"
		}
		return nil, e.reportedOutcome(job, toolErr("Task %s ended in error: %s", name, detail))
	case store.JobCancelled:
		if r := cancelReason(job.ResultSummary); r != "" {
			return nil, e.reportedOutcome(job, toolErr("Task %s was cancelled: %s", name, r))
		}
		return nil, e.reportedOutcome(job, toolErr("Task %s was cancelled", name))
	case store.JobRunning:
		state := "running"
		if o := snap.observe(job.TaskID); o.live == opencode.LiveRetry {
			state = "retry"
		}
		return &Result{
			Status: "running", State: state, TaskID: job.TaskID, Alias: job.Alias, Generation: job.Generation,
			Text: fmt.Sprintf("task_id: %s\nstate: %s\nmessage: Task is still running. Wait for its terminal result.\nnext: use task_status to inspect the task", job.TaskID, state),
		}, nil
	case store.JobCompleted:
	default:
		return nil, toolErr("Task %s has no confirmed completed result", name)
	}
	gen := job.Generation
	rctx, cancel := e.readCtx(ctx)
	msgs, err := e.host.Messages(rctx, job.TaskID, 0)
	cancel()
	if err != nil {
		return nil, toolErr("Task %s: its transcript could not be read: %v", name, err)
	}
	oc := opencode.Judge(opencode.After(msgs, job.BaselineMessageID))
	text := oc.Text
	if !oc.Done {
		// The board says completed; the host's transcript is the source
		// of the text: the last completed assistant message.
		text = ""
	}
	var res *Result
	err = e.update(func(st *store.State) error {
		// The generation is checked before the transcript is judged: a
		// relaunch during the read changes the transcript too, and its
		// new prompt is no reason to say the old run left no text.
		j := st.Job(job.TaskID)
		if j == nil || j.Generation != gen {
			return toolErr("Task %s changed generation while its result was being retrieved; wait for its current terminal result instead of retrieving it.", name)
		}
		if l := st.Leases[j.TaskID]; l != nil && l.Kind == store.LeaseRelaunch {
			// A revive's prompt may already be in the transcript: its
			// answer is the next run's, not this one's.
			return toolErr("Task %s is being revived; wait for its new run's result instead of retrieving the old one.", name)
		}
		if text == "" {
			return toolErr("Task %s has no completed text result", name)
		}
		// The model read the result: that run is acknowledged, so the
		// board stops listing it as unread and the session becomes
		// reusable, even when no board was ever shown.
		markUsed(j, e.now())
		acknowledge(j, gen, e.now())
		res = &Result{Status: "completed", State: "completed", TaskID: j.TaskID, Alias: j.Alias, Generation: gen, Text: text}
		return nil
	})
	return res, err
}

// reportedOutcome acknowledges a failed or cancelled run whose outcome
// task_result is about to report, and returns that report: once the model
// has read it, the run no longer counts as unread.
func (e *engine) reportedOutcome(job *store.Job, report error) error {
	if err := e.update(func(st *store.State) error {
		if j := st.Job(job.TaskID); j != nil {
			acknowledge(j, job.Generation, e.now())
		}
		return nil
	}); err != nil {
		return err
	}
	return report
}

// cancelReason returns the reason in a "cancelled: reason" summary.
func cancelReason(summary string) string {
	const p = "cancelled: "
	if len(summary) > len(p) && summary[:len(p)] == p {
		return summary[len(p):]
	}
	return ""
}

// lookup returns a copy of the parent's job named by name, or nil.
func (e *engine) lookup(parent, name string) (*store.Job, error) {
	var out *store.Job
	err := e.view(func(st *store.State) error {
		if j := resolve(st, parent, name); j != nil {
			c := *j
			out = &c
		}
		return nil
	})
	return out, err
}

// untrackedResult answers task_result for a session the board does not
// track: only a child of this parent, and only with terminal evidence.
func (e *engine) untrackedResult(ctx context.Context, parent, name string) (*Result, error) {
	if !isSessionID(name) {
		return nil, toolErr("Unknown task ID or alias: %s", name)
	}
	rctx, cancel := e.readCtx(ctx)
	sess, err := e.host.GetSession(rctx, name)
	cancel()
	if err != nil {
		if isNotFound(err) {
			return nil, toolErr("Unknown task ID or alias: %s", name)
		}
		return nil, toolErr("Task %s is not tracked by this session and cannot be verified: %v", name, err)
	}
	if sess.ParentID != parent {
		return nil, toolErr("Task %s does not belong to this session", name)
	}
	snap := e.snapshot(ctx)
	if o := snap.observe(name); o.known() {
		// The same states as a tracked task's answer: running or retry.
		state := "running"
		if o.live == opencode.LiveRetry {
			state = "retry"
		}
		return &Result{
			Status: "running", State: state, TaskID: name,
			Text: fmt.Sprintf("task_id: %s\nstate: %s\nmessage: Task is still running. Wait for its terminal result.\nnext: retry task_result after the task finishes", name, state),
		}, nil
	}
	rctx, cancel = e.readCtx(ctx)
	msgs, err := e.host.Messages(rctx, name, 0)
	cancel()
	if err != nil {
		return nil, toolErr("Task %s: its transcript could not be read: %v", name, err)
	}
	oc := opencode.Judge(msgs)
	if !oc.Done || oc.Error != "" {
		return nil, toolErr("Task %s shows no terminal evidence of completion; refusing to present partial output as its final result", name)
	}
	if oc.Text == "" {
		return nil, toolErr("Task %s has no completed text result", name)
	}
	return &Result{Status: "completed", State: "completed", TaskID: name, Text: oc.Text}, nil
}
