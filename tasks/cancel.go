package tasks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slimgate/slim/tasks/internal/store"
)

type cancelArgs struct {
	idArgs
	Reason string `json:"reason,omitempty"`
}

// cancelAnswer is task_cancel's output: the state and, between
// <task_error> tags, the summary or the failure. Failures are answers,
// not errors: the model reads what happened.
func cancelAnswer(taskID, state, text string, job *store.Job) *Result {
	r := &Result{Status: "cancel_failed", State: state, TaskID: taskID, Message: text,
		Text: fmt.Sprintf("task_id: %s\nstate: %s\n\n<task_error>\n%s\n</task_error>", taskID, state, text)}
	if state == "cancelled" {
		r.Status = "cancelled"
	}
	if job != nil {
		r.Alias, r.Generation = job.Alias, job.Generation
	}
	return r
}

// runCancel is task_cancel: abort a running task's generation, verify it
// stayed stopped, and record it cancelled. The session is kept.
func runCancel(ctx context.Context, e *engine, req Request) (*Result, error) {
	var a cancelArgs
	if err := decodeArgs("task_cancel", req.Args, &a); err != nil {
		return nil, err
	}
	if err := e.requireOrchestrator("task_cancel", req); err != nil {
		return nil, err
	}
	parent, name := req.Context.SessionID, a.id()
	if name == "" {
		return nil, toolErr("task_cancel requires task_id")
	}
	if name == parent {
		return cancelAnswer(name, "unknown", "cannot cancel parent session", nil), nil
	}
	job, err := e.lookup(parent, name)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return e.cancelUntracked(ctx, parent, name)
	}
	if job.State != store.JobRunning {
		return cancelAnswer(job.TaskID, string(terminalOf(job)), fmt.Sprintf("stale/uncertain cancellation: task is %s, not running", terminalOf(job)), job), nil
	}
	state, text, ok, err := e.cancelTracked(ctx, job, strings.TrimSpace(a.Reason))
	if err != nil {
		return nil, err
	}
	_ = ok
	return cancelAnswer(job.TaskID, state, text, job), nil
}

// cancelUntracked answers for a task the board does not track: nothing is
// ever aborted without a tracked generation.
func (e *engine) cancelUntracked(ctx context.Context, parent, name string) (*Result, error) {
	var other bool
	if err := e.view(func(st *store.State) error {
		other = st.Job(name) != nil
		return nil
	}); err != nil {
		return nil, err
	}
	if other || !isSessionID(name) {
		return cancelAnswer(name, "unknown", "unknown or unowned background task", nil), nil
	}
	rctx, cancel := e.readCtx(ctx)
	sess, err := e.host.GetSession(rctx, name)
	cancel()
	if err != nil || sess.ParentID != parent {
		return cancelAnswer(name, "unknown", "unknown or unowned background task", nil), nil
	}
	return cancelAnswer(name, "unknown", "best-effort/uncertain cancellation: session ownership was observed, but no tracked generation exists; no remote abort was attempted", nil), nil
}

// cancelTracked cancels the job's current generation under a
// cancellation lease. It returns the state to report and the text: the
// summary on success (ok), else the failure, after which the job is
// running and uncertain.
func (e *engine) cancelTracked(ctx context.Context, job *store.Job, reason string) (state, text string, ok bool, err error) {
	var c *captured
	var refusal string
	err = e.update(func(st *store.State) error {
		j := st.Job(job.TaskID)
		switch {
		case j == nil:
			refusal = fmt.Sprintf("Task %s is no longer tracked; refusing stale cancel", job.TaskID)
			return nil
		case j.Generation != job.Generation:
			refusal = fmt.Sprintf("Task %s run generation changed; refusing stale cancel", job.TaskID)
			return nil
		case j.State != store.JobRunning:
			refusal = fmt.Sprintf("stale/uncertain cancellation: task is %s, not running", j.State)
			return nil
		}
		var err error
		c, err = e.capture(st, j, store.LeaseCancellation, store.OpAbort, "", e.t.Abort)
		if isLeaseHeld(err) {
			refusal = fmt.Sprintf("stale/uncertain cancellation: cancellation lease unavailable for %s%s", j.TaskID, leaseNote(st, j.TaskID))
			return nil
		}
		return err
	})
	if err != nil {
		return "", "", false, err
	}
	if refusal != "" {
		return string(job.State), refusal, false, nil
	}
	h, err := e.spawnSettler(order{Scope: e.scope(), OpID: c.opID, Foreground: e.self, Name: job.TaskID})
	if err != nil {
		e.abandon(c, err.Error())
		return "", "", false, err
	}
	abortStart := e.now()
	op, timedOut, err := e.awaitOp(ctx, h, c.opID, e.t.Abort)
	if err != nil {
		return "", "", false, err
	}
	fail := func(msg string) (string, string, bool, error) {
		err := e.update(func(st *store.State) error {
			if j := st.Job(job.TaskID); j != nil {
				markUncertain(j, job.Generation, msg, e.now())
			}
			// Release the lease if it came back to this process; a
			// settler still waiting on the abort keeps it.
			if l := st.Leases[job.TaskID]; l != nil && l.Token == c.lease.Token && l.Owner.Same(e.self) {
				delete(st.Leases, job.TaskID)
			}
			return nil
		})
		return string(store.JobRunning), msg, false, err
	}
	switch {
	case timedOut:
		return fail(fmt.Sprintf("Session abort timed out after %dms", e.t.Abort.Milliseconds()))
	case op.Phase == store.PhaseRejected && op.Outcome == store.OutcomeNotSent:
		return string(job.State), op.Error, false, nil
	case op.Outcome != store.OutcomeAccepted:
		return fail(op.Error)
	}
	if why := e.verifyStopped(ctx, job.TaskID, abortStart); why != "" {
		return fail(fmt.Sprintf("Session abort returned but task did not stay stopped: %s (%s)", job.TaskID, why))
	}
	var summary, finished string
	err = e.update(func(st *store.State) error {
		if _, err := st.CheckOwner(c.lease, e.self); err != nil {
			summary = fmt.Sprintf("Cancellation lease is no longer valid for %s generation %d", job.TaskID, job.Generation)
			return nil
		}
		j := st.Job(job.TaskID)
		switch {
		case j == nil || j.Generation != job.Generation:
			summary = fmt.Sprintf("Task %s run generation changed; refusing stale cancel", job.TaskID)
		case j.State != store.JobRunning:
			// The run finished on its own before the abort took effect:
			// its outcome stays. (A run the abort cut short is not
			// finished: while the cancel holds its lease, observations
			// record it uncertain.)
			finished = string(terminalOf(j))
			summary = fmt.Sprintf("stale/uncertain cancellation: task is %s, not running (it finished before the cancel took effect)", finished)
		default:
			markCancelled(j, job.Generation, reason, e.now())
			summary = j.ResultSummary
			ok = true
		}
		return st.ReleaseLease(job.TaskID, c.lease.Token)
	})
	if err != nil {
		return "", "", false, err
	}
	switch {
	case finished != "":
		return finished, summary, false, nil
	case !ok:
		return string(store.JobRunning), summary, false, nil
	}
	return string(store.JobCancelled), summary, true, nil
}

// verifyStopped polls the live map until the session has been quiet (an
// idle or absent entry in a valid map) for the stable window without a
// break, within the verification budget. It returns "" when it was, or
// the last status seen: a poll the budget's end cut short does not count
// as seen, so a busy task is reported busy, not as a status timeout.
//
// A v2 host has no map: see verifyStoppedV2.
func (e *engine) verifyStopped(ctx context.Context, taskID string, since time.Time) string {
	if e.v2() {
		return e.verifyStoppedV2(ctx, taskID, since)
	}
	deadline := time.Now().Add(e.t.Verify)
	var quietSince time.Time
	last, seen := "unknown", false
	for {
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return last
		}
		rctx, cancel := context.WithTimeout(ctx, min(remaining, e.t.Status))
		m, err := e.host.Status(rctx)
		cancel()
		now := time.Now()
		if err != nil && remaining < e.t.Status && !now.Before(deadline) && seen {
			// The budget, not the host, cut this poll short: it saw
			// nothing, and what the model reads is the last thing a
			// poll did see.
			return last
		}
		quiet := false
		if err == nil {
			seen = true
			ob := m.Observe(taskID)
			switch {
			case ob.Absent:
				quiet, last = true, "idle"
			case ob.Known:
				last = string(ob.Live)
			default:
				last = ob.Err
			}
		} else {
			last = err.Error()
		}
		if !quiet {
			quietSince = time.Time{}
		} else if quietSince.IsZero() {
			quietSince = now
		}
		if quiet && now.Sub(quietSince) >= e.t.Stable {
			return ""
		}
		if !e.pause(ctx, deadline) {
			return last
		}
	}
}

// pause waits one verification poll interval, never past deadline; it
// reports false when ctx ended first.
func (e *engine) pause(ctx context.Context, deadline time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(min(e.t.Poll, max(time.Until(deadline), 0))):
		return true
	}
}
